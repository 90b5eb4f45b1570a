package actions

import (
	"os"
	"testing"

	"github.com/tuitbot/tuitbot/internal/store/pgtest"
)

// TestMain stops the throwaway PostgreSQL cluster the dual-backend tests
// start.
func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }
