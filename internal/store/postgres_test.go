package store_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/store"
	"github.com/tuitbot/tuitbot/internal/store/pgtest"
)

func TestRebind(t *testing.T) {
	tests := []struct{ in, want string }{
		{`SELECT 1`, `SELECT 1`},
		{`SELECT a FROM t WHERE b = ? AND c = ?`, `SELECT a FROM t WHERE b = $1 AND c = $2`},
		{`VALUES (?1, ?2, ?1, ?10)`, `VALUES ($1, $2, $1, $10)`},
		{`WHERE a = ?1 AND b <= ?2 AND id IN (?, ?)`, `WHERE a = $1 AND b <= $2 AND id IN ($3, $4)`},
		{`SELECT '?', "a?b", x FROM t WHERE y = ?`, `SELECT '?', "a?b", x FROM t WHERE y = $1`},
		{`SELECT 'it''s ?' WHERE a = ?`, `SELECT 'it''s ?' WHERE a = $1`},
		{"SELECT a -- why?\nFROM t WHERE b = ?", "SELECT a -- why?\nFROM t WHERE b = $1"},
	}
	for _, tt := range tests {
		if got := store.Rebind(tt.in); got != tt.want {
			t.Errorf("Rebind(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestRedactURL(t *testing.T) {
	tests := []struct{ in, want string }{
		{"postgres://u:s3cret@h:5432/db?sslmode=disable", "postgres://u:xxxxx@h:5432/db?sslmode=disable"},
		{"postgres://u@h/db", "postgres://u@h/db"},
		{"postgres://h/db?password=s3cret&sslmode=disable", "postgres://h/db?password=xxxxx&sslmode=disable"},
	}
	for _, tt := range tests {
		if got := store.RedactURL(tt.in); got != tt.want {
			t.Errorf("RedactURL(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestPostgresUnreachableIsClearError opens a URL whose server is not
// there: the error names the URL, never its password.
func TestPostgresUnreachableIsClearError(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	url := fmt.Sprintf("postgres://tuitbot:hunter2secret@127.0.0.1:%d/tuitbot?sslmode=disable", port)
	_, err = store.Open(context.Background(), url, store.Options{})
	if err == nil {
		t.Fatal("Open of a closed port succeeded")
	}
	msg := err.Error()
	if strings.Contains(msg, "hunter2secret") {
		t.Fatalf("error reveals the password: %s", msg)
	}
	want := fmt.Sprintf("postgres://tuitbot:xxxxx@127.0.0.1:%d/tuitbot", port)
	if !strings.Contains(msg, want) || !strings.Contains(msg, "cannot connect") {
		t.Fatalf("error %q does not say it cannot connect to %s", msg, want)
	}
}

// TestPostgresOpen migrates a new PostgreSQL database, from several
// processes' worth of concurrent opens, into one schema with one identity.
func TestPostgresOpen(t *testing.T) {
	ctx := context.Background()
	url := pgtest.NewDatabase(t, "")
	var wg sync.WaitGroup
	ids := make([]string, 4)
	errs := make([]error, 4)
	for i := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			db, err := store.Open(ctx, url, store.Options{Now: clock})
			if err != nil {
				errs[i] = err
				return
			}
			defer db.Close()
			if db.Dialect != store.Postgres {
				errs[i] = errors.New("dialect is not postgres")
			}
			ids[i] = db.ID
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("open %d: %v", i, err)
		}
	}
	for _, id := range ids[1:] {
		if id == "" || id != ids[0] {
			t.Fatalf("identities differ across opens: %v", ids)
		}
	}
	// The test server trusts loopback, so a password in the URL is
	// accepted and ignored: it must not show in Path, which is logged.
	withPW := strings.Replace(url, "tuitbot@", "tuitbot:pw-not-shown@", 1)
	if os.Getenv(pgtest.EnvURL) != "" {
		withPW = url
	}
	db := open(t, withPW, store.Options{})
	if db.ID != ids[0] {
		t.Fatalf("reopen changed the identity: %s, was %s", db.ID, ids[0])
	}
	if strings.Contains(db.Path, "pw-not-shown") {
		t.Fatalf("Path %q carries the password", db.Path)
	}
	// Placeholders in SQLite's style run as they are.
	if _, err := db.ExecContext(ctx, `INSERT INTO cursors (account_id, key, value, updated_at) VALUES (?, ?, ?, ?)`, "a", "k", "v", store.FormatTime(fixedNow)); err != nil {
		t.Fatalf("insert with ? placeholders: %v", err)
	}
	var v string
	if err := db.QueryRowContext(ctx, `SELECT value FROM cursors WHERE account_id = ?1 AND key = ?2`, "a", "k").Scan(&v); err != nil || v != "v" {
		t.Fatalf("select with ?N placeholders: %q, %v", v, err)
	}
	if res, err := db.QuickCheck(ctx); err != nil || res != "ok" {
		t.Fatalf("QuickCheck = %q, %v", res, err)
	}
}

// TestPostgresSchemaMatchesSQLite keeps the two migration sets in step:
// every table has the same columns on both, so every query runs on both.
func TestPostgresSchemaMatchesSQLite(t *testing.T) {
	ctx := context.Background()
	lite := open(t, filepath.Join(t.TempDir(), "tuitbot.db"), store.Options{})
	pg := open(t, pgtest.NewDatabase(t, ""), store.Options{})
	columns := func(db *store.DB, q string) map[string]string {
		t.Helper()
		rows, err := db.QueryContext(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		cols := map[string][]string{}
		for rows.Next() {
			var tbl, col string
			if err := rows.Scan(&tbl, &col); err != nil {
				t.Fatal(err)
			}
			if tbl == "goose_db_version" || tbl == "sqlite_sequence" {
				continue
			}
			cols[tbl] = append(cols[tbl], col)
		}
		out := map[string]string{}
		for tbl, c := range cols {
			sort.Strings(c)
			out[tbl] = strings.Join(c, ",")
		}
		return out
	}
	want := columns(lite, `SELECT m.name, p.name FROM sqlite_master m JOIN pragma_table_info(m.name) p WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite_stat%'`)
	got := columns(pg, `SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = current_schema()`)
	for tbl, c := range want {
		if got[tbl] != c {
			t.Errorf("table %s:\n sqlite   %s\n postgres %s", tbl, c, got[tbl])
		}
	}
	for tbl := range got {
		if _, ok := want[tbl]; !ok {
			t.Errorf("table %s exists only on postgres", tbl)
		}
	}
}

// TestSessionLockHasOneHolder: of two processes' worth of handles on one
// database, one holds a session lock and the other is refused until the
// holder's session ends.
func TestSessionLockHasOneHolder(t *testing.T) {
	ctx := context.Background()
	url := pgtest.NewDatabase(t, "")
	a := open(t, url, store.Options{})
	b := open(t, url, store.Options{})
	release, err := a.TrySessionLock(ctx, "autopilot:default")
	if err != nil {
		t.Fatalf("first holder: %v", err)
	}
	if _, err := b.TrySessionLock(ctx, "autopilot:default"); !errors.Is(err, store.ErrLockHeld) {
		t.Fatalf("second holder: %v, want ErrLockHeld", err)
	}
	other, err := b.TrySessionLock(ctx, "autopilot:brand_b")
	if err != nil {
		t.Fatalf("another account's lock: %v", err)
	}
	defer other()
	release()
	again, err := b.TrySessionLock(ctx, "autopilot:default")
	if err != nil {
		t.Fatalf("after the holder's session ended: %v", err)
	}
	again()
}

// TestSessionLeaseNoticesItsLoss: a lease whose session ends while its
// process lives on reports the lock lost, so its holder stops acting.
func TestSessionLeaseNoticesItsLoss(t *testing.T) {
	ctx := context.Background()
	url := pgtest.NewDatabase(t, "")
	a := open(t, url, store.Options{})
	b := open(t, url, store.Options{})
	l, err := a.TrySessionLease(ctx, "autopilot:default")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	if err := l.Held(ctx); err != nil {
		t.Fatalf("Held while held: %v", err)
	}
	var ended bool
	if err := b.QueryRowContext(ctx, `SELECT bool_and(pg_terminate_backend(pid, 10000)) FROM pg_locks
		WHERE locktype = 'advisory' AND granted AND objsubid = 1
		AND ((classid::bigint << 32) | objid::bigint) = ?`, store.LockKey("autopilot:default")).Scan(&ended); err != nil || !ended {
		t.Fatalf("end the holder's session: %v, %v", ended, err)
	}
	if err := l.Held(ctx); !errors.Is(err, store.ErrLockLost) {
		t.Fatalf("Held after the session ended = %v, want ErrLockLost", err)
	}
	again, err := b.TrySessionLock(ctx, "autopilot:default")
	if err != nil {
		t.Fatalf("take the lock after the holder's session ended: %v", err)
	}
	again()
}

// TestLockedTxHoldsItsScopes: a transaction begun with LockedTx holds its
// scopes' locks from its first statement on, against other LockedTx
// transactions and against WriteLock statements of the same scope, and
// what a waiter reads after it is let in includes what the holder
// committed. Other scopes do not wait.
func TestLockedTxHoldsItsScopes(t *testing.T) {
	ctx := context.Background()
	url := pgtest.NewDatabase(t, "")
	db := open(t, url, store.Options{})
	if _, err := db.ExecContext(ctx, `CREATE TABLE lock_probe (n INTEGER)`); err != nil {
		t.Fatal(err)
	}
	const scope = "account:default:call:x_like_tweet:abc'; DROP TABLE lock_probe; --"
	waiting := func(t *testing.T, n int) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			var got int
			if err := db.QueryRowContext(ctx, `SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted
				AND ((classid::bigint << 32) | objid::bigint) = ?`, store.LockKey(scope)).Scan(&got); err != nil {
				t.Fatal(err)
			}
			if got == n {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d sessions wait for the scope's lock, want %d", got, n)
			}
			runtime.Gosched()
		}
	}
	for _, how := range []string{"LockedTx", "WriteLock"} {
		t.Run(how, func(t *testing.T) {
			holding, release := make(chan struct{}), make(chan struct{})
			holder := make(chan error, 1)
			go func() {
				holder <- db.LockedTx(ctx, []string{"other", scope}, func(tx *sql.Tx) error {
					close(holding)
					<-release
					_, err := tx.ExecContext(ctx, `INSERT INTO lock_probe (n) VALUES (1)`)
					return err
				})
			}()
			<-holding
			// Another scope is not held up.
			if err := db.LockedTx(ctx, []string{"unrelated"}, func(*sql.Tx) error { return nil }); err != nil {
				t.Fatal(err)
			}
			seen := make(chan int, 1)
			waiter := make(chan error, 1)
			go func() {
				body := func(tx *sql.Tx) error {
					var n int
					err := tx.QueryRowContext(ctx, `SELECT count(*) FROM lock_probe`).Scan(&n)
					seen <- n
					return err
				}
				if how == "LockedTx" {
					waiter <- db.LockedTx(ctx, []string{scope}, body)
					return
				}
				waiter <- db.Tx(ctx, func(tx *sql.Tx) error {
					if err := store.WriteLock(ctx, store.Postgres, tx, scope); err != nil {
						return err
					}
					return body(tx)
				})
			}()
			waiting(t, 1)
			select {
			case n := <-seen:
				t.Fatalf("the waiter ran while the scope was held (saw %d rows)", n)
			default:
			}
			close(release)
			if err := <-holder; err != nil {
				t.Fatal(err)
			}
			if err := <-waiter; err != nil {
				t.Fatal(err)
			}
			var want int
			if err := db.QueryRowContext(ctx, `SELECT count(*) FROM lock_probe`).Scan(&want); err != nil {
				t.Fatal(err)
			}
			if n := <-seen; n != want {
				t.Fatalf("the waiter read %d rows after the holder committed, want %d", n, want)
			}
		})
	}
}

// TestPostgresPoolKeepsItsConnections guards the pool's size: a burst of
// concurrent callers as large as the pool leaves every connection idle for
// the next burst, which reuses the same server sessions rather than opening
// (and planning every statement on) new ones.
func TestPostgresPoolKeepsItsConnections(t *testing.T) {
	ctx := context.Background()
	db := open(t, pgtest.NewDatabase(t, ""), store.Options{})
	const callers = 32
	burst := func() map[int]bool {
		t.Helper()
		conns := make([]*sql.Conn, callers)
		pids := map[int]bool{}
		for i := range conns {
			c, err := db.Conn(ctx)
			if err != nil {
				t.Fatalf("connection %d: %v", i, err)
			}
			conns[i] = c
			var pid int
			if err := c.QueryRowContext(ctx, `SELECT pg_backend_pid()`).Scan(&pid); err != nil {
				t.Fatalf("connection %d: backend pid: %v", i, err)
			}
			pids[pid] = true
		}
		for _, c := range conns {
			if err := c.Close(); err != nil {
				t.Fatal(err)
			}
		}
		return pids
	}
	first := burst()
	if len(first) != callers {
		t.Fatalf("first burst held %d sessions, want %d", len(first), callers)
	}
	if s := db.Stats(); s.Idle != callers || s.MaxIdleClosed != 0 {
		t.Fatalf("after the burst: %d idle, %d closed for the idle limit; want %d idle, none closed", s.Idle, s.MaxIdleClosed, callers)
	}
	second := burst()
	for pid := range second {
		if !first[pid] {
			t.Errorf("second burst opened a new session (backend %d) instead of reusing an idle one", pid)
		}
	}
}

// TestKeyedTxPlansItsFirstLookupsWithoutSorts: a KeyedTx transaction
// begins with PostgreSQL's explicit sorts off and holds its scopes' locks;
// selecting SortsOn turns sorts back on for the rest of it, and no other
// transaction (LockedTx, a plain one, the next KeyedTx before its own
// lookups) is touched.
func TestKeyedTxPlansItsFirstLookupsWithoutSorts(t *testing.T) {
	ctx := context.Background()
	db := open(t, pgtest.NewDatabase(t, ""), store.Options{})
	sorting := func(t *testing.T, tx *sql.Tx) string {
		t.Helper()
		var v string
		if err := tx.QueryRowContext(ctx, `SHOW enable_sort`).Scan(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	const scope = "account:default:intent:abc"
	for i := range 2 {
		err := db.KeyedTx(ctx, []string{scope}, func(tx *sql.Tx) error {
			if v := sorting(t, tx); v != "off" {
				t.Errorf("round %d: enable_sort = %s at the start, want off", i, v)
			}
			var held int
			if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted
				AND pid = pg_backend_pid() AND ((classid::bigint << 32) | objid::bigint) = ?`, store.LockKey(scope)).Scan(&held); err != nil {
				t.Fatal(err)
			}
			if held != 1 {
				t.Errorf("round %d: the scope's lock is held %d times, want once", i, held)
			}
			var one string
			if err := tx.QueryRowContext(ctx, `SELECT `+store.SortsOn(store.Postgres)).Scan(&one); err != nil {
				t.Fatal(err)
			}
			if v := sorting(t, tx); v != "on" {
				t.Errorf("round %d: enable_sort = %s after SortsOn, want on", i, v)
			}
			// Turned off again, for the next round to see it undone at the
			// end of this transaction.
			_, err := tx.ExecContext(ctx, `SET LOCAL enable_sort = off`)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for name, run := range map[string]func(func(*sql.Tx) error) error{
		"LockedTx": func(fn func(*sql.Tx) error) error { return db.LockedTx(ctx, []string{scope}, fn) },
		"Tx":       func(fn func(*sql.Tx) error) error { return db.Tx(ctx, fn) },
	} {
		if err := run(func(tx *sql.Tx) error {
			if v := sorting(t, tx); v != "on" {
				t.Errorf("%s: enable_sort = %s, want on", name, v)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestExecLastRunsWithTheCommit: in a LockedTx or KeyedTx transaction on
// PostgreSQL, ExecLast's statement is sent with the COMMIT: it has not run
// when ExecLast returns, it runs before the commit, and when it fails the
// commit returns its error and nothing of the transaction stays. The
// connection then serves the next transaction. In a plain transaction it
// runs at once.
func TestExecLastRunsWithTheCommit(t *testing.T) {
	ctx := context.Background()
	db := open(t, pgtest.NewDatabase(t, ""), store.Options{})
	if _, err := db.ExecContext(ctx, `CREATE TABLE last_probe (n INTEGER PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}
	count := func(t *testing.T, q interface {
		QueryRowContext(context.Context, string, ...any) *sql.Row
	}) int {
		t.Helper()
		var n int
		if err := q.QueryRowContext(ctx, `SELECT count(*) FROM last_probe`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	for _, begin := range []struct {
		name string
		tx   func(func(*sql.Tx) error) error
	}{
		{"LockedTx", func(fn func(*sql.Tx) error) error { return db.LockedTx(ctx, []string{"last"}, fn) }},
		{"KeyedTx", func(fn func(*sql.Tx) error) error { return db.KeyedTx(ctx, nil, fn) }},
	} {
		t.Run(begin.name, func(t *testing.T) {
			if _, err := db.ExecContext(ctx, `DELETE FROM last_probe`); err != nil {
				t.Fatal(err)
			}
			err := begin.tx(func(tx *sql.Tx) error {
				if _, err := tx.ExecContext(ctx, `INSERT INTO last_probe (n) VALUES (1)`); err != nil {
					return err
				}
				if err := store.ExecLast(ctx, tx, `INSERT INTO last_probe (n) VALUES (?)`, 2); err != nil {
					return err
				}
				if n := count(t, tx); n != 1 {
					t.Errorf("%d rows after ExecLast returned, want 1: its statement waits for the commit", n)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if n := count(t, db); n != 2 {
				t.Fatalf("%d rows committed, want 2", n)
			}
			// A statement that fails at the commit: the commit says so and
			// the transaction's first row is not kept.
			err = begin.tx(func(tx *sql.Tx) error {
				if _, err := tx.ExecContext(ctx, `INSERT INTO last_probe (n) VALUES (3)`); err != nil {
					return err
				}
				return store.ExecLast(ctx, tx, `INSERT INTO last_probe (n) VALUES (?)`, 1)
			})
			if err == nil || !strings.Contains(err.Error(), "duplicate key") {
				t.Fatalf("commit = %v, want the statement's duplicate key error", err)
			}
			if n := count(t, db); n != 2 {
				t.Fatalf("%d rows after the failed commit, want 2", n)
			}
			// Every pooled connection still works.
			for range 4 {
				if err := begin.tx(func(tx *sql.Tx) error { return store.ExecLast(ctx, tx, `SELECT 1`) }); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
	err := db.Tx(ctx, func(tx *sql.Tx) error {
		if err := store.ExecLast(ctx, tx, `INSERT INTO last_probe (n) VALUES (?)`, 9); err != nil {
			return err
		}
		if n := count(t, tx); n != 3 {
			t.Errorf("%d rows in a plain transaction after ExecLast, want 3", n)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
