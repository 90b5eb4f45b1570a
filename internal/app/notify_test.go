package app

import (
	"context"
	"os"
	"testing"

	"github.com/tuitbot/tuitbot/internal/config"
	"github.com/tuitbot/tuitbot/internal/store"
	"github.com/tuitbot/tuitbot/internal/store/pgtest"
	"github.com/tuitbot/tuitbot/internal/store/storetest"
)

// TestMain stops the PostgreSQL cluster the tests may have started.
func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// One Telegram poller per channel runs at a time: in the home on SQLite
// (a lock file), across every host of a shared database on PostgreSQL (a
// session lock, whichever connection asks). A second taker is refused
// until the first lets go, and another channel has its own lock.
func TestOneTelegramPollerPerChannel(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		cfg := config.Default()
		cfg.Home = t.TempDir()
		a := &App{Cfg: &cfg, DB: storetest.Open(t, store.Options{})}
		// A second host: another App, with its own home, on the same
		// database (SQLite has no second host: the home is the scope).
		b := a
		if a.DB.Dialect == store.Postgres {
			other := config.Default()
			other.Home = t.TempDir()
			b = &App{Cfg: &other, DB: a.DB}
		}
		ctx := context.Background()
		first, err := a.pollLock("tg")(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := b.pollLock("tg")(ctx); err == nil {
			t.Fatal("a second poller took the channel's lock")
		}
		other, err := b.pollLock("tg2")(ctx)
		if err != nil {
			t.Fatalf("another channel: %v", err)
		}
		if err := first.Held(ctx); err != nil {
			t.Fatalf("the first poller lost its lock: %v", err)
		}
		other.Release()
		first.Release()
		again, err := b.pollLock("tg")(ctx)
		if err != nil {
			t.Fatalf("after the first let go: %v", err)
		}
		again.Release()
	})
}
