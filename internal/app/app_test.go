package app_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/app"
	"github.com/tuitbot/tuitbot/internal/config"
	"github.com/tuitbot/tuitbot/internal/store"
)

func testConfig(t *testing.T, home string) *config.Config {
	t.Helper()
	cfg := config.Default()
	cfg.Home = home
	return &cfg
}

func newApp(t *testing.T, cfg *config.Config, opts app.Options) *app.App {
	t.Helper()
	opts.SkipX = true
	a, err := app.New(context.Background(), cfg, opts)
	if err != nil {
		t.Fatalf("app.New: %v", err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

func dbHealth(t *testing.T, a *app.App) app.Check {
	t.Helper()
	for _, c := range a.Health(context.Background()) {
		if c.Name == "database" {
			return c
		}
	}
	t.Fatal("no database line in the health report")
	return app.Check{}
}

func TestRequireDBFailsInsteadOfServingWithoutDatabase(t *testing.T) {
	for _, tc := range []struct {
		name    string
		prepare func(t *testing.T, home string)
		want    []string
	}{
		{"not a database", func(t *testing.T, home string) {
			if err := os.WriteFile(filepath.Join(home, "tuitbot.db"), []byte(strings.Repeat("not a database\n", 300)), 0o600); err != nil {
				t.Fatal(err)
			}
		}, []string{"cannot open the database", "corrupt"}},
		{"emptied database in a used home", func(t *testing.T, home string) {
			for _, f := range []string{"tuitbot.db", "tokens.json"} {
				if err := os.WriteFile(filepath.Join(home, f), nil, 0o600); err != nil {
					t.Fatal(err)
				}
			}
		}, []string{"cannot open the database", "new or empty", store.AcceptNewDatabaseFlag}},
		{"unreachable postgresql", func(t *testing.T, home string) {}, []string{"cannot open the database",
			"cannot connect to the PostgreSQL database", "postgres://tuitbot:xxxxx@127.0.0.1:"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			tc.prepare(t, home)
			cfg := testConfig(t, home)
			if tc.name == "unreachable postgresql" {
				cfg.Storage.DatabaseURL = closedPostgresURL(t)
			}
			a, err := app.New(context.Background(), cfg, app.Options{SkipX: true, RequireDB: true})
			if err == nil {
				a.Close()
				t.Fatal("app.New with RequireDB started without a database")
			}
			if strings.Contains(err.Error(), "pw-kept-secret") {
				t.Errorf("error reveals the database password: %v", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
			// Without RequireDB (doctor) the error is kept for the report.
			a = newApp(t, cfg, app.Options{})
			if a.DBErr == nil || dbHealth(t, a).Status != "error" {
				t.Errorf("doctor view: DBErr %v, health %+v", a.DBErr, dbHealth(t, a))
			}
		})
	}
}

func TestAcceptNewDatabase(t *testing.T) {
	home := t.TempDir()
	for _, f := range []string{"tuitbot.db", "tokens.json"} {
		if err := os.WriteFile(filepath.Join(home, f), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	a := newApp(t, testConfig(t, home), app.Options{RequireDB: true, AcceptNewDatabase: true})
	if a.DB == nil || a.DB.ID == "" {
		t.Fatal("the accepted database has no identity")
	}
}

// leafPageOf returns one leaf page of table in the database at path.
func leafPageOf(t *testing.T, path, table string) (page, size int64) {
	t.Helper()
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if err := raw.QueryRow(`SELECT pageno FROM dbstat WHERE name = ? AND pagetype = 'leaf' ORDER BY pageno LIMIT 1 OFFSET 2`, table).Scan(&page); err != nil {
		t.Fatalf("find a leaf page of %s: %v", table, err)
	}
	if err := raw.QueryRow(`PRAGMA page_size`).Scan(&size); err != nil {
		t.Fatal(err)
	}
	return page, size
}

// corruptLedgerHome is a home whose database was closed cleanly with a
// leaf page of the LLM usage ledger overwritten afterwards: a table no
// start reads, so the database opens and only quick_check finds it.
func corruptLedgerHome(t *testing.T) *config.Config {
	t.Helper()
	cfg := testConfig(t, t.TempDir())
	a, err := app.New(context.Background(), cfg, app.Options{SkipX: true, RequireDB: true})
	if err != nil {
		t.Fatal(err)
	}
	now := store.FormatTime(time.Now())
	for i := range 200 {
		if _, err := a.DB.Exec(`INSERT INTO llm_usage (account_id, provider, model, operation, input_tokens, output_tokens, cost_usd, created_at)
			VALUES ('default', 'ollama', ?, 'draft', 1, 1, 0, ?)`, fmt.Sprintf("m-%d-%s", i, strings.Repeat("s", 400)), now); err != nil {
			t.Fatal(err)
		}
	}
	if h := a.Doctor(context.Background()); h[1].Status != "ok" {
		t.Fatalf("healthy database reported %+v", h[1])
	}
	a.Close()

	path := cfg.DBFile()
	page, size := leafPageOf(t, path, "llm_usage")
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte(strings.Repeat("\xA5", int(size))), (page-1)*size); err != nil {
		t.Fatal(err)
	}
	f.Close()
	return cfg
}

// TestDoctorReportsCorruptPages: doctor waits for quick_check and
// reports the corruption it finds.
func TestDoctorReportsCorruptPages(t *testing.T) {
	a := newApp(t, corruptLedgerHome(t), app.Options{RequireDB: true})
	var h app.Check
	for _, c := range a.Doctor(context.Background()) {
		if c.Name == "database" {
			h = c
		}
	}
	if h.Status != "error" || !strings.Contains(h.Message, "quick_check") {
		t.Fatalf("doctor with corrupt pages: %+v, want an error from quick_check", h)
	}
}

// TestHealthChecksIntegrityInTheBackground: a health check (the MCP tool,
// /healthz) does not wait for quick_check, which reads every page: the
// first answers before the verdict, and once the background run has found
// the corruption, every health check reports it.
func TestHealthChecksIntegrityInTheBackground(t *testing.T) {
	a := newApp(t, corruptLedgerHome(t), app.Options{RequireDB: true})
	if h := dbHealth(t, a); h.Status != "ok" {
		t.Fatalf("first health check = %+v; want ok: it must not wait for quick_check", h)
	}
	a.WaitIntegrityRun()
	for range 2 {
		h := dbHealth(t, a)
		if h.Status != "error" || !strings.Contains(h.Message, "quick_check") {
			t.Fatalf("health after the background quick_check: %+v, want its error", h)
		}
	}
	if a.Healthy(context.Background()) {
		t.Error("/healthz reports a corrupt database healthy")
	}
}

// TestHeldBackgroundWaitsForRelease: a server's services started with
// HoldBackground leave the work no caller waits for (the planner's
// statistics, the health check's quick_check) until ReleaseBackground,
// which the server calls once its first answer is out: the first call's
// health check neither waits for nor competes with them, and both run
// after the release.
func TestHeldBackgroundWaitsForRelease(t *testing.T) {
	t.Run("statistics", func(t *testing.T) {
		cfg := testConfig(t, t.TempDir())
		a := newApp(t, cfg, app.Options{RequireDB: true})
		for i := range 200 {
			if _, err := a.DB.Exec(`INSERT INTO llm_usage (account_id, provider, model, operation, input_tokens, output_tokens, cost_usd, created_at)
				VALUES ('default', 'ollama', ?, 'draft', 1, 1, 0, ?)`, fmt.Sprintf("m-%d", i), store.FormatTime(time.Now())); err != nil {
				t.Fatal(err)
			}
		}
		a.Close()
		raw, err := sql.Open("sqlite", cfg.DBFile())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := raw.Exec(`DROP TABLE IF EXISTS sqlite_stat1`); err != nil {
			t.Fatal(err)
		}
		raw.Close()
		a = newApp(t, cfg, app.Options{RequireDB: true, HoldBackground: true})
		if n := statTables(t, a); n != 0 {
			t.Fatalf("statistics gathered before the release (%d tables)", n)
		}
		a.ReleaseBackground()
		if n := statTables(t, a); n == 0 {
			t.Error("the release gathered no statistics")
		}
	})
	t.Run("quick_check", func(t *testing.T) {
		a := newApp(t, corruptLedgerHome(t), app.Options{RequireDB: true, HoldBackground: true})
		if h := dbHealth(t, a); h.Status != "ok" {
			t.Fatalf("first health check = %+v; want ok: it must not wait for quick_check", h)
		}
		a.WaitIntegrityRun()
		if h := dbHealth(t, a); h.Status != "ok" {
			t.Fatalf("health check before the release = %+v: quick_check ran while held", h)
		}
		a.ReleaseBackground()
		a.WaitIntegrityRun()
		if h := dbHealth(t, a); h.Status != "error" || !strings.Contains(h.Message, "quick_check") {
			t.Fatalf("health after the release: %+v, want quick_check's error", h)
		}
	})
}

// statTables counts the tables the planner has statistics of.
func statTables(t *testing.T, a *app.App) int {
	t.Helper()
	var exists int
	if err := a.DB.QueryRow(`SELECT count(*) FROM sqlite_schema WHERE name = 'sqlite_stat1'`).Scan(&exists); err != nil {
		t.Fatal(err)
	}
	if exists == 0 {
		return 0
	}
	var n int
	if err := a.DB.QueryRow(`SELECT count(DISTINCT tbl) FROM sqlite_stat1`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestHealthReportsDeletedWAL(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	a := newApp(t, cfg, app.Options{RequireDB: true})
	if h := dbHealth(t, a); h.Status != "ok" {
		t.Fatalf("healthy database reported %+v", h)
	}
	for _, suffix := range []string{"-wal", "-shm"} {
		if err := os.Remove(cfg.DBFile() + suffix); err != nil {
			t.Fatal(err)
		}
	}
	h := dbHealth(t, a)
	if h.Status != "error" || !strings.Contains(h.Message, "deleted") {
		t.Fatalf("health after -wal/-shm were deleted: %+v, want an error", h)
	}
}

// TestHealthDegradedOnFullDisk runs the home on a small tmpfs and fills it
// the way a user's disk fills: something else takes the space while the
// reserve file is in place. The database is reported degraded, because no
// mutation can be recorded, and ok again once space is free.
func TestHealthDegradedOnFullDisk(t *testing.T) {
	home := filepath.Join(t.TempDir(), "small")
	if err := os.Mkdir(home, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", home, "tmpfs", 0, "size=4m"); err != nil {
		if errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EACCES) {
			t.Skipf("mounting a tmpfs is not permitted here (%v); the gateway's max_page_count test covers the unrecorded-outcome path", err)
		}
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Unmount(home, 0) })
	cfg := testConfig(t, home)
	a := newApp(t, cfg, app.Options{RequireDB: true})
	if h := dbHealth(t, a); h.Status != "ok" {
		t.Fatalf("healthy database reported %+v", h)
	}
	if _, err := os.Stat(store.ReservePath(cfg.DBFile())); err != nil {
		t.Fatalf("the reserve file is not in place before the disk fills: %v", err)
	}
	filler, err := os.Create(filepath.Join(home, "filler"))
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4096)
	for {
		if _, err := filler.Write(buf); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatal(err)
			}
			break
		}
	}
	filler.Close()
	h := dbHealth(t, a)
	if h.Status != "degraded" || !strings.Contains(h.Message, "full") || !strings.Contains(h.Message, home) {
		t.Fatalf("health on a full disk: %+v, want degraded naming the full disk", h)
	}
	if err := os.Remove(filepath.Join(home, "filler")); err != nil {
		t.Fatal(err)
	}
	if h := dbHealth(t, a); h.Status != "ok" {
		t.Errorf("health once space is free again: %+v", h)
	}
}

// closedPostgresURL names a PostgreSQL server on a loopback port nobody
// listens on, with a password that must never be shown.
func closedPostgresURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	return fmt.Sprintf("postgres://tuitbot:pw-kept-secret@127.0.0.1:%d/tuitbot", port)
}

// TestAnotherHomesDatabaseIsRefused copies home B's database, with the
// identity file beside it, into home A: A must not take B's history for
// its own (its limits and duplicate windows would restart on B's), so it
// refuses to start and names the fix, which binds the database to A.
func TestAnotherHomesDatabaseIsRefused(t *testing.T) {
	homeA, homeB := t.TempDir(), t.TempDir()
	cfgA, cfgB := testConfig(t, homeA), testConfig(t, homeB)
	for _, cfg := range []*config.Config{cfgA, cfgB} {
		a, err := app.New(context.Background(), cfg, app.Options{SkipX: true, RequireDB: true})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := a.DB.Exec(`INSERT INTO action_log (action_type, message, created_at) VALUES ('probe', ?, ?)`, cfg.Home, store.FormatTime(time.Now())); err != nil {
			t.Fatal(err)
		}
		a.Close()
	}
	for _, name := range []string{"tuitbot.db", "tuitbot.db.id"} {
		b, err := os.ReadFile(filepath.Join(homeB, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(homeA, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	a, err := app.New(context.Background(), cfgA, app.Options{SkipX: true, RequireDB: true})
	if err == nil {
		a.Close()
		t.Fatal("home A started on home B's database")
	}
	for _, want := range []string{"another tuitbot home", "home.id", store.AcceptNewDatabaseFlag} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("refusal %q does not mention %q", err, want)
		}
	}

	// The named fix binds the database to home A, and it stays bound.
	a = newApp(t, cfgA, app.Options{RequireDB: true, AcceptNewDatabase: true})
	var who string
	if err := a.DB.QueryRow(`SELECT message FROM action_log WHERE action_type = 'probe'`).Scan(&who); err != nil || who != homeB {
		t.Fatalf("adopted database holds %q (%v), want home B's history", who, err)
	}
	a.Close()
	a = newApp(t, cfgA, app.Options{RequireDB: true})
	a.Close()
}

// TestHomeWithoutHomeIDUpgrades: a home from before home ids keeps its
// database; the first start writes home.id and binds the database to it.
func TestHomeWithoutHomeIDUpgrades(t *testing.T) {
	home := t.TempDir()
	cfg := testConfig(t, home)
	newApp(t, cfg, app.Options{RequireDB: true}).Close()
	idFile := filepath.Join(home, "home.id")
	if err := os.Remove(idFile); err != nil {
		t.Fatalf("the first start wrote no home.id: %v", err)
	}
	raw, err := sql.Open("sqlite", cfg.DBFile())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec(`DELETE FROM db_homes`); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	newApp(t, cfg, app.Options{RequireDB: true}).Close()
	st, err := os.Stat(idFile)
	if err != nil {
		t.Fatalf("an upgraded home has no home.id: %v", err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("home.id mode %o, want 600", st.Mode().Perm())
	}
	newApp(t, cfg, app.Options{RequireDB: true}).Close()
}

// TestXLoginProblem: a home without a token says how to log in; with a
// private token file it says nothing; a token others can read is named.
func TestXLoginProblem(t *testing.T) {
	home := t.TempDir()
	cfg := testConfig(t, home)
	a := newApp(t, cfg, app.Options{})
	if p := a.XLoginProblem(); !strings.Contains(p, "tuitbot auth") {
		t.Fatalf("no token: %q, want the command that logs in", p)
	}
	path := cfg.TokenFileFor(a.Account)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	if p := a.XLoginProblem(); p != "" {
		t.Fatalf("with a token file: %q, want none", p)
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if p := a.XLoginProblem(); !strings.Contains(p, "readable by others") {
		t.Fatalf("a token others can read: %q", p)
	}
}
