package main

import (
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
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
	cmd, stdout, stderr := h.start(t, "web", "--sandbox", "--listen", "127.0.0.1:0")
	c, base, login := webLogin(t, stdout)
	if first, _, _ := strings.Cut(stdout.String(), "\n"); first != login {
		t.Errorf("the first stdout line is %q, want the login URL", first)
	}
	mustContain(t, "approvals", webGet(t, c, base+"/approvals"), "Demo data: this post waits for your approval", "<dd>demo</dd>")
	mustContain(t, "audit", webGet(t, c, base+"/audit"), "x_post_tweet", `class="status-success"`)
	// One follower count says so rather than drawing a lone dot; the two
	// approved posts are bars.
	mustContain(t, "analytics", webGet(t, c, base+"/analytics"), "One count so far (", `<rect class="bar"`)
	if strings.Contains(stderr.String(), strings.TrimPrefix(login, base+"/login?token=")) {
		t.Error("the login token was logged")
	}
	waitSignalExit(t, cmd, stderr)
}

// TestMCPServeWebUnderUI: `mcp serve --transport http --web` serves the
// review page under /ui on the MCP port with the same one-time login
// (first stdout line), its cookie scoped to /ui, while the MCP endpoint
// still requires the bearer token.
func TestMCPServeWebUnderUI(t *testing.T) {
	h := newHome(t)
	cmd, stdout, stderr := h.start(t, "mcp", "serve", "--transport", "http", "--web", "--sandbox", "--listen", "127.0.0.1:0")
	addr := waitListening(t, stderr)
	c, base, login := webLogin(t, stdout)
	if base != "http://"+addr+"/ui" {
		t.Fatalf("login URL %s is not under /ui on the MCP port %s", login, addr)
	}
	if first, _, _ := strings.Cut(stdout.String(), "\n"); first != login {
		t.Errorf("the first stdout line is %q, want the login URL", first)
	}
	page := webGet(t, c, base+"/approvals")
	mustContain(t, "approvals under /ui", page, "Demo data: this post waits for your approval",
		`href="/ui/static/app.css"`, `action="/ui/approvals/bulk"`, `<meta name="base" content="/ui">`)
	u, _ := url.Parse(base + "/")
	if len(c.Jar.Cookies(u)) != 1 {
		t.Fatalf("no session cookie for %s", u)
	}
	if root, _ := url.Parse("http://" + addr + "/"); len(c.Jar.Cookies(root)) != 0 {
		t.Error("the session cookie is sent to the MCP endpoint too; want it scoped to /ui")
	}
	// Reused login and a client without the cookie are refused; the MCP
	// endpoint does not take the session instead of the bearer token.
	for _, tc := range []struct {
		url  string
		code int
	}{
		{login, http.StatusForbidden},
		{base + "/approvals", http.StatusUnauthorized},
		{"http://" + addr + "/", http.StatusUnauthorized},
	} {
		resp, err := http.Get(tc.url)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.code {
			t.Errorf("GET %s: %d, want %d", tc.url, resp.StatusCode, tc.code)
		}
	}
	if strings.Contains(stderr.String(), strings.TrimPrefix(login, base+"/login?token=")) {
		t.Error("the login token was logged")
	}
	waitSignalExit(t, cmd, stderr)
}

// TestApprovalLinksListenServesLinksAlone: with approval_links.listen set,
// both servers of the review page (`web` and `mcp serve --web`) answer
// signed links on that address, and nothing else of the page.
func TestApprovalLinksListenServesLinksAlone(t *testing.T) {
	for name, args := range map[string][]string{
		"web":           {"web", "--sandbox", "--listen", "127.0.0.1:0"},
		"mcp serve web": {"mcp", "serve", "--transport", "http", "--web", "--sandbox", "--listen", "127.0.0.1:0"},
	} {
		t.Run(name, func(t *testing.T) {
			h := newHome(t)
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			links := ln.Addr().String()
			ln.Close()
			_, _, stderr := h.with("TUITBOT_APPROVAL_LINKS__ENABLED=true",
				"TUITBOT_APPROVAL_LINKS__LISTEN="+links,
				"TUITBOT_NOTIFY__PUBLIC_BASE_URL=http://"+links).start(t, args...)
			if stderr.waitFor(regexp.MustCompile(`approval links listening`), 30*time.Second) == nil {
				t.Fatalf("no links listener\nstderr:\n%s", stderr)
			}
			get := func(path string) *http.Response {
				t.Helper()
				resp, err := http.Get("http://" + links + path)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				return resp
			}
			// A forged token: the link handler's own 404, with its headers.
			if r := get("/a/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"); r.StatusCode != http.StatusNotFound || r.Header.Get("X-Robots-Tag") == "" {
				t.Errorf("/a/ on the links address: %d, X-Robots-Tag %q; want the link handler's 404", r.StatusCode, r.Header.Get("X-Robots-Tag"))
			}
			for _, p := range []string{"/", "/approvals", "/ui/", "/mcp"} {
				if r := get(p); r.StatusCode != http.StatusNotFound || r.Header.Get("X-Robots-Tag") != "" {
					t.Errorf("%s on the links address: %d; want a plain 404, nothing of the page", p, r.StatusCode)
				}
			}
		})
	}
}

// start runs tuitbot with args in h until the test ends, collecting its
// output; for the servers, which run until stopped.
func (h *home) start(t *testing.T, args ...string) (*exec.Cmd, *syncBuffer, *syncBuffer) {
	t.Helper()
	cmd := exec.Command(binPath, args...)
	stdout, stderr := &syncBuffer{}, &syncBuffer{}
	cmd.Env, cmd.Stdout, cmd.Stderr = h.env, stdout, stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	return cmd, stdout, stderr
}
