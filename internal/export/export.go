// Package export writes what tuitbot recorded (audit rows, posts, metrics,
// approval items) as CSV or JSON Lines, streamed as the database hands
// them over: one goroutine reads while another writes, and an export of
// any size holds a few batches of rows in memory.
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
	"errors"
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

// An export reads and formats at once: the source's goroutine reads rows
// into batches and hands them over, another formats and writes them, so
// reading the database (most of an export's work) never waits for the
// formatting and the two use two cores. batchRows rows make a batch, and
// batchesInFlight batches exist, reused: the reader waits for a free one
// when the writer is behind, which bounds what an export of any size
// holds to a few hundred rows.
const (
	batchRows       = 256
	batchesInFlight = 4
	// writeBuffer is the output buffer: large writes, few system calls.
	writeBuffer = 256 << 10
)

// batch is up to batchRows rows of one export, row after row.
type batch struct {
	vals []any
	rows int
}

// Write streams src's rows to w in r.Format and returns how many rows it
// wrote. progress (may be nil) hears the running count every
// ProgressEvery rows, from the goroutine that writes. A CSV export of no
// rows is empty: the columns are only known once a row is read.
//
// A failed write (a full disk, a closed pipe) stops the read and is
// returned as ExportWriteError; a cancelled ctx stops both within a
// batch. Write returns once nothing touches w any more.
func Write(ctx context.Context, w io.Writer, r Request, src Source, progress func(rows int64)) (int64, error) {
	if err := r.Check(); err != nil {
		return 0, err
	}
	bw := bufio.NewWriterSize(w, writeBuffer)
	row, flush := formatter(r.Format, bw)

	full := make(chan *batch, batchesInFlight)
	free := make(chan *batch, batchesInFlight)
	for range batchesInFlight {
		free <- &batch{}
	}
	// The writer: cols is set before the first batch is handed over; n
	// and werr are read once stopped is closed.
	var cols []string
	var n int64
	var werr error
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		for b := range full {
			if werr = ctx.Err(); werr != nil {
				return
			}
			width := len(cols)
			for i := range b.rows {
				if err := row(cols, b.vals[i*width:(i+1)*width]); err != nil {
					werr = writeFailed(fmt.Errorf("row %d: %w", n+1, err))
					return
				}
				n++
				if progress != nil && n%ProgressEvery == 0 {
					progress(n)
				}
			}
			free <- b
		}
		if err := flush(); err != nil {
			werr = writeFailed(err)
		}
	}()

	// The reader: handing a batch over (and taking a free one) is where
	// it notices the writer has stopped or ctx is done.
	var cur *batch
	handOver := func() error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if cur != nil {
			select {
			case full <- cur:
			case <-stopped:
				return errWriterStopped
			}
		}
		select {
		case cur = <-free:
			cur.rows = 0
			return nil
		case <-stopped:
			return errWriterStopped
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	rerr := src(ctx, r.Since, func(c []string, vals []any) error {
		if cur == nil {
			cols = slices.Clone(c)
			if err := handOver(); err != nil {
				return err
			}
		}
		if len(vals) != len(cols) {
			return fmt.Errorf("export: a row of %d values under %d columns", len(vals), len(cols))
		}
		if cur.rows == batchRows {
			if err := handOver(); err != nil {
				return err
			}
		}
		if cur.vals == nil {
			cur.vals = make([]any, batchRows*len(cols))
		}
		// The values are the source's until its next row: strings and
		// numbers are immutable, bytes are copied.
		at := cur.vals[cur.rows*len(cols):]
		for i, v := range vals {
			if b, ok := v.([]byte); ok {
				v = slices.Clone(b)
			}
			at[i] = v
		}
		cur.rows++
		return nil
	})
	if rerr == nil && cur != nil && cur.rows > 0 {
		select {
		case full <- cur:
		case <-stopped:
		}
	}
	close(full)
	<-stopped
	if werr != nil {
		// The writer's failure (or the cancellation it saw) is what
		// stopped the read, if the read stopped.
		return n, werr
	}
	return n, rerr
}

// errWriterStopped is what the reader's callback returns when the writer
// has stopped; Write returns the writer's own error instead.
var errWriterStopped = errors.New("export: the writer stopped")

// formatter returns the function that writes one row to bw in format
// (the columns' header before the first row, for CSV) and the one that
// flushes what is buffered.
func formatter(format string, bw *bufio.Writer) (row func(cols []string, vals []any) error, flush func() error) {
	if format == JSONL {
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
		return row, bw.Flush
	}
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
	flush = func() error {
		cw.Flush()
		if err := cw.Error(); err != nil {
			return err
		}
		return bw.Flush()
	}
	return row, flush
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
