//go:build e2e

package main

// The whole-binary build proofs: each one builds tuitbot again with other
// flags or in a fresh clone, which on a cold cache recompiles every package.
// They run with -tags e2e (as .ci/run does), not in the quick suite.

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// A release build says exactly what its ldflags set.
func TestVersionFromLdflags(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "tuitbot"+exeSuffix())
	const pkg = "github.com/tuitbot/tuitbot/internal/version"
	ldflags := fmt.Sprintf("-X %s.version=v9.8.7 -X %s.commit=abc1234 -X %s.date=2026-01-02T03:04:05Z", pkg, pkg, pkg)
	build := exec.Command("go", "build", "-trimpath", "-ldflags", ldflags, "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "version").Output()
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("tuitbot v9.8.7 (commit abc1234, built 2026-01-02T03:04:05Z) %s %s/%s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
	if string(out) != want {
		t.Errorf("version = %q, want %q", out, want)
	}
}

// `go install ./cmd/tuitbot` from a clone reports the commit it was built
// from, taken from the build information the toolchain stamps.
func TestVersionFromGoInstall(t *testing.T) {
	head, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		t.Skip("not in a git checkout:", err)
	}
	top, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Fatal(err)
	}
	// A fresh clone, as a user would have: the toolchain only stamps VCS
	// information for a repository whose .git is a directory.
	clone := filepath.Join(t.TempDir(), "tuitbot")
	rev := strings.TrimSpace(string(head))
	for _, args := range [][]string{
		{"clone", "-q", "--no-checkout", strings.TrimSpace(string(top)), clone},
		{"-C", clone, "-c", "advice.detachedHead=false", "checkout", "-q", rev},
	} {
		if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	gobin := t.TempDir()
	install := exec.Command("go", "install", "./cmd/tuitbot")
	install.Dir = clone
	// -buildvcs=true: stamp the VCS information even where a GOFLAGS
	// default turned it off, and fail loudly if it cannot.
	install.Env = append(os.Environ(), "GOBIN="+gobin, "GOFLAGS=-buildvcs=true")
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("go install: %v\n%s", err, out)
	}
	out, err := exec.Command(filepath.Join(gobin, "tuitbot"+exeSuffix()), "version").Output()
	if err != nil {
		t.Fatal(err)
	}
	m := versionLine.FindStringSubmatch(string(out))
	if m == nil {
		t.Fatalf("version = %q, not in the expected form", out)
	}
	if want := rev[:12]; m[2] != want || m[3] != "" {
		t.Errorf("commit = %q, want %q (HEAD); output %q", m[2], want, out)
	}
	if m[4] == "" {
		t.Errorf("no build date from vcs.time: %q", out)
	}
	// Go stamps the module version from VCS too (a pseudo-version without
	// a tag); either way it is not the bare development default.
	if m[1] == "" {
		t.Errorf("no version: %q", out)
	}
}

func exeSuffix() string {
	if runtime.GOOS == "windows" {
		return ".exe"
	}
	return ""
}
