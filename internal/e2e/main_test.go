//go:build e2e

package e2e

import (
	"os"
	"testing"

	"github.com/tuitbot/tuitbot/internal/browsertest"
	"github.com/tuitbot/tuitbot/internal/store/pgtest"
)

// TestMain stops the PostgreSQL cluster the tests may have started, and
// fails the run if the tests leave anything in the temporary directory.
func TestMain(m *testing.M) { os.Exit(browsertest.Main(m, pgtest.Main)) }
