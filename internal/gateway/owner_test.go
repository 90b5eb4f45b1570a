package gateway

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestInstanceNamesHostBootAndProcess: an audit row's owner says which
// host, boot and process wrote it, stays safe as a lock file name, and is
// unique per start.
func TestInstanceNamesHostBootAndProcess(t *testing.T) {
	a, b := newInstance(), newInstance()
	if a == b {
		t.Fatalf("two starts got the same owner %q", a)
	}
	shape := regexp.MustCompile(`^h[a-z0-9]{1,12}-b[a-z0-9]{1,12}-p([0-9]+)-[0-9a-f]{32}$`)
	m := shape.FindStringSubmatch(a)
	if m == nil {
		t.Fatalf("owner %q does not have the host-boot-pid-random shape", a)
	}
	if m[1] != strconv.Itoa(os.Getpid()) {
		t.Errorf("owner %q names pid %s, want %d", a, m[1], os.Getpid())
	}
	if strings.ContainsAny(a, `/\.`) {
		t.Errorf("owner %q is not safe in a file name", a)
	}
	if id := idPart(readID("/etc/machine-id"), ""); id != "0" && !strings.HasPrefix(a, "h"+id+"-") {
		t.Errorf("owner %q does not start with this host's machine id %q", a, id)
	}
	if id := idPart(readID("/proc/sys/kernel/random/boot_id"), ""); id != "0" && !strings.Contains(a, "-b"+id+"-") {
		t.Errorf("owner %q does not name this boot %q", a, id)
	}
}

func TestIDPart(t *testing.T) {
	tests := []struct{ id, fallback, want string }{
		{"3d1219c7c4c5404aaa1f6d2a48adfda4\n", "host", "3d1219c7c4c5"},
		{"d8ae0374-b33f-47c5-ad33-7ee296148e6c", "", "d8ae0374b33f"},
		{"", "Build.Host-01.local", "buildhost01l"},
		{"", "", "0"},
		{"../..", "ü", "0"},
	}
	for _, tt := range tests {
		if got := idPart(tt.id, tt.fallback); got != tt.want {
			t.Errorf("idPart(%q, %q) = %q, want %q", tt.id, tt.fallback, got, tt.want)
		}
	}
}
