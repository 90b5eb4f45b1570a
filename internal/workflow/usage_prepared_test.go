package workflow

import (
	"context"
	"testing"

	"github.com/tuitbot/tuitbot/internal/llm"
	"github.com/tuitbot/tuitbot/internal/xapi"
)

// TestUsageLedgerPreparesOncePerDB: the usage ledgers write a row on every
// X and LLM call; each insert is prepared once per database (as the
// gateway's statements are) and reused, not parsed again per call, and
// every call's row is still written.
func TestUsageLedgerPreparesOncePerDB(t *testing.T) {
	ctx := context.Background()
	s, _, clk := services(t)
	for _, tc := range []struct {
		name   string
		record func(u UsageLedger) error
		count  string
	}{
		{"x_api_usage", func(u UsageLedger) error {
			return u.RecordXUsage(ctx, xapi.Usage{AccountID: "default", Endpoint: "GET /2/users/me", Method: "GET", Status: 200, At: clk.Now()})
		}, `SELECT count(*) FROM x_api_usage`},
		{"llm_usage", func(u UsageLedger) error {
			return u.RecordLLMUsage(ctx, llm.Usage{Provider: "ollama", Model: "m", Operation: "draft", At: clk.Now()})
		}, `SELECT count(*) FROM llm_usage`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := s.DB.Statements()
			// Two ledgers on one database, as two accounts have.
			for _, u := range []UsageLedger{{DB: s.DB}, {DB: s.DB, AccountID: "other"}, {DB: s.DB}} {
				must(t, tc.record(u))
			}
			if got := s.DB.Statements() - before; got != 1 {
				t.Errorf("statements prepared for the database after three %s rows: %d more, want 1 (prepared once, reused)", tc.name, got)
			}
			var n int
			must(t, s.DB.QueryRowContext(ctx, tc.count).Scan(&n))
			if n != 3 {
				t.Errorf("%s rows = %d, want 3", tc.name, n)
			}
		})
	}
}
