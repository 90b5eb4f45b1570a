package toolstest

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tuitbot/tuitbot/internal/apperr"
)

// TestExportDataOverMCP: export_data writes the account's records to a
// new owner-only file in the home's exports directory and answers its
// path and row count; CSV cells that would run as formulas are quoted.
func TestExportDataOverMCP(t *testing.T) {
	e := newEnv(t, envOptions{permissive: true})
	e.call("x_post_tweet", map[string]any{"text": "=1+1 is not a formula here"}).ok(t, nil)
	e.call("x_post_tweet", map[string]any{"text": "A second post for the export."}).ok(t, nil)
	var got struct {
		Path string `json:"path"`
		Rows int64  `json:"rows"`
	}
	e.call("export_data", map[string]any{"what": "audit", "format": "csv"}).ok(t, &got)
	if got.Rows != 2 || filepath.Dir(got.Path) != filepath.Join(e.App.Cfg.Home, "exports") {
		t.Fatalf("export_data = %+v; want 2 rows in %s", got, filepath.Join(e.App.Cfg.Home, "exports"))
	}
	st, err := os.Stat(got.Path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("export file mode %v, want 0600", st.Mode().Perm())
	}
	f, err := os.Open(got.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 3 || recs[0][0] != "id" {
		t.Fatalf("file holds %d records (header %v)", len(recs), recs[0])
	}
	all := ""
	for _, r := range recs[1:] {
		all += strings.Join(r, "|")
	}
	if !strings.Contains(all, "x_post_tweet") {
		t.Errorf("rows = %q", all)
	}

	e.call("export_data", map[string]any{"what": "posts", "format": "jsonl"}).ok(t, &got)
	if got.Rows != 2 || filepath.Ext(got.Path) != ".jsonl" {
		t.Errorf("posts export = %+v", got)
	}
	for _, what := range []string{"metrics", "approvals"} {
		got.Path = ""
		e.call("export_data", map[string]any{"what": what, "format": "csv"}).ok(t, &got)
		if _, err := os.Stat(got.Path); err != nil {
			t.Errorf("%s export: %v", what, err)
		}
	}
	e.call("export_data", map[string]any{"what": "audit", "format": "csv", "since": "2999-01-01T00:00:00Z"}).ok(t, &got)
	if got.Rows != 0 {
		t.Errorf("an export since the future has %d rows", got.Rows)
	}

	e.call("export_data", map[string]any{"what": "secrets", "format": "csv"}).fails(t, apperr.InvalidInput).mentions(t, "what")
	e.call("export_data", map[string]any{"what": "audit", "format": "xlsx"}).fails(t, apperr.InvalidInput).mentions(t, "format")
	e.call("export_data", map[string]any{"what": "audit", "format": "csv", "since": "yesterday"}).fails(t, apperr.InvalidInput).mentions(t, "since")
}
