package store_test

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"testing"

	"github.com/tuitbot/tuitbot/internal/store"
	"github.com/tuitbot/tuitbot/internal/store/pgtest"
)

// childEnv names the database a re-executed test binary opens instead of
// running the tests.
const childEnv = "TUITBOT_STORE_TEST_CHILD_DB"

func TestMain(m *testing.M) {
	if path := os.Getenv(childEnv); path != "" {
		os.Exit(openAsChild(path))
	}
	os.Exit(pgtest.Main(m))
}

// openAsChild is one process of a concurrent first start: it reports that
// it is ready, waits for SIGUSR1 so that every process opens at the same
// moment, opens the database and exits 0 only if that worked.
func openAsChild(path string) int {
	go_ := make(chan os.Signal, 1)
	signal.Notify(go_, syscall.SIGUSR1)
	fmt.Println("ready")
	<-go_
	db, err := store.Open(context.Background(), path, store.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := db.Close(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}
