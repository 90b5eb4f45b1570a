//go:build e2e

package e2e

import (
	"os"
	"testing"

	"github.com/tuitbot/tuitbot/internal/store/pgtest"
)

// TestMain stops the PostgreSQL cluster the tests may have started.
func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }
