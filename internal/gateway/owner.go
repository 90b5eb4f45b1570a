package gateway

import (
	"os"
	"strconv"
	"strings"

	"github.com/google/uuid"
)

// newInstance names this process as the owner of the audit rows it
// writes: host, boot, process id and a random part, which keeps two
// processes apart when a pid is reused or two hosts were cloned from one
// image. An operator reading an interrupted row can tell which host and
// process left it. Whether an owner still lives is never read from these
// parts but from the lock the process holds (a lock file in the home, or
// its session on the PostgreSQL server), so a live process on another host
// is never mistaken for a dead one.
func newInstance() string {
	return "h" + idPart(readID("/etc/machine-id"), hostname()) +
		"-b" + idPart(readID("/proc/sys/kernel/random/boot_id"), "0") +
		"-p" + strconv.Itoa(os.Getpid()) +
		"-" + strings.ReplaceAll(uuid.NewString(), "-", "")
}

// readID returns the contents of a system id file, or "" where the system
// has none (macOS, Windows, some containers).
func readID(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return string(b)
}

func hostname() string {
	h, _ := os.Hostname()
	return h
}

// idPart keeps the first 12 letters and digits of id (or of fallback when
// id has none), lowercased: enough to tell hosts apart, and safe in a file
// name.
func idPart(id, fallback string) string {
	pick := func(s string) string {
		var b strings.Builder
		for _, r := range strings.ToLower(s) {
			if b.Len() == 12 {
				break
			}
			if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
				b.WriteRune(r)
			}
		}
		return b.String()
	}
	if p := pick(id); p != "" {
		return p
	}
	if p := pick(fallback); p != "" {
		return p
	}
	return "0"
}
