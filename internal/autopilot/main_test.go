package autopilot_test

import (
	"os"
	"testing"

	"github.com/tuitbot/tuitbot/internal/store/pgtest"
)

// TestMain stops the throwaway PostgreSQL cluster the exclusive-runner
// tests may have started.
func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }
