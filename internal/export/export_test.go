package export

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/store"
)

// rowsOf is a Source that hands over fixed rows.
func rowsOf(cols []string, rows ...[]any) Source {
	return func(_ context.Context, _ time.Time, emit store.RowFunc) error {
		for _, r := range rows {
			if err := emit(cols, r); err != nil {
				return err
			}
		}
		return nil
	}
}

func TestNeutralise(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"=HYPERLINK(\"http://x\")", "'=HYPERLINK(\"http://x\")"},
		{"+1+1", "'+1+1"},
		{"-2+3", "'-2+3"},
		{"@SUM(A1)", "'@SUM(A1)"},
		{"\t=1", "'\t=1"},
		{"\r=1", "'\r=1"},
		{"plain text", "plain text"},
		{"a=b", "a=b"},
		{"", ""},
	} {
		if got := Neutralise(c.in); got != c.want {
			t.Errorf("Neutralise(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestCSVIsSafeInASpreadsheet: a text cell that would run as a formula is
// prefixed with a quote, numbers stay numbers, and the file parses back
// as CSV with quotes, commas and newlines intact.
func TestCSVIsSafeInASpreadsheet(t *testing.T) {
	cols := []string{"id", "text", "delta", "note"}
	src := rowsOf(cols,
		[]any{int64(1), "=cmd|' /C calc'!A0", int64(-5), nil},
		[]any{int64(2), "line one\nline \"two\", three", float64(-1.5), []byte("@mention")},
	)
	var buf bytes.Buffer
	n, err := Write(context.Background(), &buf, Request{What: Audit, Format: CSV}, src, nil)
	if err != nil || n != 2 {
		t.Fatalf("Write = %d, %v", n, err)
	}
	recs, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{cols, {"1", "'=cmd|' /C calc'!A0", "-5", ""}, {"2", "line one\nline \"two\", three", "-1.5", "'@mention"}}
	if len(recs) != len(want) {
		t.Fatalf("records = %q", recs)
	}
	for i := range want {
		if strings.Join(recs[i], "|") != strings.Join(want[i], "|") {
			t.Errorf("record %d = %q, want %q", i, recs[i], want[i])
		}
	}
}

func TestJSONLines(t *testing.T) {
	src := rowsOf([]string{"id", "text", "score", "gone"},
		[]any{int64(7), "=not a formula in JSON", 0.25, nil},
		[]any{int64(8), "naïve \"quote\"\n", 1.0, "x"},
	)
	var buf bytes.Buffer
	n, err := Write(context.Background(), &buf, Request{What: Posts, Format: JSONL}, src, nil)
	if err != nil || n != 2 {
		t.Fatalf("Write = %d, %v", n, err)
	}
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("lines = %q", lines)
	}
	var first map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &first); err != nil {
		t.Fatal(err)
	}
	if first["id"] != float64(7) || first["text"] != "=not a formula in JSON" || first["score"] != 0.25 || first["gone"] != nil {
		t.Errorf("first line = %v", first)
	}
	if !strings.HasPrefix(lines[0], `{"id":7,"text":`) {
		t.Errorf("columns out of order: %s", lines[0])
	}
}

func TestRequestRefusesUnknownValues(t *testing.T) {
	for _, c := range []struct {
		r     Request
		field string
	}{
		{Request{What: "everything", Format: CSV}, "what"},
		{Request{What: Audit, Format: "xlsx"}, "format"},
	} {
		_, err := Write(context.Background(), &bytes.Buffer{}, c.r, rowsOf(nil), nil)
		if apperr.CodeOf(err) != apperr.InvalidInput || !strings.HasPrefix(apperr.As(err).Message, c.field+":") {
			t.Errorf("%+v: %v; want invalid_input naming %s", c.r, err, c.field)
		}
	}
}

func TestProgressEveryHundredThousandRows(t *testing.T) {
	src := func(_ context.Context, _ time.Time, emit store.RowFunc) error {
		cols, vals := []string{"n"}, []any{int64(0)}
		for i := range 250_000 {
			vals[0] = int64(i)
			if err := emit(cols, vals); err != nil {
				return err
			}
		}
		return nil
	}
	var got []int64
	n, err := Write(context.Background(), &bytes.Buffer{}, Request{What: Audit, Format: CSV}, src, func(n int64) { got = append(got, n) })
	if err != nil || n != 250_000 {
		t.Fatalf("Write = %d, %v", n, err)
	}
	if len(got) != 2 || got[0] != 100_000 || got[1] != 200_000 {
		t.Errorf("progress = %v, want [100000 200000]", got)
	}
}

// TestToFileIsOwnersOnlyAndLeavesNothingOnFailure: the file is 0600 in a
// 0700 directory; an export that fails partway leaves no file behind.
func TestToFileIsOwnersOnlyAndLeavesNothingOnFailure(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "exports")
	now := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	path, n, err := ToFile(context.Background(), dir, now, Request{What: Approvals, Format: JSONL}, rowsOf([]string{"id"}, []any{int64(1)}, []any{int64(2)}))
	if err != nil || n != 2 {
		t.Fatalf("ToFile = %s, %d, %v", path, n, err)
	}
	if filepath.Dir(path) != dir || !strings.HasPrefix(filepath.Base(path), "approvals-20260302T090000") || filepath.Ext(path) != ".jsonl" {
		t.Errorf("path = %s", path)
	}
	for p, want := range map[string]os.FileMode{path: 0o600, dir: 0o700} {
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != want {
			t.Errorf("%s mode = %v, want %v", p, st.Mode().Perm(), want)
		}
	}
	boom := errors.New("database went away")
	failing := func(_ context.Context, _ time.Time, emit store.RowFunc) error {
		if err := emit([]string{"id"}, []any{int64(1)}); err != nil {
			return err
		}
		return boom
	}
	if _, _, err := ToFile(context.Background(), dir, now.Add(time.Second), Request{What: Audit, Format: CSV}, failing); !errors.Is(err, boom) {
		t.Fatalf("ToFile of a failing source = %v", err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("the directory holds %d files after a failed export, want only the first", len(entries))
	}
}
