package autopilot

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/tuitbot/tuitbot/internal/store"
)

// errLockLost is what Run returns when its lease is no longer held.
var errLockLost = errors.New("the account's autopilot lock was lost")

// ErrHeld says another runner holds the account's autopilot lock.
var ErrHeld = errors.New("another autopilot runner holds this account")

// Lease is a held account lock.
type Lease interface {
	// Held returns nil while the lock is still this runner's; an error
	// means it may have passed to another runner.
	Held(ctx context.Context) error
	Release()
}

// Acquire tries once to become the account's only runner. It returns the
// lease, or an error wrapping ErrHeld while another runner holds the lock
// (any other error is a failure to ask).
type Acquire func(ctx context.Context) (Lease, error)

// SessionLockKey is the PostgreSQL session lock that makes a runner the
// account's only one across every host sharing the database.
func SessionLockKey(account string) string { return "autopilot:" + account }

// SessionLock is the Acquire of an account on PostgreSQL. The server drops
// the lock when the holder's session ends, so a dead host never keeps it.
func SessionLock(db *store.DB, account string) Acquire {
	return func(ctx context.Context) (Lease, error) {
		l, err := db.TrySessionLease(ctx, SessionLockKey(account))
		if errors.Is(err, store.ErrLockHeld) {
			return nil, fmt.Errorf("account %s: %w", account, ErrHeld)
		}
		if err != nil {
			return nil, err
		}
		return l, nil
	}
}

// RetryInterval is how often a standing-by runner asks for the lock again:
// the shortest interval of its loops, so that it takes over within one
// interval of the holder's death and no loop misses more than one turn.
func (r *Runner) RetryInterval() time.Duration {
	var every time.Duration
	for _, n := range r.loops {
		if d := r.interval(n); every == 0 || d < every {
			every = d
		}
	}
	if every <= 0 {
		every = time.Minute
	}
	return every
}

// RunExclusive runs the loops only while this runner holds the account's
// lock. While another runner holds it, this one stands by: it runs nothing,
// calls standingBy (when not nil) each time it finds the lock held, and
// asks again after RetryInterval of the runner's clock. Before every loop
// iteration it checks that the lock is still its own: when it was lost
// (its session ended while this process lived on) the loops stop and the
// runner stands by again. It returns when ctx is done or Run fails.
func (r *Runner) RunExclusive(ctx context.Context, acquire Acquire, standingBy func(error)) error {
	return runExclusive(ctx, acquire, r.RetryInterval(), r.sleep, r.log, standingBy, func(ctx context.Context, l Lease) error {
		r.guard = l.Held
		defer func() { r.guard = nil }()
		return r.Run(ctx)
	})
}

func runExclusive(ctx context.Context, acquire Acquire, every time.Duration, sleep Sleep, log *slog.Logger,
	standingBy func(error), run func(context.Context, Lease) error) error {
	waiting := false
	for ctx.Err() == nil {
		lease, err := acquire(ctx)
		if err != nil {
			if !errors.Is(err, ErrHeld) {
				return fmt.Errorf("autopilot lock: %w", err)
			}
			if !waiting {
				// Said once per wait, not on every retry, so a long
				// stand-by does not flood the log.
				log.Info("autopilot standing by: another runner holds this account", "retry_every", every.String())
				waiting = true
			}
			if standingBy != nil {
				standingBy(err)
			}
			if sleep(ctx, every) != nil {
				break
			}
			continue
		}
		if waiting {
			log.Info("autopilot taking over: the lock is free")
		}
		waiting = false
		err = run(ctx, lease)
		lease.Release()
		if errors.Is(err, errLockLost) {
			log.Warn("autopilot lock lost: the loops stopped; standing by", "error", err)
			continue
		}
		return err
	}
	return nil
}
