// Package version owns what `tuitbot version` reports: the release version,
// the commit and the build date. Release builds set them with -ldflags
// (see scripts/release.sh); a `go install` build has no ldflags, so the
// values the Go toolchain stamps into the binary's build information fill in
// whatever was left unset.
package version

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
)

// Set at release time with
//
//	-ldflags "-X github.com/tuitbot/tuitbot/internal/version.version=v1.2.3
//	          -X github.com/tuitbot/tuitbot/internal/version.commit=abcdef0
//	          -X github.com/tuitbot/tuitbot/internal/version.date=2026-01-02T03:04:05Z"
//
// They are variables, not constants, because -X can only set variables.
var (
	version = ""
	commit  = ""
	date    = ""
)

// DevVersion is what a build reports when neither ldflags nor the module
// build information name a version (a plain `go build` in a checkout).
const DevVersion = "0.1.0-dev"

// Info is one build's identity.
type Info struct {
	Version   string `json:"version"`
	Commit    string `json:"commit,omitempty"`
	Date      string `json:"date,omitempty"`
	Modified  bool   `json:"modified,omitempty"`
	GoVersion string `json:"go_version"`
	Platform  string `json:"platform"`
}

var (
	once   sync.Once
	cached Info
)

// Get returns this binary's build identity, computed once.
func Get() Info {
	once.Do(func() {
		bi, _ := debug.ReadBuildInfo()
		cached = resolve(version, commit, date, bi)
	})
	return cached
}

// Version is the product version alone, e.g. "v1.2.3" or "0.1.0-dev".
func Version() string { return Get().Version }

// String is the one-line form `tuitbot version` prints.
func String() string { return Get().String() }

func (i Info) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "tuitbot %s", i.Version)
	if i.Commit != "" {
		c := i.Commit
		if i.Modified {
			c += "-dirty"
		}
		fmt.Fprintf(&b, " (commit %s", c)
		if i.Date != "" {
			fmt.Fprintf(&b, ", built %s", i.Date)
		}
		b.WriteString(")")
	} else if i.Date != "" {
		fmt.Fprintf(&b, " (built %s)", i.Date)
	}
	fmt.Fprintf(&b, " %s %s", i.GoVersion, i.Platform)
	return b.String()
}

// resolve merges the ldflags values with the toolchain's build information:
// a value set by ldflags always wins, because a release build says exactly
// what it is; bi (nil when the binary carries none) fills the gaps.
func resolve(ver, rev, when string, bi *debug.BuildInfo) Info {
	info := Info{Version: ver, Commit: rev, Date: when, GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi != nil {
		if bi.GoVersion != "" {
			info.GoVersion = bi.GoVersion
		}
		// `go install module@v1.2.3` stamps the module version; a build
		// inside a checkout says "(devel)", which tells nothing.
		if info.Version == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			info.Version = bi.Main.Version
		}
		var vcsRev, vcsTime string
		var modified bool
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				vcsRev = s.Value
			case "vcs.time":
				vcsTime = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
		// The VCS stamp describes the tree that was built; it only applies
		// when ldflags did not name a commit themselves.
		if info.Commit == "" && vcsRev != "" {
			info.Commit = vcsRev
			info.Modified = modified
			if info.Date == "" {
				info.Date = vcsTime
			}
		}
	}
	if info.Version == "" {
		info.Version = DevVersion
	}
	if len(info.Commit) > 12 {
		info.Commit = info.Commit[:12]
	}
	return info
}
