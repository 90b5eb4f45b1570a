package xsim

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestOneEmulatorPerWorldFile: a second emulator on a world file another
// serves does not start, and WorldOwner says where that one listens; once
// the first closes, the world is free for the next.
func TestOneEmulatorPerWorldFile(t *testing.T) {
	state := filepath.Join(t.TempDir(), "world.json")
	opts := DefaultOptions()
	opts.StateFile = state
	first := New(opts)
	base, err := first.Start(t.Context(), "")
	if err != nil {
		t.Fatalf("first emulator: %v", err)
	}
	t.Cleanup(func() { _ = first.Close() })
	if url, pid, ok := WorldOwner(state); !ok || url != base || pid != os.Getpid() {
		t.Fatalf("WorldOwner = %q, %d, %t; want %q, %d", url, pid, ok, base, os.Getpid())
	}
	second := New(opts)
	if _, err := second.Start(t.Context(), ""); !errors.Is(err, ErrWorldInUse) {
		_ = second.Close()
		t.Fatalf("a second emulator on the same world file started (%v), want ErrWorldInUse", err)
	}
	if _, err := LockWorld(state); !errors.Is(err, ErrWorldInUse) {
		t.Fatalf("LockWorld of a served world = %v, want ErrWorldInUse", err)
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	if _, _, ok := WorldOwner(state); ok {
		t.Fatal("WorldOwner still names an emulator after it closed")
	}
	l, err := LockWorld(state)
	if err != nil {
		t.Fatalf("LockWorld after the first closed: %v", err)
	}
	w, err := LoadWorld(state)
	if err != nil {
		t.Fatal(err)
	}
	next := New(Options{StateFile: state, World: w, WorldLock: l})
	if _, err := next.Start(t.Context(), ""); err != nil {
		t.Fatalf("the next emulator on the freed world: %v", err)
	}
	t.Cleanup(func() { _ = next.Close() })
}
