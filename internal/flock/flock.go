// Package flock takes exclusive advisory locks on files, the one way
// tuitbot's processes on a home exclude each other (the token refresh, the
// autopilot's single instance, the gateway's liveness files, migrations).
// The operating system drops a lock when its holder dies, however it dies.
package flock

import (
	"context"
	"errors"
	"os"
	"time"
)

// ErrLocked is returned by TryLock when another holder has the lock.
var ErrLocked = errors.New("file is locked by another holder")

// TryLock takes the exclusive lock on f without waiting. Locks belong to the
// open file, so two opens of one path in one process exclude each other just
// as two processes do.
func TryLock(f *os.File) error { return tryLock(f) }

// Unlock releases a lock taken on f.
func Unlock(f *os.File) error { return unlock(f) }

// Lock waits for the exclusive lock on f until ctx ends. It polls, so that
// the wait can be cancelled; a contended lock is normally held for
// milliseconds (a token refresh, a migration).
func Lock(ctx context.Context, f *os.File) error {
	delay := time.Millisecond
	for {
		err := tryLock(f)
		if !errors.Is(err, ErrLocked) {
			return err
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		if delay < 25*time.Millisecond {
			delay *= 2
		}
	}
}
