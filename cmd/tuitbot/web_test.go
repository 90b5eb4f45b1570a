package main

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"
)

// loginURLLine is the login URL the review page prints.
var loginURLLine = regexp.MustCompile(`(?m)^(http://127\.0\.0\.1:\d+(/ui)?)/login\?token=[0-9a-f]+$`)

// webLogin waits for the login URL in out, opens it with a fresh cookie
// jar and returns the logged-in client, the base URL and the login URL.
func webLogin(t *testing.T, out *syncBuffer) (*http.Client, string, string) {
	t.Helper()
	m := out.waitFor(loginURLLine, 30*time.Second)
	if m == nil {
		t.Fatalf("no login URL printed\noutput:\n%s", out)
	}
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	resp, err := c.Get(m[0])
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("login: %d at %s", resp.StatusCode, resp.Request.URL)
	}
	return c, m[1], m[0]
}

func webGet(t *testing.T, c *http.Client, url string) string {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d\n%s", url, resp.StatusCode, b)
	}
	return string(b)
}

// TestWebSandboxShowsDemoWorld: `tuitbot web --sandbox` on a fresh home
// prints the login URL first and shows a populated demo world.
func TestWebSandboxShowsDemoWorld(t *testing.T) {
	h := newHome(t)
	cmd := exec.Command(binPath, "web", "--sandbox", "--listen", "127.0.0.1:0")
	var stdout syncBuffer
	stderr := &syncBuffer{}
	cmd.Env, cmd.Stdout, cmd.Stderr = h.env, &stdout, stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	c, base, login := webLogin(t, &stdout)
	if first, _, _ := strings.Cut(stdout.String(), "\n"); first != login {
		t.Errorf("the first stdout line is %q, want the login URL", first)
	}
	mustContain(t, "approvals", webGet(t, c, base+"/approvals"), "Demo data: this post waits for your approval", "<dd>demo</dd>")
	mustContain(t, "audit", webGet(t, c, base+"/audit"), "x_post_tweet", `class="status-success"`)
	mustContain(t, "analytics", webGet(t, c, base+"/analytics"), `<circle class="dot"`)
	if strings.Contains(stderr.String(), strings.TrimPrefix(login, base+"/login?token=")) {
		t.Error("the login token was logged")
	}
	waitSignalExit(t, cmd, stderr)
}
