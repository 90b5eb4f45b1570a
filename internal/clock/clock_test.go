package clock

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

func TestSleepReturnsOnCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Sleep(ctx, time.Hour) }()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Sleep after cancel = %v, want context.Canceled", err)
	}
}

func TestSleepNonPositive(t *testing.T) {
	if err := Sleep(context.Background(), 0); err != nil {
		t.Fatalf("Sleep(0) = %v, want nil", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Sleep(ctx, -time.Second); !errors.Is(err, context.Canceled) {
		t.Fatalf("Sleep(-1s) on a done context = %v, want context.Canceled", err)
	}
}

func TestFakeMovesOnlyWhenTold(t *testing.T) {
	start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	c := NewFake(start)
	if !c.Now().Equal(start) {
		t.Fatalf("Now = %v, want %v", c.Now(), start)
	}
	var wg sync.WaitGroup
	for range 10 {
		wg.Add(1)
		go func() { defer wg.Done(); c.Advance(time.Minute) }()
	}
	wg.Wait()
	if got := c.Now().Sub(start); got != 10*time.Minute {
		t.Fatalf("after 10 concurrent one-minute advances the clock moved %v", got)
	}
	c.Set(start)
	if !c.Now().Equal(start) {
		t.Fatalf("Set did not move the clock back: %v", c.Now())
	}
}

func TestFakeAdvanceToNeverGoesBack(t *testing.T) {
	start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	c := NewFake(start)
	c.AdvanceTo(start.Add(time.Hour))
	c.AdvanceTo(start.Add(time.Minute))
	if got := c.Now(); !got.Equal(start.Add(time.Hour)) {
		t.Fatalf("Now = %v, want %v: AdvanceTo moved the clock back", got, start.Add(time.Hour))
	}
}
