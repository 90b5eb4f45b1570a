package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tuitbot/tuitbot/internal/export"
)

// parseSince reads --since: an RFC 3339 time or a date (midnight UTC).
func parseSince(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	return time.Time{}, usageError{fmt.Errorf("--since %q is not an RFC 3339 time or a date (e.g. 2026-03-02 or 2026-03-02T09:00:00Z)", s)}
}

func (c *cli) exportCmd() *cobra.Command {
	var what, format, since, out string
	var asJSON *bool
	cmd := &cobra.Command{
		Use:   "export",
		Short: "Export audit rows, posts, metrics or approval items as CSV or JSON Lines",
		Long: "Write one account's records as CSV or JSON Lines, to standard output or to --out FILE (created\n" +
			"readable by its owner only; a failed export leaves no file). Rows are streamed from the database,\n" +
			"so exports of millions of rows run in constant memory; progress goes to standard error. CSV cells\n" +
			"that a spreadsheet would run as a formula (beginning with = + - @, a tab or a carriage return) are\n" +
			"prefixed with a single quote.",
		Example: "  tuitbot export --what audit --format csv --since 2026-03-01 --out audit.csv\n" +
			"  tuitbot export --what posts --format jsonl --account brand_b",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !slices.Contains(export.Whats(), what) {
				return usageError{fmt.Errorf("--what %q: allowed values are %s", what, strings.Join(export.Whats(), ", "))}
			}
			if !slices.Contains(export.Formats(), format) {
				return usageError{fmt.Errorf("--format %q: allowed values are %s", format, strings.Join(export.Formats(), ", "))}
			}
			from, err := parseSince(since)
			if err != nil {
				return err
			}
			if *asJSON && (out == "" || out == "-") {
				return usageError{fmt.Errorf("--json needs --out FILE: without it the export itself is on standard output")}
			}
			a, err := c.openApp(cmd)
			if err != nil {
				return err
			}
			defer a.Close()
			r := export.Request{What: what, Format: format, Since: from}
			progress := func(n int64) { fmt.Fprintf(c.stderr, "exported %d rows...\n", n) }
			if out == "" || out == "-" {
				n, err := a.Export(cmd.Context(), r, c.stdout, progress)
				if err != nil {
					return err
				}
				fmt.Fprintf(c.stderr, "exported %d %s rows as %s\n", n, what, format)
				return nil
			}
			n, err := exportToPath(out, func(w io.Writer) (int64, error) { return a.Export(cmd.Context(), r, w, progress) })
			if err != nil {
				return err
			}
			return c.answer(*asJSON, ExportSummary{What: what, Format: format, Rows: n, Out: out}, func(io.Writer) {
				fmt.Fprintf(c.stderr, "exported %d %s rows as %s to %s\n", n, what, format, out)
			})
		},
	}
	asJSON = jsonFlag(cmd, "what, format, rows, out (with --out only: the export itself is the file)")
	cmd.Flags().StringVar(&what, "what", "", "what to export: audit, posts, metrics or approvals")
	cmd.Flags().StringVar(&format, "format", "csv", "output format: csv or jsonl")
	cmd.Flags().StringVar(&since, "since", "", "only records created at or after this RFC 3339 time or date")
	cmd.Flags().StringVar(&out, "out", "", "file to write (default standard output)")
	_ = cmd.MarkFlagRequired("what")
	return cmd
}

// exportToPath writes through a temporary 0600 file beside path and
// renames it into place, so path is either the whole export or untouched.
func exportToPath(path string, write func(io.Writer) (int64, error)) (int64, error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return 0, fmt.Errorf("create %s: %w", path, err)
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	n, err := write(f)
	if cerr := f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("write %s: %w", path, cerr)
	}
	if err != nil {
		return n, err
	}
	if err := os.Rename(tmp, path); err != nil {
		return n, fmt.Errorf("write %s: %w", path, err)
	}
	return n, nil
}
