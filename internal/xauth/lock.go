package xauth

import (
	"context"
	"errors"
	"os"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/flock"
)

// lockTokenFile takes the exclusive cross-process lock "<path>.lock" and
// returns the function that releases it. Refresh tokens are single-use, so an
// unserialised refresh can log every process out. Every call opens its own
// descriptor: two Managers in one process exclude each other exactly as two
// processes do. waiting, when set, is called before waiting for a lock that
// someone else holds.
func lockTokenFile(ctx context.Context, path string, waiting func()) (func(), error) {
	lockPath := path + ".lock"
	f, err := os.OpenFile(lockPath, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, apperr.Wrap(apperr.ConfigError, err, "cannot open token lock file %s", lockPath)
	}
	err = flock.TryLock(f)
	if errors.Is(err, flock.ErrLocked) {
		if waiting != nil {
			waiting()
		}
		err = flock.Lock(ctx, f)
	}
	if err != nil {
		f.Close()
		if ctx.Err() != nil {
			return nil, apperr.Wrap(apperr.XNetworkError, ctx.Err(), "gave up waiting for the token lock %s (another tuitbot process is refreshing the token)", lockPath)
		}
		return nil, apperr.Wrap(apperr.ConfigError, err, "cannot lock %s", lockPath)
	}
	return func() {
		_ = flock.Unlock(f)
		f.Close()
	}, nil
}
