package main

import (
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestDoctorExitsThreeWhenDegraded: a degraded service (here: no room
// can be reserved for audit records) exits 3, apart from failure (1) and
// health (0); --json carries the same verdict.
func TestDoctorExitsThreeWhenDegraded(t *testing.T) {
	h := newHome(t)
	h.ok(t, "doctor") // a fresh home: nothing degraded, not_configured is fine
	if err := os.Remove(h.path("tuitbot.db.reserve")); err != nil {
		t.Fatal(err)
	}
	// A directory where the reserve file goes: the reserve cannot be made.
	if err := os.MkdirAll(h.path("tuitbot.db.reserve/blocked"), 0o700); err != nil {
		t.Fatal(err)
	}
	r := h.run(t, "doctor")
	if r.code != 3 {
		t.Fatalf("degraded doctor: exit %d, want 3\n%s", r.code, r)
	}
	mustContain(t, "doctor", r.stdout, "degraded")
	mustContain(t, "doctor stderr", r.stderr, "degraded services: database")

	r = h.run(t, "doctor", "--json")
	if r.code != 3 {
		t.Fatalf("degraded doctor --json: exit %d, want 3\n%s", r.code, r)
	}
	var rep DoctorReport
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("doctor --json: %v\n%s", err, r.stdout)
	}
	if rep.Status != "degraded" || rep.Services["database"] != "degraded" {
		t.Errorf("doctor --json = %+v, want status and database degraded", rep)
	}
}

// TestTopLevelEnvTypoIsAnError: a misspelt top-level variable stops every
// command with the right name, as a misspelt section key does.
func TestTopLevelEnvTypoIsAnError(t *testing.T) {
	h := newHome(t).with("TUITBOT_APROVAL_MODE=false")
	r := h.fails(t, "config", "show")
	mustContain(t, "config show", r.stderr, "TUITBOT_APROVAL_MODE", "did you mean TUITBOT_APPROVAL_MODE?")
	// What MCP clients read the bearer token from is not a typo.
	newHome(t).with("TUITBOT_MCP_TOKEN=abc").ok(t, "config", "show")
}

var (
	emulatorURL  = regexp.MustCompile(`X emulator listening on (http://\S+)`)
	authorizeURL = regexp.MustCompile(`(http://\S+/i/oauth2/authorize\?\S+)`)
)

// TestAuthSuccessIsASentence: a login against the emulator ends with a
// sentence saying what happened, not a Go struct, and no token value.
func TestAuthSuccessIsASentence(t *testing.T) {
	h := newHome(t)
	xsim := exec.Command(binPath, "xsim", "serve", "--listen", "127.0.0.1:0")
	xout := startServer(t, xsim, h.env)
	m := xout.waitFor(emulatorURL, 20*time.Second)
	if m == nil {
		t.Fatalf("the emulator did not start:\n%s", xout)
	}
	base := m[1]
	auth := exec.Command(binPath, "auth", "--timeout", "30s")
	env := append(append([]string{}, h.env...),
		"TUITBOT_X_API__CLIENT_ID=xsim-sandbox-client",
		"TUITBOT_X_API__AUTHORIZE_URL="+base+"/i/oauth2/authorize",
		"TUITBOT_X_API__TOKEN_URL="+base+"/2/oauth2/token",
		"TUITBOT_X_API__CALLBACK_ADDR=127.0.0.1:0")
	var stdout syncBuffer
	stderr := &syncBuffer{}
	auth.Env = env
	auth.Stdout, auth.Stderr = &stdout, stderr
	if err := auth.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if auth.ProcessState == nil {
			_ = auth.Process.Kill()
			_ = auth.Wait()
		}
	})
	u := stderr.waitFor(authorizeURL, 20*time.Second)
	if u == nil {
		t.Fatalf("auth printed no authorize URL:\n%s", stderr)
	}
	// The emulator approves at once and redirects to the callback listener.
	res, err := http.Get(u[1])
	if err != nil {
		t.Fatalf("following the authorize URL: %v", err)
	}
	res.Body.Close()
	if err := waitExit(t, auth, stderr); err != nil {
		t.Fatalf("auth: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr)
	}
	out := stdout.String()
	mustContain(t, "auth output", out, "Logged in to X.", "tokens are saved in "+h.path("tokens.json"), "renewed automatically")
	for _, bad := range []string{"xauth.Token{", "access_token", "[redacted]"} {
		if strings.Contains(out, bad) {
			t.Errorf("auth output has %q:\n%s", bad, out)
		}
	}
}
