#!/usr/bin/env bash
# Builds the release artefacts into dist/ (or $DIST):
#   tuitbot_VERSION_OS_ARCH[.exe]    static binaries (CGO_ENABLED=0, -trimpath)
#   tuitbot_VERSION_OS_ARCH.cdx.json a CycloneDX SBOM of the modules linked into each binary
#   SHA256SUMS                       checksums of all of the above
#
# VERSION defaults to `git describe --tags --always --dirty`; TARGETS to every
# supported platform. The build date is the commit's date (SOURCE_DATE_EPOCH),
# so rebuilding a commit gives byte-identical binaries. Needs only Go, git and
# the module cache (go mod download); it downloads no tools.
set -euo pipefail
cd "$(dirname "$0")/.."

TARGETS="${TARGETS:-linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64}"
DIST="${DIST:-dist}"
VERSION="${VERSION:-$(git describe --tags --always --dirty 2>/dev/null || echo 0.0.0-unknown)}"
COMMIT="${COMMIT:-$(git rev-parse HEAD 2>/dev/null || echo unknown)}"
export SOURCE_DATE_EPOCH="${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct HEAD 2>/dev/null || date +%s)}"
DATE="$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y-%m-%dT%H:%M:%SZ 2>/dev/null || date -u -r "$SOURCE_DATE_EPOCH" +%Y-%m-%dT%H:%M:%SZ)"

pkg=github.com/tuitbot/tuitbot/internal/version
ldflags="-s -w -X $pkg.version=$VERSION -X $pkg.commit=$COMMIT -X $pkg.date=$DATE"

rm -rf "$DIST"
mkdir -p "$DIST"
# The SBOM generator runs on the build machine, whatever the targets are.
sbom="$(mktemp -d)/sbom"
go build -o "$sbom" ./scripts/sbom

for target in $TARGETS; do
  goos="${target%/*}" goarch="${target#*/}"
  name="tuitbot_${VERSION}_${goos}_${goarch}"
  ext=""; [ "$goos" = windows ] && ext=".exe"
  echo "building $name$ext"
  CGO_ENABLED=0 GOOS="$goos" GOARCH="$goarch" \
    go build -trimpath -buildvcs=false -ldflags "$ldflags" -o "$DIST/$name$ext" ./cmd/tuitbot
  "$sbom" -name tuitbot -version "$VERSION" -o "$DIST/$name.cdx.json" "$DIST/$name$ext"
done
rm -rf "$(dirname "$sbom")"

sums="$(mktemp)"
(
  cd "$DIST"
  if command -v sha256sum >/dev/null; then sha256sum -- *; else shasum -a 256 -- *; fi
) > "$sums"
mv "$sums" "$DIST/SHA256SUMS"
chmod 0644 "$DIST/SHA256SUMS"
echo
ls -l "$DIST"
