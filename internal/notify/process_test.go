package notify

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

	"github.com/tuitbot/tuitbot/internal/store"
)

// The test binary, re-run with these set, is a dispatcher process of its
// own (see runDispatcherProcess): the cross-process benchmarks start it.
const (
	envDispatcherDB   = "TUITBOT_NOTIFY_TEST_DISPATCHER_DB"
	envDispatcherHook = "TUITBOT_NOTIFY_TEST_DISPATCHER_HOOK"
)

// runDispatcherProcess runs a dispatcher on the database named by
// envDispatcherDB (a SQLite file or a PostgreSQL URL) delivering channel
// "hook" to the webhook at envDispatcherHook, as a long-lived tuitbot
// process does, until its standard input closes. It writes "ready" once
// the dispatcher runs and "listening" each time it listens (PostgreSQL).
// It reports whether it ran (the variables were set) and its exit code.
func runDispatcherProcess() (int, bool) {
	target, hookURL := os.Getenv(envDispatcherDB), os.Getenv(envDispatcherHook)
	if target == "" || hookURL == "" {
		return 0, false
	}
	fail := func(err error) (int, bool) {
		fmt.Fprintln(os.Stderr, "dispatcher process:", err)
		return 1, true
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	db, err := store.Open(ctx, target, store.Options{Now: time.Now})
	if err != nil {
		return fail(err)
	}
	defer db.Close()
	hook, err := NewWebhook("hook", hookURL, testSecret, &http.Client{}, time.Now)
	if err != nil {
		return fail(err)
	}
	out := bufio.NewWriter(os.Stdout)
	say := make(chan string, 4)
	d := NewDispatcher(DispatcherOptions{Outbox: NewOutbox(db, nil, time.Now), Channels: []Channel{hook}, Now: time.Now,
		Listening: func() { say <- "listening" }})
	done := make(chan struct{})
	go func() { d.Run(ctx); close(done) }()
	go func() {
		for s := range say {
			fmt.Fprintln(out, s)
			out.Flush()
		}
	}()
	say <- "ready"
	_, _ = io.Copy(io.Discard, os.Stdin)
	cancel()
	<-done
	return 0, true
}
