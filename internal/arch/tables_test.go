package arch

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// tableOwners maps every table to the one package (directory below the
// module root) allowed to run SQL on it; everyone else goes through that
// package's Go API.
var tableOwners = map[string]string{
	// The gateway: audit, approvals (with the idempotency keys both carry)
	// and the decision log.
	"mutation_audit": "internal/gateway",
	"approval_queue": "internal/gateway",
	// Pending counts per tool and caller, kept by approval_queue's triggers.
	"approval_pending_counts": "internal/gateway",
	"action_log":              "internal/gateway",
	// What X's API may not do, handed to a person, and whether they did it.
	"handoffs": "internal/gateway",
	// The users who told the account to stop: its suppression list.
	"opt_outs": "internal/optouts",
	// The users who sent the account a DM first (X's "only after the
	// user DMs you first").
	"dm_senders": "internal/dmsenders",
	// The policy engine's limit counters, kept by the store side.
	"policy_counters": "internal/store/counters",
	// The autopilot's own state and ledger.
	"loop_state":        "internal/autopilot",
	"autopilot_actions": "internal/autopilot",
	// Workflow: drafts, what was posted, targets, analytics, cost ledgers.
	"drafts":             "internal/workflow",
	"queue_state":        "internal/workflow",
	"replies_sent":       "internal/workflow",
	"original_tweets":    "internal/workflow",
	"target_accounts":    "internal/workflow",
	"follower_snapshots": "internal/workflow",
	"tweet_performance":  "internal/workflow",
	"x_api_usage":        "internal/workflow",
	"llm_usage":          "internal/workflow",
	// Recurring rules and evergreen posts both end as scheduled drafts.
	"recurring_posts": "internal/workflow",
	"evergreen_posts": "internal/workflow",
	// The account's own posts measured at 1 h, 24 h and 7 days, and the
	// best posting times computed from them.
	"post_metrics": "internal/postmetrics",
	// Discovery: what the searches found and where they stopped.
	"discovered_tweets": "internal/discovery",
	"cursors":           "internal/discovery",
	// Media uploads are reused only by the upload action.
	"media_uploads": "internal/actions",
	// Notifications: the outbox the gateway writes into (through
	// notify's API) and the dispatcher delivers from.
	"notify_outbox": "internal/notify",
	// Signed one-time approval links and their single use.
	"approval_links": "internal/approvallink",
	// The database itself.
	"db_identity":      "internal/store",
	"db_homes":         "internal/store",
	"goose_db_version": "internal/store",
}

// pendingViolations are packages that still run SQL on a table they do not
// own, as "package table". The list may only shrink: an entry that is no
// longer a violation fails the test, so whoever moves the SQL behind the
// owner's API also deletes the entry.
var pendingViolations = map[string]bool{}

// sqlUse finds a table named in SQL: after FROM, JOIN, INTO, UPDATE or
// TABLE (CREATE, ALTER, DROP).
var sqlUse = regexp.MustCompile(`(?i)\b(?:FROM|JOIN|INTO|UPDATE|TABLE)\s+["\x60]?([a-z_][a-z0-9_]*)`)

// moduleRoot is two levels above this package.
func moduleRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root not found at %s: %v", root, err)
	}
	return root
}

// tableUses maps "package table" to the places in non-test Go files where
// the package's string literals run SQL on the table.
func tableUses(t *testing.T, root string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != root && (strings.HasPrefix(n, ".") || n == "testdata" || n == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		pkg := filepath.ToSlash(rel)
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err != nil {
				return true
			}
			for _, m := range sqlUse.FindAllStringSubmatch(s, -1) {
				table := strings.ToLower(m[1])
				if _, known := tableOwners[table]; !known {
					continue
				}
				key := pkg + " " + table
				out[key] = append(out[key], fset.Position(lit.Pos()).String())
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestTablesAreQueriedOnlyByTheirOwner(t *testing.T) {
	root := moduleRoot(t)
	uses := tableUses(t, root)
	var bad []string
	for key, where := range uses {
		pkg, table, _ := strings.Cut(key, " ")
		if tableOwners[table] == pkg || pendingViolations[key] {
			continue
		}
		bad = append(bad, key+" at "+strings.Join(where, ", "))
	}
	sort.Strings(bad)
	for _, b := range bad {
		t.Errorf("SQL on a table outside its owner %s: %s", tableOwners[strings.Fields(b)[1]], b)
	}
	for key := range pendingViolations {
		if _, still := uses[key]; !still {
			t.Errorf("%q no longer runs SQL on that table: delete it from pendingViolations", key)
		}
	}
}

// Every table the migrations create has an owner, so a new table cannot
// slip past the check above.
func TestEveryTableHasAnOwner(t *testing.T) {
	root := moduleRoot(t)
	dir := filepath.Join(root, "internal", "store", "migrations")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	create := regexp.MustCompile(`(?i)CREATE\s+TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?["\x60]?(\w+)`)
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range create.FindAllStringSubmatch(string(b), -1) {
			if _, ok := tableOwners[strings.ToLower(m[1])]; !ok {
				t.Errorf("table %s (%s) has no owner in tableOwners", m[1], e.Name())
			}
		}
	}
}

// The scanner itself must see SQL in the forms the code writes it.
func TestSQLUseMatches(t *testing.T) {
	for s, want := range map[string]string{
		"SELECT count(*) FROM approval_queue WHERE x":  "approval_queue",
		"INSERT INTO mutation_audit (a) VALUES (?)":    "mutation_audit",
		"UPDATE drafts SET status = ?":                 "drafts",
		"a LEFT JOIN discovered_tweets d ON":           "discovered_tweets",
		"select 1 from\n\t\tpolicy_counters":           "policy_counters",
		"How often the publisher looks for due drafts": "",
	} {
		got := ""
		if m := sqlUse.FindStringSubmatch(s); m != nil {
			got = m[1]
		}
		if got != want {
			t.Errorf("%q: table %q, want %q", s, got, want)
		}
	}
}
