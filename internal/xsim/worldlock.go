package xsim

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/tuitbot/tuitbot/internal/flock"
)

// ErrWorldInUse is returned when another emulator, in this process or
// another, serves the world file: two emulators on one file would each
// overwrite the other's changes with their own world.
var ErrWorldInUse = errors.New("another emulator serves this world file")

// WorldLockPath is the file whose lock says which emulator serves the
// world file at state. The world file itself is replaced by a rename on
// every save, so a lock on it would be lost with the first change.
func WorldLockPath(state string) string { return state + ".lock" }

// WorldLock is the exclusive hold on a world file. While one emulator holds
// it no other serves that file, whichever home or process points at it.
type WorldLock struct {
	f *os.File
}

// LockWorld takes the lock of the world file at state without waiting;
// ErrWorldInUse means another emulator holds it. Take it before reading
// the world, so that the world read is the last one its previous emulator
// wrote.
func LockWorld(state string) (*WorldLock, error) {
	f, err := os.OpenFile(WorldLockPath(state), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("world lock: %w", err)
	}
	if err := flock.TryLock(f); err != nil {
		f.Close()
		if errors.Is(err, flock.ErrLocked) {
			return nil, fmt.Errorf("%s: %w", state, ErrWorldInUse)
		}
		return nil, fmt.Errorf("world lock: %w", err)
	}
	return &WorldLock{f: f}, nil
}

// Release lets another emulator serve the world. It is safe to call more
// than once.
func (l *WorldLock) Release() error {
	if l == nil || l.f == nil {
		return nil
	}
	// What the lock file says is about this holder only.
	_ = l.f.Truncate(0)
	err := flock.Unlock(l.f)
	err = errors.Join(err, l.f.Close())
	l.f = nil
	return err
}

// worldOwner is what the lock file says about its holder.
type worldOwner struct {
	URL string `json:"url"`
	PID int    `json:"pid"`
}

// advertise records in the lock file where the emulator holding it
// listens, for WorldOwner.
func (l *WorldLock) advertise(url string) error {
	b, err := json.Marshal(worldOwner{URL: url, PID: os.Getpid()})
	if err != nil {
		return err
	}
	if err := l.f.Truncate(0); err != nil {
		return fmt.Errorf("world lock: %w", err)
	}
	if _, err := l.f.WriteAt(b, 0); err != nil {
		return fmt.Errorf("world lock: %w", err)
	}
	return nil
}

// WorldOwner reports where the emulator serving the world file at state
// listens and which process runs it; ok is false when no emulator holds
// the world, or its holder has not said yet where it listens.
func WorldOwner(state string) (url string, pid int, ok bool) {
	f, err := os.OpenFile(WorldLockPath(state), os.O_RDWR, 0o600)
	if err != nil {
		return "", 0, false
	}
	defer f.Close()
	if err := flock.TryLock(f); err == nil || !errors.Is(err, flock.ErrLocked) {
		if err == nil {
			_ = flock.Unlock(f)
		}
		return "", 0, false
	}
	b, err := io.ReadAll(io.LimitReader(f, 4096))
	if err != nil {
		return "", 0, false
	}
	var o worldOwner
	if json.Unmarshal(b, &o) != nil || o.URL == "" {
		return "", 0, false
	}
	return o.URL, o.PID, true
}
