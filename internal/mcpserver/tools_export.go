package mcpserver

import (
	"context"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/export"
)

// ExportDataInput is export_data's input.
type ExportDataInput struct {
	What   string `json:"what" jsonschema:"audit (the mutation audit rows), posts (what the account posted), metrics (measured post metrics) or approvals (approval items)"`
	Format string `json:"format" jsonschema:"csv (cells that a spreadsheet would run as a formula are prefixed with a single quote) or jsonl (one JSON object per line)"`
	Since  string `json:"since,omitempty" jsonschema:"RFC 3339 time; only records created at or after it (default: all)"`
}

func exportTools() []*Tool {
	return []*Tool{
		def(Spec{Name: "export_data", Title: "Export data", Category: "analytics", Needs: Needs{DB: true},
			Description: "Write the account's audit rows, posts, metrics or approval items as CSV or JSON Lines to a new file in the home's exports directory (readable by its owner only) and return its path and row count. Reads local records only; no X call. The rows are streamed, so an export of any size is fine.",
			Profiles:    allProfiles, Hints: Hints{ReadOnly: true}, Errors: []apperr.Code{apperr.ExportWriteError, apperr.DBError}},
			func(ctx context.Context, c *Call, in ExportDataInput) (Result, error) {
				since, err := parseTime("since", in.Since)
				if err != nil {
					return Result{}, err
				}
				r := export.Request{What: in.What, Format: in.Format, Since: derefTime(since)}
				if err := r.Check(); err != nil {
					return Result{}, err
				}
				if c.Deps.ExportData == nil {
					return Result{}, apperr.New(apperr.DBError, "exports need the database, which this server has not opened")
				}
				path, rows, err := c.Deps.ExportData(ctx, r)
				if err != nil {
					return Result{}, err
				}
				return Result{Data: map[string]any{"path": path, "rows": rows, "what": in.What, "format": in.Format}}, nil
			}),
	}
}
