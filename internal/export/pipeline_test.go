package export

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/store"
)

// trickyCells are values whose CSV and JSON forms need care: quotes,
// commas, newlines, NULLs, non-ASCII, a leading space, formula starts,
// bytes and numbers.
var trickyCells = []any{
	"say \"hi\", then go", "line one\nline two\r\n", nil, "naïve café 日本語 🙂", " leading space",
	"\u00a0no-break space first", "=SUM(A1)", "-3", int64(-3), float64(2.5), []byte("@bytes"), "", `\.`,
}

// trickySource hands over rows of trickyCells in turn, the way a database
// read does: one vals slice reused for every row, and a []byte that is
// overwritten after each row (a writer that kept it would print the
// next row's bytes).
func trickySource(rows int) (cols []string, src Source) {
	cols = []string{"n", "a", "b", "c"}
	return cols, func(_ context.Context, _ time.Time, emit store.RowFunc) error {
		vals := make([]any, len(cols))
		scratch := make([]byte, 0, 64)
		for i := range rows {
			vals[0] = int64(i)
			for j := 1; j < len(cols); j++ {
				v := trickyCells[(i*3+j)%len(trickyCells)]
				if b, ok := v.([]byte); ok {
					scratch = append(scratch[:0], b...)
					scratch = strconv.AppendInt(scratch, int64(i), 10)
					v = scratch
				}
				vals[j] = v
			}
			if err := emit(cols, vals); err != nil {
				return err
			}
		}
		return nil
	}
}

// sequential is what an export of src is, written row by row with
// encoding/csv and encoding/json in one goroutine, without batches.
func sequential(t *testing.T, format string, cols []string, src Source) []byte {
	t.Helper()
	var buf bytes.Buffer
	cw := csv.NewWriter(&buf)
	header := false
	err := src(context.Background(), time.Time{}, func(cols []string, vals []any) error {
		if format == CSV {
			if !header {
				header = true
				if err := cw.Write(cols); err != nil {
					return err
				}
			}
			rec := make([]string, len(vals))
			for i, v := range vals {
				switch x := v.(type) {
				case nil:
				case string:
					rec[i] = Neutralise(x)
				case []byte:
					rec[i] = Neutralise(string(x))
				case int64:
					rec[i] = strconv.FormatInt(x, 10)
				case float64:
					rec[i] = strconv.FormatFloat(x, 'f', -1, 64)
				default:
					return fmt.Errorf("unexpected %T", v)
				}
			}
			return cw.Write(rec)
		}
		buf.WriteByte('{')
		for i, v := range vals {
			if i > 0 {
				buf.WriteByte(',')
			}
			k, _ := json.Marshal(cols[i])
			buf.Write(k)
			buf.WriteByte(':')
			if b, ok := v.([]byte); ok {
				v = string(b)
			}
			e, err := json.Marshal(v)
			if err != nil {
				return err
			}
			buf.Write(e)
		}
		buf.WriteString("}\n")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	cw.Flush()
	return buf.Bytes()
}

// TestPipelinedWriteIsByteIdentical: the export read in batches and
// written by another goroutine is, byte for byte, the export written row
// by row in one, for no rows, one row, a batch and a row over, and many
// batches with a partial last one.
func TestPipelinedWriteIsByteIdentical(t *testing.T) {
	for _, format := range Formats() {
		for _, rows := range []int{0, 1, batchRows, batchRows + 1, batchesInFlight*batchRows*3 + 17} {
			t.Run(fmt.Sprintf("%s/%d", format, rows), func(t *testing.T) {
				cols, src := trickySource(rows)
				want := sequential(t, format, cols, src)
				var got bytes.Buffer
				n, err := Write(context.Background(), &got, Request{What: Audit, Format: format}, src, nil)
				if err != nil || n != int64(rows) {
					t.Fatalf("Write = %d, %v; want %d rows", n, err, rows)
				}
				if !bytes.Equal(got.Bytes(), want) {
					g, w := got.String(), string(want)
					i := 0
					for i < len(g) && i < len(w) && g[i] == w[i] {
						i++
					}
					t.Fatalf("output differs at byte %d of %d:\ngot  %q\nwant %q", i, len(w), g[max(0, i-40):min(len(g), i+40)], w[max(0, i-40):min(len(w), i+40)])
				}
			})
		}
	}
}

// blockedWriter holds its first Write until release is closed.
type blockedWriter struct {
	release chan struct{}
	held    atomic.Bool
	w       bytes.Buffer
}

func (b *blockedWriter) Write(p []byte) (int, error) {
	if !b.held.Swap(true) {
		<-b.release
	}
	return b.w.Write(p)
}

// TestReadGoesOnWhileTheWriteWaits: while the output takes its first
// write, the read goes on into the next batches (up to the batches that
// exist, no further): reading and writing overlap.
func TestReadGoesOnWhileTheWriteWaits(t *testing.T) {
	// Enough rows that the first write comes before the read ends.
	const rows = 50_000
	out := &blockedWriter{release: make(chan struct{})}
	var read atomic.Int64
	ahead := make(chan struct{})
	src := func(_ context.Context, _ time.Time, emit store.RowFunc) error {
		cols, vals := []string{"n", "text"}, []any{int64(0), strings.Repeat("x", 40)}
		for i := range rows {
			vals[0] = int64(i)
			if err := emit(cols, vals); err != nil {
				return err
			}
			if read.Add(1) == int64(writeBuffer/48+2*batchRows) {
				close(ahead)
			}
		}
		return nil
	}
	done := make(chan error, 1)
	go func() {
		_, err := Write(context.Background(), out, Request{What: Audit, Format: CSV}, src, nil)
		done <- err
	}()
	// The read gets a buffer's worth of rows and two batches past the
	// first write, which has not returned: it does not wait for it.
	select {
	case <-ahead:
	case err := <-done:
		t.Fatalf("Write returned %v before its first write was released", err)
	case <-time.After(30 * time.Second):
		t.Fatalf("the read stopped at row %d while the first write waited: reading waits for writing", read.Load())
	}
	close(out.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := bytes.Count(out.w.Bytes(), []byte("\n")); got != rows+1 {
		t.Errorf("wrote %d lines, want %d", got, rows+1)
	}
}

// failingWriter accepts limit bytes, then fails every write.
type failingWriter struct {
	limit, n int
	err      error
}

func (f *failingWriter) Write(p []byte) (int, error) {
	if f.n+len(p) > f.limit {
		return 0, f.err
	}
	f.n += len(p)
	return len(p), nil
}

// TestWriteErrorOrCancelStopsTheRead: when the output fails (a full disk, a
// closed pipe), the read stops within the batches in flight and Write
// returns ExportWriteError wrapping the cause, naming the row it was
// writing; a cancelled context stops the read and the write the same way.
func TestWriteErrorOrCancelStopsTheRead(t *testing.T) {
	const rows = 1_000_000
	full := errors.New("no space left on device")
	for _, c := range []struct {
		name   string
		out    func() io.Writer
		cancel int64 // cancel the context after this many rows (0: never)
		check  func(t *testing.T, err error)
	}{
		{"full disk", func() io.Writer { return &failingWriter{limit: 3 * writeBuffer, err: full} }, 0, func(t *testing.T, err error) {
			if apperr.CodeOf(err) != apperr.ExportWriteError || !errors.Is(err, full) {
				t.Fatalf("err = %v; want export_write_error wrapping %v", err, full)
			}
			if msg := err.Error(); !strings.Contains(msg, "write the export: row ") || !strings.Contains(msg, full.Error()) {
				t.Errorf("err = %q; want it to name the row being written and the cause", msg)
			}
		}},
		{"closed pipe", func() io.Writer { r, w := io.Pipe(); r.Close(); return w }, 0, func(t *testing.T, err error) {
			if apperr.CodeOf(err) != apperr.ExportWriteError || !errors.Is(err, io.ErrClosedPipe) {
				t.Fatalf("err = %v; want export_write_error wrapping %v", err, io.ErrClosedPipe)
			}
		}},
		{"cancelled", func() io.Writer { return io.Discard }, 5000, func(t *testing.T, err error) {
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("err = %v; want %v", err, context.Canceled)
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var read int64
			src := func(ctx context.Context, _ time.Time, emit store.RowFunc) error {
				cols, vals := []string{"n", "text"}, []any{int64(0), "a row of an export, with a comma"}
				for i := range rows {
					vals[0] = int64(i)
					if err := emit(cols, vals); err != nil {
						return fmt.Errorf("read audit rows: %w", err)
					}
					read++
					if read == c.cancel {
						cancel()
					}
				}
				return nil
			}
			n, err := Write(ctx, c.out(), Request{What: Audit, Format: CSV}, src, nil)
			c.check(t, err)
			// What was read and not written is at most the batches in
			// flight and what the output buffer held.
			if slack := int64(batchesInFlight*batchRows + writeBuffer/30); read > n+slack || read >= rows {
				t.Errorf("read %d rows, wrote %d: the read went on %d rows past the failure (allowed %d)", read, n, read-n, slack)
			}
		})
	}
}
