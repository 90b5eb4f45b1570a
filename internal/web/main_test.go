package web

import (
	"os"
	"testing"

	"github.com/tuitbot/tuitbot/internal/store/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }
