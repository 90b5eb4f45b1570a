package app_test

import (
	"context"
	"testing"

	"github.com/tuitbot/tuitbot/internal/app"
	"github.com/tuitbot/tuitbot/internal/config"
)

// BenchmarkHealth is the work behind one health_check call: every check
// health_check reports, against a real database file.
func BenchmarkHealth(b *testing.B) {
	cfg := config.Default()
	cfg.Home = b.TempDir()
	a, err := app.New(context.Background(), &cfg, app.Options{SkipX: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { a.Close() })
	ctx := context.Background()
	a.Health(ctx)
	b.ReportAllocs()
	for b.Loop() {
		a.Health(ctx)
	}
}
