package workflow

import (
	"context"
	"testing"

	"github.com/tuitbot/tuitbot/internal/llm"
)

// TestLLMUsageIsPerAccount: each account's usage report and spend count
// only its own LLM calls.
func TestLLMUsageIsPerAccount(t *testing.T) {
	mine, other, clk := services(t)
	ctx := context.Background()
	must(t, UsageLedger{DB: mine.DB}.RecordLLMUsage(ctx, llm.Usage{Provider: "p", Model: "m", Operation: "tweet", InputTokens: 10, OutputTokens: 5, CostUSD: 0.25, At: clk.Now()}))
	must(t, UsageLedger{DB: other.DB, AccountID: "other"}.RecordLLMUsage(ctx, llm.Usage{Provider: "p", Model: "m", Operation: "tweet", InputTokens: 1, OutputTokens: 1, CostUSD: 2, At: clk.Now()}))
	for _, tc := range []struct {
		s    *Service
		want float64
	}{{mine, 0.25}, {other, 2}} {
		u, err := tc.s.LLMUsage(ctx, 1)
		must(t, err)
		if u.TotalUSD != tc.want || len(u.Rows) != 1 {
			t.Errorf("%s: LLM usage %+v, want one row totalling %v", tc.s.AccountID, u, tc.want)
		}
		st, err := tc.s.Stats(ctx, 1)
		must(t, err)
		if st.LLMSpendUSD != tc.want {
			t.Errorf("%s: LLM spend %v, want %v", tc.s.AccountID, st.LLMSpendUSD, tc.want)
		}
	}
}
