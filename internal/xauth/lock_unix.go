//go:build unix

package xauth

import (
	"context"
	"errors"
	"os"
	"syscall"
	"time"

	"github.com/tuitbot/tuitbot/internal/apperr"
)

// lockTokenFile takes the exclusive cross-process lock "<path>.lock" and
// returns the function that releases it. flock locks belong to the open file
// description, so every call opens its own descriptor: two Managers in one
// process exclude each other exactly as two processes do. Waiting polls with
// a non-blocking flock so that ctx can end the wait.
func lockTokenFile(ctx context.Context, path string) (func(), error) {
	lockPath := path + ".lock"
	f, err := os.OpenFile(lockPath, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, apperr.Wrap(apperr.ConfigError, err, "cannot open token lock file %s", lockPath)
	}
	fd := int(f.Fd())
	delay := time.Millisecond
	for {
		err := syscall.Flock(fd, syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() {
				_ = syscall.Flock(fd, syscall.LOCK_UN)
				f.Close()
			}, nil
		}
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, apperr.Wrap(apperr.ConfigError, err, "cannot lock %s", lockPath)
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			f.Close()
			return nil, apperr.Wrap(apperr.XNetworkError, ctx.Err(), "gave up waiting for the token lock %s (another tuitbot process is refreshing the token)", lockPath)
		case <-t.C:
		}
		if delay < 25*time.Millisecond {
			delay *= 2
		}
	}
}
