package xauth

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/clock"
)

// Environment of the helper process: when helperEnv is set the test binary
// acts as a second tuitbot process that asks for an access token.
const (
	helperEnv      = "TUITBOT_XAUTH_HELPER"
	helperPathEnv  = "TUITBOT_XAUTH_HELPER_PATH"
	helperURLEnv   = "TUITBOT_XAUTH_HELPER_TOKEN_URL"
	helperIDEnv    = "TUITBOT_XAUTH_HELPER_CLIENT_ID"
	helperReadyMsg = "READY"
	// helperWaitingMsg is printed when the helper finds the token busy and
	// starts waiting for it.
	helperWaitingMsg = "WAITING"
)

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) == "1" {
		os.Exit(helperMain())
	}
	os.Exit(m.Run())
}

// helperMain prints READY, asks for an access token, and prints a hash of
// it (never the value) or the error code. It prints WAITING when it has to
// wait for the token.
func helperMain() int {
	m, err := NewManager(Options{
		ClientID:  os.Getenv(helperIDEnv),
		TokenURL:  os.Getenv(helperURLEnv),
		TokenPath: os.Getenv(helperPathEnv),
		onWait:    func() { fmt.Println(helperWaitingMsg) },
	})
	if err != nil {
		fmt.Println("ERROR", apperr.CodeOf(err))
		return 1
	}
	fmt.Println(helperReadyMsg)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	tok, err := m.AccessToken(ctx)
	if err != nil {
		fmt.Println("ERROR", apperr.CodeOf(err))
		return 1
	}
	fmt.Println("TOKEN", tokenHash(tok))
	return 0
}

func tokenHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:8])
}

type helperProc struct {
	cmd    *exec.Cmd
	lines  chan string
	stderr *bytes.Buffer
}

func startHelper(t *testing.T, fx *fakeX, path string) *helperProc {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(),
		helperEnv+"=1",
		helperPathEnv+"="+path,
		helperURLEnv+"="+fx.tokenURL(),
		helperIDEnv+"="+fx.clientID,
	)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &helperProc{cmd: cmd, lines: make(chan string, 8), stderr: &bytes.Buffer{}}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
		close(p.lines)
	}()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	return p
}

// next returns the helper's next output line.
func (p *helperProc) next(t *testing.T, within time.Duration) string {
	t.Helper()
	select {
	case l, ok := <-p.lines:
		if !ok {
			p.cmd.Wait()
			t.Fatalf("helper exited early; stderr:\n%s", p.stderr)
		}
		return l
	case <-time.After(within):
		t.Fatalf("helper printed nothing within %s; stderr:\n%s", within, p.stderr)
		return ""
	}
}

func (p *helperProc) finish(t *testing.T) string {
	t.Helper()
	line := p.next(t, 20*time.Second)
	if err := p.cmd.Wait(); err != nil {
		t.Fatalf("helper failed (%v) after %q; stderr:\n%s", err, line, p.stderr)
	}
	return line
}

func TestCrossProcessRefreshWaitsForTheLock(t *testing.T) {
	fx := newFakeX(t)
	path := filepath.Join(t.TempDir(), "tokens.json")
	clk := clock.NewFake(time.Now())
	seed(t, fx, path, clk, -time.Minute) // expired: the helper must refresh

	unlock, err := lockTokenFile(context.Background(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	locked := true
	defer func() {
		if locked {
			unlock()
		}
	}()
	h := startHelper(t, fx, path)
	if l := h.next(t, 20*time.Second); l != helperReadyMsg {
		t.Fatalf("helper said %q", l)
	}
	if l := h.next(t, 20*time.Second); l != helperWaitingMsg {
		t.Fatalf("helper said %q, want it to wait for the lock", l)
	}
	if n := fx.refreshCalls.Load(); n != 0 {
		t.Fatalf("the other process refreshed %d times while this one held the lock", n)
	}
	select {
	case l := <-h.lines:
		t.Fatalf("the other process finished while the lock was held: %q", l)
	default:
	}

	// Act as the process that refreshes: write a new pair under the lock.
	at, rt := fx.issue()
	fresh := &Token{AccessToken: at, RefreshToken: rt, TokenType: "bearer", ExpiresAt: time.Now().Add(2 * time.Hour).UTC().Truncate(time.Second), Scopes: DefaultScopes()}
	if _, err := writeTokenFile(path, fresh); err != nil {
		t.Fatal(err)
	}
	unlock()
	locked = false

	got := h.finish(t)
	if got != "TOKEN "+tokenHash(fresh.AccessToken) {
		t.Fatalf("helper ended with %q, want the token written under the lock", got)
	}
	if n := fx.refreshCalls.Load(); n != 0 {
		t.Errorf("refresh calls = %d, want 0: the waiting process must adopt the new token", n)
	}
}

func TestCrossProcessConcurrentRefreshSpendsOnce(t *testing.T) {
	fx := newFakeX(t)
	// The first refresh is held at X until the other process is blocked
	// behind it, so the two really contend.
	arrived, release := fx.holdRefreshes(t)
	path := filepath.Join(t.TempDir(), "tokens.json")
	clk := clock.NewFake(time.Now())
	old := seed(t, fx, path, clk, -time.Minute)

	h := startHelper(t, fx, path)
	if l := h.next(t, 20*time.Second); l != helperReadyMsg {
		t.Fatalf("helper said %q", l)
	}
	o := fx.options(path)
	waits := make(chan struct{}, 8)
	o.onWait = func() { waits <- struct{}{} }
	m, err := NewManager(o)
	if err != nil {
		t.Fatal(err)
	}
	type result struct {
		tok string
		err error
	}
	done := make(chan result, 1)
	go func() {
		tok, err := m.AccessToken(context.Background())
		done <- result{tok, err}
	}()
	// Whichever process got the lock refreshes; the other one waits,
	// reported by this process's onWait or the helper's WAITING line.
	refreshes, waiting := 0, 0
	timeout := time.After(20 * time.Second)
	for refreshes < 1 || waiting < 1 {
		select {
		case <-arrived:
			if refreshes++; refreshes > 1 {
				t.Fatal("both processes sent a refresh to X")
			}
		case <-waits:
			waiting++
		case l, ok := <-h.lines:
			if !ok || l != helperWaitingMsg {
				t.Fatalf("helper said %q (open: %t) before the refresh finished; stderr:\n%s", l, ok, h.stderr)
			}
			waiting++
		case <-timeout:
			t.Fatalf("%d refreshes held and %d processes waiting, want 1 and 1", refreshes, waiting)
		}
	}
	release()
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	mine := r.tok
	theirs := h.finish(t)
	if theirs != "TOKEN "+tokenHash(mine) {
		t.Fatalf("processes ended with different tokens (%q vs %s)", theirs, tokenHash(mine))
	}
	if mine == old.AccessToken {
		t.Fatal("token was not refreshed")
	}
	if uses, fails := fx.refreshUses.Load(), fx.refreshFails.Load(); uses != 1 || fails != 0 {
		t.Fatalf("refresh uses = %d, failures = %d; want exactly one use across processes", uses, fails)
	}
	if strings.Contains(h.stderr.String(), mine) {
		t.Error("helper wrote the token to stderr")
	}
}
