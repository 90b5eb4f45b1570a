// Package export writes what tuitbot recorded (audit rows, posts, metrics,
// approval items) as CSV or JSON Lines, row by row as the database hands
// them over, so an export of any size holds one row in memory.
//
// CSV cells are made safe to open in a spreadsheet: a text cell that
// begins with = + - @, a tab or a carriage return is prefixed with a
// single quote, so it is shown as text and never run as a formula.
package export

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/store"
)

// What can be exported, and in which formats.
const (
	Audit     = "audit"
	Posts     = "posts"
	Metrics   = "metrics"
	Approvals = "approvals"

	CSV   = "csv"
	JSONL = "jsonl"
)

// Whats lists what can be exported, in documentation order.
func Whats() []string { return []string{Audit, Posts, Metrics, Approvals} }

// Formats lists the output formats.
func Formats() []string { return []string{CSV, JSONL} }

// Request is one export: what, in which format, from when (zero: all).
type Request struct {
	What   string
	Format string
	Since  time.Time
}

// Check refuses an unknown what or format, naming the field.
func (r Request) Check() error {
	if !slices.Contains(Whats(), r.What) {
		return apperr.New(apperr.InvalidInput, "what: %q is not allowed; allowed values: audit, posts, metrics, approvals", r.What)
	}
	if !slices.Contains(Formats(), r.Format) {
		return apperr.New(apperr.InvalidInput, "format: %q is not allowed; allowed values: csv, jsonl", r.Format)
	}
	return nil
}

// Source streams the rows of one kind of record created at or after since.
type Source func(ctx context.Context, since time.Time, emit store.RowFunc) error

// ProgressEvery is how many rows pass between two progress reports.
const ProgressEvery = 100_000

// Write streams src's rows to w in r.Format and returns how many rows it
// wrote. progress (may be nil) hears the running count every
// ProgressEvery rows. A CSV export of no rows is empty: the columns are
// only known once a row is read.
func Write(ctx context.Context, w io.Writer, r Request, src Source, progress func(rows int64)) (int64, error) {
	if err := r.Check(); err != nil {
		return 0, err
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	var n int64
	var row func(cols []string, vals []any) error
	flushCSV := func() error { return nil }
	switch r.Format {
	case CSV:
		cw := csv.NewWriter(bw)
		var rec []string
		row = func(cols []string, vals []any) error {
			if rec == nil {
				rec = make([]string, len(cols))
				if err := cw.Write(cols); err != nil {
					return err
				}
			}
			for i, v := range vals {
				rec[i] = csvCell(v)
			}
			// csv.Writer buffers into bw, which writes through when full;
			// a failed write surfaces here or on the last flush.
			return cw.Write(rec)
		}
		flushCSV = func() error {
			cw.Flush()
			return cw.Error()
		}
	case JSONL:
		var line []byte
		var keys [][]byte
		row = func(cols []string, vals []any) error {
			if keys == nil {
				for _, c := range cols {
					k, _ := json.Marshal(c)
					keys = append(keys, k)
				}
			}
			line = append(line[:0], '{')
			for i, v := range vals {
				if i > 0 {
					line = append(line, ',')
				}
				line = append(line, keys[i]...)
				line = append(line, ':')
				var err error
				if line, err = appendJSON(line, v); err != nil {
					return fmt.Errorf("column %s: %w", cols[i], err)
				}
			}
			line = append(line, '}', '\n')
			_, err := bw.Write(line)
			return err
		}
	}
	err := src(ctx, r.Since, func(cols []string, vals []any) error {
		if err := row(cols, vals); err != nil {
			return writeFailed(err)
		}
		n++
		if progress != nil && n%ProgressEvery == 0 {
			progress(n)
		}
		if n%1024 == 0 {
			return ctx.Err()
		}
		return nil
	})
	if err != nil {
		return n, err
	}
	if err := flushCSV(); err != nil {
		return n, writeFailed(err)
	}
	if err := bw.Flush(); err != nil {
		return n, writeFailed(err)
	}
	return n, nil
}

// writeFailed is a failure to write the output (a full disk, a closed
// pipe), as opposed to reading the database.
func writeFailed(err error) error {
	return apperr.Wrap(apperr.ExportWriteError, err, "write the export: %v", err)
}

// text is a value as CSV shows it, and whether it is text (not a number).
func text(v any) (string, bool) {
	switch x := v.(type) {
	case nil:
		return "", false
	case string:
		return x, true
	case []byte:
		return string(x), true
	case int64:
		return strconv.FormatInt(x, 10), false
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64), false
	case bool:
		return strconv.FormatBool(x), false
	case time.Time:
		return store.FormatTime(x), true
	default:
		return fmt.Sprint(x), true
	}
}

// csvCell is v as a CSV cell, neutralised when a spreadsheet would read it
// as a formula.
func csvCell(v any) string {
	s, isText := text(v)
	if isText {
		return Neutralise(s)
	}
	return s
}

// Neutralise prefixes s with a single quote when it begins with a
// character a spreadsheet takes as the start of a formula (= + - @) or
// one that some spreadsheets skip before looking for it (tab, CR).
func Neutralise(s string) string {
	if s == "" {
		return s
	}
	switch s[0] {
	case '=', '+', '-', '@', '\t', '\r':
		return "'" + s
	}
	return s
}

func appendJSON(b []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case int64:
		return strconv.AppendInt(b, x, 10), nil
	case []byte:
		v = string(x)
	case time.Time:
		v = store.FormatTime(x)
	}
	enc, err := json.Marshal(v)
	if err != nil {
		return b, err
	}
	return append(b, enc...), nil
}

// ToFile writes the export to a new file in dir (created 0700), named
// after what and when, readable by its owner only (0600). It returns the
// file's path and the rows written; a failed export leaves no file.
func ToFile(ctx context.Context, dir string, now time.Time, r Request, src Source) (string, int64, error) {
	if err := r.Check(); err != nil {
		return "", 0, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", 0, apperr.Wrap(apperr.ExportWriteError, err, "create %s: %v", dir, err)
	}
	name := fmt.Sprintf("%s-%s.%s", r.What, now.UTC().Format("20060102T150405.000000000Z"), r.Format)
	path := filepath.Join(dir, name)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", 0, apperr.Wrap(apperr.ExportWriteError, err, "create %s: %v", path, err)
	}
	n, err := Write(ctx, f, r, src, nil)
	if cerr := f.Close(); err == nil && cerr != nil {
		err = writeFailed(cerr)
	}
	if err != nil {
		_ = os.Remove(path)
		return "", 0, err
	}
	return path, n, nil
}
