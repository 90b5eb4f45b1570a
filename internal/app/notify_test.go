package app

import (
	"context"
	"testing"

	"github.com/tuitbot/tuitbot/internal/config"
	"github.com/tuitbot/tuitbot/internal/store"
)

// On SQLite one Telegram poller per channel runs in the home: a second
// taker is refused until the first lets go, and another channel has its
// own lock.
func TestOneTelegramPollerPerChannel(t *testing.T) {
	cfg := config.Default()
	cfg.Home = t.TempDir()
	a := &App{Cfg: &cfg, DB: &store.DB{Dialect: store.SQLite}}
	ctx := context.Background()
	first, err := a.pollLock("tg")(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.pollLock("tg")(ctx); err == nil {
		t.Fatal("a second poller took the channel's lock")
	}
	other, err := a.pollLock("tg2")(ctx)
	if err != nil {
		t.Fatalf("another channel: %v", err)
	}
	other.Release()
	first.Release()
	again, err := a.pollLock("tg")(ctx)
	if err != nil {
		t.Fatalf("after the first let go: %v", err)
	}
	again.Release()
}
