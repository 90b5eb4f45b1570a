//go:build unix

package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"
)

// lockPath takes the exclusive cross-process lock on path and returns the
// function that releases it. Waiting polls a non-blocking flock so that
// ctx can end the wait; the kernel drops the lock if the process dies.
func lockPath(ctx context.Context, path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open database lock %s: %w", path, err)
	}
	fd := int(f.Fd())
	delay := time.Millisecond
	for {
		err := syscall.Flock(fd, syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() {
				_ = syscall.Flock(fd, syscall.LOCK_UN)
				_ = f.Close()
			}, nil
		}
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("lock database %s: %w", path, err)
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			f.Close()
			return nil, fmt.Errorf("gave up waiting for the database lock %s (another tuitbot process is opening the database): %w", path, ctx.Err())
		case <-t.C:
		}
		if delay < 25*time.Millisecond {
			delay *= 2
		}
	}
}

// lockShared takes a shared lock on path and returns the function that
// releases it. Every process that has the database open holds one, so an
// opening process can tell whether others have it open.
func lockShared(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH)
		if err == nil {
			return func() { _ = f.Close() }, nil
		}
		if !errors.Is(err, syscall.EINTR) {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
	}
}

// heldByOthers reports whether another open file (another process, or
// another handle in this one) holds a lock on path.
func heldByOthers(path string) (bool, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return false, fmt.Errorf("open %s: %w", path, err)
	}
	defer f.Close()
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		switch {
		case err == nil:
			_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
			return false, nil
		case errors.Is(err, syscall.EWOULDBLOCK):
			return true, nil
		case !errors.Is(err, syscall.EINTR):
			return false, fmt.Errorf("lock %s: %w", path, err)
		}
	}
}
