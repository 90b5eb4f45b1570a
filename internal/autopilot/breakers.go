package autopilot

import (
	"context"
	"time"

	"github.com/tuitbot/tuitbot/internal/store"
)

// LoopCount is one loop's run counts and breaker state as every process
// sees them in the database.
type LoopCount struct {
	Name    string
	Runs    int
	Errors  int
	Breaker string // closed, open or half-open
}

// LoopCounts reads every loop's persisted counts and breaker state without
// a Runner, so a server that runs no loops (mcp serve) can report those of
// the autopilot working on the same database.
func LoopCounts(ctx context.Context, db *store.DB, account string, breakerThreshold int, now time.Time) ([]LoopCount, error) {
	if account == "" {
		account = "default"
	}
	var out []LoopCount
	for _, n := range LoopNames() {
		st, err := readState(ctx, db, account, n)
		if err != nil {
			return nil, err
		}
		out = append(out, LoopCount{Name: n, Runs: st.Runs, Errors: st.Errors, Breaker: breakerState(st, breakerThreshold, now)})
	}
	return out, nil
}
