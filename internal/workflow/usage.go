package workflow

import (
	"context"
	"database/sql"
	"time"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/llm"
	"github.com/tuitbot/tuitbot/internal/store"
	"github.com/tuitbot/tuitbot/internal/xapi"
)

// UsageLedger writes the X cost ledger (x_api_usage) and the LLM usage
// ledger (llm_usage), which this package owns and reports on (Stats,
// XUsage, LLMUsage). It is the xapi client's and the LLM client's recorder.
type UsageLedger struct {
	DB *store.DB
	// AccountID is the account LLM calls are recorded under (X calls carry
	// their own); empty is the default account.
	AccountID string
}

const (
	qInsertXUsage = `INSERT INTO x_api_usage (account_id, endpoint, method, status_code, items, cost_usd, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?)`
	qInsertLLMUsage = `INSERT INTO llm_usage (account_id, provider, model, operation, input_tokens, output_tokens, cost_usd, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`
)

// exec runs query through the database's prepared statement: a row is
// written on every X and LLM call, and parsing the insert again each time
// would cost more than writing it. The writes run on the pool, never in a
// transaction, so preparing on first use waits on no writer.
func (u UsageLedger) exec(ctx context.Context, query string, args ...any) error {
	// Prepared without the caller's deadline: the statement outlives the
	// call.
	s, err := u.DB.Prepared(context.WithoutCancel(ctx), query)
	if err != nil {
		return err
	}
	_, err = s.ExecContext(ctx, args...)
	return err
}

// RecordXUsage records one X call. A call the gateway executes carries
// its unit of work (store.WithDeferred): the row is then written in the
// transaction that completes the call, never in one of its own.
func (u UsageLedger) RecordXUsage(ctx context.Context, r xapi.Usage) error {
	args := []any{r.AccountID, r.Endpoint, r.Method, r.Status, r.Items, r.CostUSD, store.FormatTime(r.At)}
	if ok, err := store.Defer(ctx, qInsertXUsage, args...); ok || err != nil {
		return err
	}
	return u.exec(ctx, qInsertXUsage, args...)
}

// RecordLLMUsage records one LLM call.
func (u UsageLedger) RecordLLMUsage(ctx context.Context, r llm.Usage) error {
	account := u.AccountID
	if account == "" {
		account = "default"
	}
	return u.exec(ctx, qInsertLLMUsage, account, r.Provider, r.Model, r.Operation, r.InputTokens, r.OutputTokens, r.CostUSD, store.FormatTime(r.At))
}

// XSpendSince counts the account's X calls since since and sums their
// estimated cost.
func XSpendSince(ctx context.Context, db *store.DB, account string, since time.Time) (calls int, usd float64, err error) {
	var spend sql.NullFloat64
	if err := db.QueryRowContext(ctx, `SELECT count(*), sum(cost_usd) FROM x_api_usage WHERE account_id = ? AND created_at >= ?`,
		account, store.FormatTime(since)).Scan(&calls, &spend); err != nil {
		return 0, 0, apperr.Wrap(apperr.DBError, err, "sum X spend: %v", err)
	}
	return calls, spend.Float64, nil
}
