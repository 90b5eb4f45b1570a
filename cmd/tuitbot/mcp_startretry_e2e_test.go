//go:build e2e

package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	_ "modernc.org/sqlite"

	"github.com/tuitbot/tuitbot/internal/store/pgtest"
)

// startEnvelope is a tool answer as these tests read it.
type startEnvelope struct {
	Success bool `json:"success"`
	Error   *struct {
		Code      string `json:"code"`
		Message   string `json:"message"`
		Retryable bool   `json:"retryable"`
	} `json:"error"`
}

// servingProc is `mcp serve` on one transport.
type servingProc interface {
	// call calls a tool without arguments.
	call(t *testing.T, name string) startEnvelope
	// health is what GET /healthz answers; stdio serves none (0).
	health(t *testing.T) int
	logs() *syncBuffer
	stop(t *testing.T)
}

// startServing starts `mcp serve` in home h on transport (stdio or http,
// to which args are added) and initializes a session: neither needs the
// database.
func startServing(t *testing.T, h *home, transport string, args ...string) servingProc {
	t.Helper()
	if transport == "stdio" {
		p := startStdio(t, h)
		p.initialize(t)
		return &stdioServing{p: p, id: 100}
	}
	const token = "start-retry-token-0123456789abcdef"
	tokenFile := h.path("http_token")
	if err := os.WriteFile(tokenFile, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(binPath, append([]string{"mcp", "serve", "--transport", "http", "--listen", "127.0.0.1:0", "--token-file", tokenFile}, args...)...)
	out := startServer(t, cmd, h.env)
	addr := waitListening(t, out)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	hc := &http.Client{Transport: authTransport{token: token, base: http.DefaultTransport}}
	client := mcp.NewClient(&mcp.Implementation{Name: "start-retry", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: "http://" + addr + "/", HTTPClient: hc, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatalf("connect: %v\nserver:\n%s", err, out)
	}
	return &httpServing{cmd: cmd, out: out, addr: addr, cs: cs}
}

type stdioServing struct {
	p  *stdioProc
	id int
}

func (s *stdioServing) call(t *testing.T, name string) startEnvelope {
	t.Helper()
	s.id++
	s.p.send(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":{}}}`, s.id, name))
	r := s.p.next(t, name)
	if string(r.ID) != fmt.Sprint(s.id) || r.Error != nil {
		t.Fatalf("%s reply %+v\nstderr:\n%s", name, r, s.p.stderr)
	}
	var res mcp.CallToolResult
	if err := json.Unmarshal(r.Result, &res); err != nil {
		t.Fatal(err)
	}
	return decodeStartEnvelope(t, &res)
}

func (s *stdioServing) health(*testing.T) int { return 0 }
func (s *stdioServing) logs() *syncBuffer     { return s.p.stderr }
func (s *stdioServing) stop(t *testing.T)     { s.p.stop(t) }

type httpServing struct {
	cmd  *exec.Cmd
	out  *syncBuffer
	addr string
	cs   *mcp.ClientSession
}

func (s *httpServing) call(t *testing.T, name string) startEnvelope {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := s.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: map[string]any{}})
	if err != nil {
		t.Fatalf("%s: %v\nserver:\n%s", name, err, s.out)
	}
	return decodeStartEnvelope(t, res)
}

func (s *httpServing) health(t *testing.T) int {
	t.Helper()
	return s.get(t, "/healthz")
}

// get is the status of GET path, without the bearer token.
func (s *httpServing) get(t *testing.T, path string) int {
	t.Helper()
	res, err := http.Get("http://" + s.addr + path)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer res.Body.Close()
	_, _ = io.Copy(io.Discard, res.Body)
	return res.StatusCode
}

func (s *httpServing) logs() *syncBuffer { return s.out }

func (s *httpServing) stop(t *testing.T) {
	t.Helper()
	s.cs.Close()
	waitSignalExit(t, s.cmd, s.out)
}

func decodeStartEnvelope(t *testing.T, res *mcp.CallToolResult) startEnvelope {
	t.Helper()
	if len(res.Content) != 1 {
		t.Fatalf("%d content items", len(res.Content))
	}
	var env startEnvelope
	if err := json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &env); err != nil {
		t.Fatal(err)
	}
	return env
}

// wantDBError checks that a call answered db_error, which an agent may
// try again.
func wantDBError(t *testing.T, s servingProc, what string) {
	t.Helper()
	env := s.call(t, "get_recent_mutations")
	if env.Success || env.Error == nil || env.Error.Code != "db_error" || !env.Error.Retryable {
		t.Fatalf("a call %s: %+v, want db_error (retryable)\nlogs:\n%s", what, env.Error, s.logs())
	}
}

func wantSuccess(t *testing.T, s servingProc, what string) {
	t.Helper()
	if env := s.call(t, "get_recent_mutations"); !env.Success {
		t.Fatalf("a call %s: %+v\nlogs:\n%s", what, env.Error, s.logs())
	}
}

// servicesBack is the line a server logs once its services start after
// the database was unavailable.
var servicesBack = regexp.MustCompile(`database available again`)

var transports = []string{"stdio", "http"}

// TestServeHTTPKeepsServingWhileTheDatabaseIsDown: `mcp serve --transport
// http` (with or without --web) starts while its PostgreSQL server cannot
// be reached. It listens anyway, behind its bearer token: /healthz says
// degraded, every tool call answers db_error (retryable) while the server
// tries again, the review page says 503, and once the database is
// reachable the services start, the same call succeeds, /healthz says ok
// and the review page's login URL is printed and opens it.
func TestServeHTTPKeepsServingWhileTheDatabaseIsDown(t *testing.T) {
	for name, args := range map[string][]string{"mcp": nil, "mcp and review page": {"--web"}} {
		t.Run(name, func(t *testing.T) {
			proxy := pgtest.NewProxy(t, pgtest.NewDatabase(t, ""))
			proxy.Refuse(true)
			h := newHome(t)
			writeDatabaseURL(t, h, proxy.URL())
			s := startServing(t, h, "http", args...).(*httpServing)
			if code := s.health(t); code != http.StatusServiceUnavailable {
				t.Fatalf("/healthz while the database is down: %d, want 503\nlogs:\n%s", code, s.logs())
			}
			wantDBError(t, s, "while the database is down")
			wantDBError(t, s, "again while the database is down")
			if args != nil {
				if code := s.get(t, "/ui/approvals"); code != http.StatusServiceUnavailable {
					t.Fatalf("the review page while the database is down: %d, want 503", code)
				}
				if loginURLLine.MatchString(s.logs().String()) {
					t.Fatal("a login URL was printed before the review page exists")
				}
			}
			if proxy.Refused() == 0 {
				t.Fatal("the server never tried to reach the database")
			}
			proxy.Refuse(false)
			if s.logs().waitFor(servicesBack, 60*time.Second) == nil {
				t.Fatalf("the services did not start once the database was back\nlogs:\n%s", s.logs())
			}
			wantSuccess(t, s, "after the database came back")
			if code := s.health(t); code != http.StatusOK {
				t.Fatalf("/healthz after the database came back: %d, want 200\nlogs:\n%s", code, s.logs())
			}
			if args != nil {
				c, base, _ := webLogin(t, s.logs())
				if base != "http://"+s.addr+"/ui" {
					t.Fatalf("login URL base %s, want the review page on %s", base, s.addr)
				}
				webGet(t, c, base+"/approvals")
			}
			s.stop(t)
		})
	}
}

// TestServeSurvivesDroppedConnectionsWhileStarting: PostgreSQL drops one
// connection as the database is opened (reading its identity) and one as
// the gateway reads the stored policy limits to sync them ("policy
// counters: sync limits failed: driver: bad connection"). The start is
// tried again like any transient database error; the server does not stop
// and the call succeeds, on either transport.
func TestServeSurvivesDroppedConnectionsWhileStarting(t *testing.T) {
	for _, transport := range transports {
		t.Run(transport, func(t *testing.T) {
			proxy := pgtest.NewProxy(t, pgtest.NewDatabase(t, ""))
			h := newHome(t)
			writeDatabaseURL(t, h, proxy.URL())
			// Created first, so that the cuts below fall on the start
			// under test.
			first := startServing(t, h, transport)
			wantSuccess(t, first, "on a new database")
			first.stop(t)

			proxy.CutOn("FROM db_identity WHERE singleton", 1)
			proxy.CutOn("period_seconds FROM policy_counters", 1)
			s := startServing(t, h, transport)
			wantSuccess(t, s, "after two dropped connections")
			if proxy.Cut() != 2 {
				t.Fatalf("the proxy cut %d connections, want 2\nlogs:\n%s", proxy.Cut(), s.logs())
			}
			s.stop(t)
		})
	}
}

// TestServeKeepsServingWhileSQLiteIsLocked: another process holds the
// SQLite database's write lock (a long write, a backup, a sqlite3 shell
// left in a transaction) past the busy timeout while `mcp serve` starts.
// That is SQLITE_BUSY, which passes once the lock is released: the server
// keeps serving, answers db_error (retryable) and, over HTTP, degraded on
// /healthz, and starts its services as soon as the lock is released.
func TestServeKeepsServingWhileSQLiteIsLocked(t *testing.T) {
	for _, transport := range transports {
		t.Run(transport, func(t *testing.T) {
			h := newHome(t)
			first := startServing(t, h, "stdio")
			wantSuccess(t, first, "on a new database")
			first.stop(t)

			release := holdWriteLock(t, h.path("tuitbot.db"))
			s := startServing(t, h, transport)
			if s.logs().waitFor(regexp.MustCompile(`database failed while starting; trying again.*SQLITE_BUSY`), 90*time.Second) == nil {
				t.Fatalf("the start never met the lock\nlogs:\n%s", s.logs())
			}
			wantDBError(t, s, "while another process holds the lock")
			if code := s.health(t); transport == "http" && code != http.StatusServiceUnavailable {
				t.Fatalf("/healthz while the database is locked: %d, want 503", code)
			}
			release()
			if s.logs().waitFor(servicesBack, 60*time.Second) == nil {
				t.Fatalf("the services did not start once the lock was released\nlogs:\n%s", s.logs())
			}
			wantSuccess(t, s, "after the lock was released")
			if code := s.health(t); transport == "http" && code != http.StatusOK {
				t.Fatalf("/healthz after the lock was released: %d, want 200\nlogs:\n%s", code, s.logs())
			}
			s.stop(t)
		})
	}
}

func writeDatabaseURL(t *testing.T, h *home, url string) {
	t.Helper()
	cfg := fmt.Sprintf("[storage]\ndatabase_url = %q\n", url)
	if err := os.WriteFile(h.path("config.toml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
}

// holdWriteLock takes SQLite's write lock on the database at path from
// this process, as another program would, and returns what releases it.
func holdWriteLock(t *testing.T, path string) (release func()) {
	t.Helper()
	ctx := context.Background()
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		db.Close()
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		conn.Close()
		db.Close()
		t.Fatalf("take the write lock: %v", err)
	}
	released := false
	release = func() {
		if released {
			return
		}
		released = true
		if _, err := conn.ExecContext(ctx, "ROLLBACK"); err != nil {
			t.Errorf("release the write lock: %v", err)
		}
		conn.Close()
		db.Close()
	}
	t.Cleanup(release)
	return release
}
