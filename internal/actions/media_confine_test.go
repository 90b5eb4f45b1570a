package actions

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/tuitbot/tuitbot/internal/apperr"
)

func TestConfinePath(t *testing.T) {
	root := t.TempDir()
	media := filepath.Join(root, "media")
	write := func(p string) string {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write(filepath.Join(media, "a.png"))
	secret := write(filepath.Join(root, "home", ".ssh", "id_rsa"))
	if err := os.Symlink(secret, filepath.Join(media, "link.png")); err != nil {
		t.Fatal(err)
	}
	dirs := []string{media}
	cases := []struct {
		name, path string
		want       apperr.Code
	}{
		{"inside", good, ""},
		{"empty", "", apperr.InvalidInput},
		{"tilde", "~/.ssh/id_rsa", apperr.MediaPathBlocked},
		{"relative", "../home/.ssh/id_rsa", apperr.MediaPathBlocked},
		{"outside existing", secret, apperr.MediaPathBlocked},
		// Missing files outside the directories must look the same as
		// existing ones, or the error becomes an existence oracle.
		{"outside missing", filepath.Join(root, "home", ".ssh", "id_ed25519"), apperr.MediaPathBlocked},
		{"dot-dot escape", filepath.Join(media, "..", "home", ".ssh", "id_rsa"), apperr.MediaPathBlocked},
		{"symlink escape", filepath.Join(media, "link.png"), apperr.MediaPathBlocked},
		{"inside missing", filepath.Join(media, "gone.png"), apperr.FileReadError},
		{"directory", media, apperr.FileReadError},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := ConfinePath(c.path, dirs)
			if c.want == "" {
				if err != nil || got != good {
					t.Fatalf("ConfinePath(%q) = %q, %v; want %q", c.path, got, err, good)
				}
				return
			}
			if code := apperr.CodeOf(err); code != c.want {
				t.Fatalf("ConfinePath(%q) error %v, want %s", c.path, err, c.want)
			}
		})
	}
}
