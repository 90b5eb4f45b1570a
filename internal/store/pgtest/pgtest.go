// Package pgtest gives tests a real PostgreSQL server.
//
// A test asks for a database with NewDatabase. The server is the one named
// by TUITBOT_TEST_POSTGRES_URL or, when that is unset and initdb and pg_ctl
// are installed, a throwaway cluster this package starts on the loopback
// interface: initdb into a temporary directory, a free port, its socket in
// the same directory. Main stops that cluster when the tests end, and a
// watchdog stops it when the test process dies without reaching Main's end
// (a timeout's SIGKILL, say). With
// neither, the tests that need PostgreSQL skip and say how to run them,
// unless TUITBOT_REQUIRE_POSTGRES is set (CI sets it), which turns the skip
// into a failure.
package pgtest

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver
)

// EnvURL names the server tests use instead of starting their own: a
// superuser (or a role with CREATEDB) URL such as
// postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable.
const EnvURL = "TUITBOT_TEST_POSTGRES_URL"

// EnvRequire makes a missing server a test failure instead of a skip.
const EnvRequire = "TUITBOT_REQUIRE_POSTGRES"

// HowTo says how to run the PostgreSQL tests; skips and failures quote it.
const HowTo = "set " + EnvURL + "=postgres://USER@127.0.0.1:PORT/postgres?sslmode=disable " +
	"or install PostgreSQL's initdb and pg_ctl (Debian: apt-get install -y postgresql) so the tests start a throwaway cluster"

var (
	mu       sync.Mutex
	started  *cluster
	adminURL string
	startErr error
	once     bool
	seq      atomic.Int64
	onStop   []func(admin string)
)

// OnStop registers fn to run when Stop runs against a server named by
// EnvURL, given its URL: a helper that keeps databases beyond one test
// drops them there.
func OnStop(fn func(admin string)) {
	mu.Lock()
	defer mu.Unlock()
	onStop = append(onStop, fn)
}

// Main runs the tests and then stops the cluster they started, if any.
// Call it from TestMain: os.Exit(pgtest.Main(m)).
func Main(m *testing.M) int {
	code := m.Run()
	Stop()
	return code
}

// Stop stops the throwaway cluster, if one was started, and removes its
// directory.
func Stop() {
	mu.Lock()
	defer mu.Unlock()
	// The throwaway cluster takes its databases with it; a server named
	// by EnvURL keeps them unless dropped.
	if admin := os.Getenv(EnvURL); admin != "" {
		for _, fn := range onStop {
			fn(admin)
		}
	}
	onStop = nil
	if started != nil {
		started.stop()
		started = nil
	}
	once, adminURL, startErr = false, "", nil
}

// Available reports whether a server can be had, without starting one.
func Available() bool {
	if os.Getenv(EnvURL) != "" {
		return true
	}
	_, _, err := binaries()
	return err == nil
}

// ServerURL returns the admin URL of the test server, starting the
// throwaway cluster on first use. It skips t (or fails it, under
// TUITBOT_REQUIRE_POSTGRES) when there is no server to be had, and fails
// it when the cluster cannot start.
func ServerURL(t testing.TB) string {
	t.Helper()
	u, err := serverURL()
	if errors.Is(err, errUnavailable) {
		if os.Getenv(EnvRequire) != "" {
			t.Fatalf("%s is set but there is no PostgreSQL to test against: %s", EnvRequire, HowTo)
		}
		t.Skipf("no PostgreSQL for this test: %s", HowTo)
	}
	if err != nil {
		t.Fatalf("start the test PostgreSQL: %v", err)
	}
	return u
}

var errUnavailable = errors.New("no PostgreSQL server available")

func serverURL() (string, error) {
	if u := os.Getenv(EnvURL); u != "" {
		return u, nil
	}
	mu.Lock()
	defer mu.Unlock()
	if !once {
		once = true
		initdb, pgctl, err := binaries()
		if err != nil {
			startErr = errUnavailable
		} else {
			started, startErr = start(initdb, pgctl)
			if startErr == nil {
				adminURL = started.url
			}
		}
	}
	return adminURL, startErr
}

// NewDatabase creates an empty database on the test server (a copy of
// template when it is not empty), drops it when t ends, and returns its
// URL.
func NewDatabase(t testing.TB, template string) string {
	t.Helper()
	admin := ServerURL(t)
	name := fmt.Sprintf("tuitbot_test_%d_%d", os.Getpid(), seq.Add(1))
	if err := CreateDatabase(context.Background(), admin, name, template); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := DropDatabase(context.Background(), admin, name); err != nil {
			t.Errorf("drop test database: %v", err)
		}
	})
	return WithDatabase(admin, name)
}

// CreateDatabase creates name on the server at admin, as a copy of
// template when that is not empty.
func CreateDatabase(ctx context.Context, admin, name, template string) error {
	db, err := sql.Open("pgx", admin)
	if err != nil {
		return fmt.Errorf("connect to the test PostgreSQL: %w", err)
	}
	defer db.Close()
	q := "CREATE DATABASE " + quoteIdent(name)
	if template != "" {
		q += " TEMPLATE " + quoteIdent(template)
	}
	if _, err := db.ExecContext(ctx, q); err != nil {
		return fmt.Errorf("create test database %s: %w", name, err)
	}
	return nil
}

// DropDatabase drops name, ending its remaining sessions first.
func DropDatabase(ctx context.Context, admin, name string) error {
	db, err := sql.Open("pgx", admin)
	if err != nil {
		return err
	}
	defer db.Close()
	_, err = db.ExecContext(ctx, "DROP DATABASE IF EXISTS "+quoteIdent(name)+" WITH (FORCE)")
	return err
}

// WithDatabase returns u with its database replaced by name.
func WithDatabase(u, name string) string {
	p, err := url.Parse(u)
	if err != nil {
		return u
	}
	p.Path = "/" + name
	return p.String()
}

func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// binaries finds initdb and pg_ctl on PATH or, as Debian installs them,
// under /usr/lib/postgresql/<version>/bin (the newest version).
func binaries() (initdb, pgctl string, err error) {
	if i, err1 := exec.LookPath("initdb"); err1 == nil {
		if p, err2 := exec.LookPath("pg_ctl"); err2 == nil {
			return i, p, nil
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	for _, d := range dirs {
		i, p := filepath.Join(d, "initdb"), filepath.Join(d, "pg_ctl")
		if isExec(i) && isExec(p) {
			return i, p, nil
		}
	}
	return "", "", errUnavailable
}

func version(binDir string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return v
}

func isExec(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir() && st.Mode()&0o111 != 0
}

type cluster struct {
	dir, pgctl, url string
	runAs           *user.User
	// watchdog is the write end of the watchdog's pipe (see watch);
	// closing it, or this process dying, stops the cluster.
	watchdog *os.File
}

// start creates and starts a cluster. PostgreSQL refuses to run as root,
// so as root (CI containers) the cluster belongs to the "postgres" user
// the Debian package creates, and its commands run through runuser.
func start(initdb, pgctl string) (*cluster, error) {
	c := &cluster{pgctl: pgctl}
	dir, err := os.MkdirTemp("", "tuitbot-pg-")
	if err != nil {
		return nil, err
	}
	c.dir = dir
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("running as root and there is no postgres user to run the cluster as (PostgreSQL refuses root): %w", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
		c.runAs = u
	}
	data := filepath.Join(dir, "data")
	if out, err := c.run(initdb, "-D", data, "-U", "tuitbot", "--auth=trust", "--encoding=UTF8", "--locale=C", "--no-sync"); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("initdb: %w: %s", err, out)
	}
	// The port is picked by the kernel and released just before the server
	// binds it; another process taking it in between is retried.
	var lastErr error
	for range 5 {
		port, err := freePort()
		if err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
		// Small shared buffers: every test session is a process forked
		// from the server, and a smaller shared memory makes each fork
		// and exit cheaper; the test databases are a few megabytes.
		opts := fmt.Sprintf("-c listen_addresses=127.0.0.1 -p %d -k %s -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=300 -c shared_buffers=16MB", port, dir)
		out, err := c.run(pgctl, "start", "-w", "-t", "60", "-D", data, "-l", filepath.Join(dir, "server.log"), "-o", opts)
		if err == nil {
			c.url = fmt.Sprintf("postgres://tuitbot@127.0.0.1:%d/postgres?sslmode=disable", port)
			if c.watchdog, err = c.watch(); err != nil {
				c.stop()
				return nil, err
			}
			return c, nil
		}
		log, _ := os.ReadFile(filepath.Join(dir, "server.log"))
		lastErr = fmt.Errorf("pg_ctl start: %w: %s\n%s", err, out, log)
		if !bytes.Contains(log, []byte("in use")) {
			break
		}
	}
	os.RemoveAll(dir)
	return nil, lastErr
}

func (c *cluster) run(bin string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var cmd *exec.Cmd
	if c.runAs != nil {
		cmd = exec.CommandContext(ctx, "runuser", append([]string{"-u", c.runAs.Username, "--", bin}, args...)...)
	} else {
		cmd = exec.CommandContext(ctx, bin, args...)
	}
	// pg_ctl start leaves the server running with these descriptors; a
	// file instead of a pipe lets CombinedOutput return.
	out, err := os.CreateTemp("", "tuitbot-pg-out-")
	if err != nil {
		return nil, err
	}
	defer os.Remove(out.Name())
	defer out.Close()
	cmd.Stdout, cmd.Stderr = out, out
	cmd.Dir = c.dir
	err = cmd.Run()
	b, _ := os.ReadFile(out.Name())
	return b, err
}

func (c *cluster) stop() {
	_, _ = c.run(c.pgctl, "stop", "-m", "fast", "-w", "-D", filepath.Join(c.dir, "data"))
	_ = os.RemoveAll(c.dir)
	if c.watchdog != nil {
		_ = c.watchdog.Close()
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
