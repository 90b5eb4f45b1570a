package version

import (
	"runtime/debug"
	"strings"
	"testing"
)

func buildInfo(mainVersion string, settings ...string) *debug.BuildInfo {
	bi := &debug.BuildInfo{GoVersion: "go1.99.0", Main: debug.Module{Path: "github.com/tuitbot/tuitbot", Version: mainVersion}}
	for i := 0; i+1 < len(settings); i += 2 {
		bi.Settings = append(bi.Settings, debug.BuildSetting{Key: settings[i], Value: settings[i+1]})
	}
	return bi
}

func TestResolve(t *testing.T) {
	const rev = "0123456789abcdef0123456789abcdef01234567"
	tests := []struct {
		name            string
		ver, rev, when  string
		bi              *debug.BuildInfo
		want            Info
		wantGoFromBuild bool
	}{
		{
			name: "release build: ldflags win over build info",
			ver:  "v1.2.3", rev: "feedbeef", when: "2026-01-02T03:04:05Z",
			bi:   buildInfo("v9.9.9", "vcs.revision", rev, "vcs.time", "2020-01-01T00:00:00Z", "vcs.modified", "true"),
			want: Info{Version: "v1.2.3", Commit: "feedbeef", Date: "2026-01-02T03:04:05Z"},
		},
		{
			name: "go install from a clone: module version and VCS stamp",
			bi:   buildInfo("v0.0.0-20260102030405-0123456789ab", "vcs.revision", rev, "vcs.time", "2026-01-02T03:04:05Z", "vcs.modified", "false"),
			want: Info{Version: "v0.0.0-20260102030405-0123456789ab", Commit: "0123456789ab", Date: "2026-01-02T03:04:05Z"},
		},
		{
			name: "go install module@version: no VCS stamp",
			bi:   buildInfo("v1.4.0"),
			want: Info{Version: "v1.4.0"},
		},
		{
			name: "a modified tree says so",
			bi:   buildInfo("(devel)", "vcs.revision", rev, "vcs.time", "2026-01-02T03:04:05Z", "vcs.modified", "true"),
			want: Info{Version: DevVersion, Commit: "0123456789ab", Date: "2026-01-02T03:04:05Z", Modified: true},
		},
		{
			name: "plain build without VCS information",
			bi:   buildInfo("(devel)"),
			want: Info{Version: DevVersion},
		},
		{
			name: "no build information at all",
			want: Info{Version: DevVersion},
		},
		{
			name: "ldflags version only: the VCS stamp still names the commit",
			ver:  "v2.0.0",
			bi:   buildInfo("(devel)", "vcs.revision", rev, "vcs.time", "2026-01-02T03:04:05Z"),
			want: Info{Version: "v2.0.0", Commit: "0123456789ab", Date: "2026-01-02T03:04:05Z"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := resolve(tt.ver, tt.rev, tt.when, tt.bi)
			if got.Version != tt.want.Version || got.Commit != tt.want.Commit || got.Date != tt.want.Date || got.Modified != tt.want.Modified {
				t.Errorf("resolve = %+v, want %+v", got, tt.want)
			}
			if tt.bi != nil && got.GoVersion != "go1.99.0" {
				t.Errorf("GoVersion = %q, want the build info's go1.99.0", got.GoVersion)
			}
			if got.GoVersion == "" || got.Platform == "" {
				t.Errorf("GoVersion/Platform empty: %+v", got)
			}
		})
	}
}

func TestString(t *testing.T) {
	tests := []struct {
		info Info
		want string
	}{
		{Info{Version: "v1.2.3", Commit: "feedbeef", Date: "2026-01-02T03:04:05Z", GoVersion: "go1.26.8", Platform: "linux/amd64"},
			"tuitbot v1.2.3 (commit feedbeef, built 2026-01-02T03:04:05Z) go1.26.8 linux/amd64"},
		{Info{Version: DevVersion, Commit: "0123456789ab", Modified: true, GoVersion: "go1.26.8", Platform: "darwin/arm64"},
			"tuitbot 0.1.0-dev (commit 0123456789ab-dirty) go1.26.8 darwin/arm64"},
		{Info{Version: DevVersion, GoVersion: "go1.26.8", Platform: "windows/amd64"},
			"tuitbot 0.1.0-dev go1.26.8 windows/amd64"},
	}
	for _, tt := range tests {
		if got := tt.info.String(); got != tt.want {
			t.Errorf("String() = %q, want %q", got, tt.want)
		}
	}
}

// The test binary itself has build information; Get must never come back
// without a version.
func TestGetAlwaysHasAVersion(t *testing.T) {
	if v := Version(); v == "" {
		t.Fatal("Version() is empty")
	}
	if s := String(); !strings.HasPrefix(s, "tuitbot ") {
		t.Fatalf("String() = %q, want it to start with \"tuitbot \"", s)
	}
}
