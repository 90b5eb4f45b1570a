//go:build e2e

package e2e

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/tuitbot/tuitbot/internal/browsertest"
	"github.com/tuitbot/tuitbot/internal/store"
	"github.com/tuitbot/tuitbot/internal/store/pgtest"
	"github.com/tuitbot/tuitbot/internal/xauth"
	"github.com/tuitbot/tuitbot/internal/xsim"
)

const e2eHookSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

// hookEvent is one verified webhook delivery.
type hookEvent struct {
	ID   string
	Body struct {
		Type string `json:"type"`
		Data struct {
			ItemID     int64  `json:"item_id"`
			Text       string `json:"text"`
			ViewURL    string `json:"view_url"`
			ApproveURL string `json:"approve_url"`
		} `json:"data"`
	}
}

// phoneHook is the webhook receiver a phone-side service would run: every
// delivery is verified with the Standard Webhooks reference library.
type phoneHook struct {
	srv  *httptest.Server
	mu   sync.Mutex
	seen map[string]int
	got  chan hookEvent
}

func newPhoneHook(t *testing.T) *phoneHook {
	t.Helper()
	wh, err := standardwebhooks.NewWebhook(e2eHookSecret)
	if err != nil {
		t.Fatal(err)
	}
	p := &phoneHook{seen: map[string]int{}, got: make(chan hookEvent, 16)}
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if err := wh.Verify(b, r.Header); err != nil {
			t.Errorf("webhook signature refused: %v", err)
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		var ev hookEvent
		ev.ID = r.Header.Get("webhook-id")
		if err := json.Unmarshal(b, &ev.Body); err != nil {
			t.Errorf("webhook body: %v", err)
		}
		p.mu.Lock()
		p.seen[ev.ID]++
		p.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
		p.got <- ev
	}))
	t.Cleanup(p.srv.Close)
	return p
}

func (p *phoneHook) wait(t *testing.T) hookEvent {
	t.Helper()
	select {
	case ev := <-p.got:
		return ev
	case <-time.After(30 * time.Second):
		t.Fatal("the webhook receiver got nothing")
	}
	return hookEvent{}
}

func (p *phoneHook) deliveries() map[string]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := map[string]int{}
	for k, v := range p.seen {
		out[k] = v
	}
	return out
}

// freePort finds a loopback port for a server that must know its own
// public address before it starts.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// phoneHost is one `tuitbot mcp serve --transport http --web` process with
// notifications and approval links on.
type phoneHost struct {
	addr   string
	cmd    *exec.Cmd
	stderr *lockedBuffer
	done   chan struct{}
	cs     *mcp.ClientSession
}

// startPhoneHost prepares home (config, X login, MCP token, the shared link
// key) and starts its server on port.
func startPhoneHost(t *testing.T, bin, home string, x *sim, dbURL string, port int, hookURL string, key []byte) *phoneHost {
	t.Helper()
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	storage := ""
	if dbURL != "" {
		storage = fmt.Sprintf("[storage]\ndatabase_url = %q\n", dbURL)
	}
	cfg := fmt.Sprintf(`%s
[x_api]
api_base_url = %[2]q
upload_base_url = %[2]q
legacy_upload_base_url = %[2]q
authorize_url = %[3]q
token_url = %[4]q
client_id = %[5]q

[notify]
public_base_url = "http://127.0.0.1:%[6]d"
batch_window_seconds = 0

[approval_links]
enabled = true

[[notify.channels]]
name = "phone"
type = "webhook"
url = %[7]q
secret_env = "TUITBOT_E2E_HOOK_SECRET"

[logging]
level = "debug"
`, storage, x.url, x.url+"/i/oauth2/authorize", x.url+"/2/oauth2/token", xsim.DefaultClientID, port, hookURL)
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	if dbURL == "" {
		db, err := store.Open(context.Background(), filepath.Join(home, "tuitbot.db"), store.Options{})
		if err != nil {
			t.Fatal(err)
		}
		db.Close()
	}
	access, refresh, ttl := x.IssueToken(x.DemoUserID(), x.AllScopes())
	tok := &xauth.Token{AccessToken: access, RefreshToken: refresh, TokenType: "bearer", ExpiresAt: time.Now().Add(ttl), Scopes: x.AllScopes()}
	if err := xauth.SaveToken(context.Background(), filepath.Join(home, "tokens.json"), tok); err != nil {
		t.Fatal(err)
	}
	// Hosts sharing a database share the link key, so a link one host
	// sent works on the other.
	if err := os.WriteFile(filepath.Join(home, "approval_link.key"), key, 0o600); err != nil {
		t.Fatal(err)
	}
	tokBytes := make([]byte, 24)
	_, _ = rand.Read(tokBytes)
	mcpToken := hex.EncodeToString(tokBytes)
	if err := os.WriteFile(filepath.Join(home, "mcp_token"), []byte(mcpToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	h := &phoneHost{addr: fmt.Sprintf("127.0.0.1:%d", port), stderr: &lockedBuffer{}, done: make(chan struct{})}
	h.cmd = exec.Command(bin, "mcp", "serve", "--transport", "http", "--web", "--listen", h.addr, "--token-file", filepath.Join(home, "mcp_token"))
	h.cmd.Env = append(cleanEnv(), "TUITBOT_HOME="+home, "TUITBOT_E2E_HOOK_SECRET="+e2eHookSecret)
	pr, pw := io.Pipe()
	h.cmd.Stderr = pw
	h.cmd.Stdout = io.Discard
	if err := h.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		_ = h.cmd.Wait()
		pw.Close()
		close(h.done)
	}()
	t.Cleanup(func() {
		select {
		case <-h.done:
		default:
			_ = h.cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-h.done:
			case <-time.After(20 * time.Second):
				_ = h.cmd.Process.Kill()
				<-h.done
			}
		}
	})
	ready := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		sent := false
		for sc.Scan() {
			fmt.Fprintln(h.stderr, sc.Text())
			if !sent && hostListening.MatchString(sc.Text()) {
				ready <- true
				sent = true
			}
		}
		_, _ = io.Copy(io.Discard, pr)
		if !sent {
			ready <- false
		}
	}()
	select {
	case ok := <-ready:
		if !ok {
			t.Fatalf("host exited before listening:\n%s", h.stderr)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("host never reported listening:\n%s", h.stderr)
	}
	hc := &http.Client{Transport: bearer{token: mcpToken, base: http.DefaultTransport}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "phone-e2e", Version: "1"}, nil).
		Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: "http://" + h.addr + "/", HTTPClient: hc, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, h.stderr)
	}
	t.Cleanup(func() { cs.Close() })
	h.cs = cs
	return h
}

// postForApproval has the agent post over MCP and returns the item id; the
// answer must hold no link.
func postForApproval(t *testing.T, cs *mcp.ClientSession, text string) int64 {
	t.Helper()
	e, err := call(context.Background(), cs, "x_post_tweet", map[string]any{"text": text})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(e.raw, "/a/") {
		t.Fatalf("the tool answer holds a link: %s", e.raw)
	}
	var d struct {
		ID int64 `json:"approval_queue_id"`
	}
	if err := json.Unmarshal(e.Data, &d); err != nil || d.ID == 0 {
		t.Fatalf("not routed to approval: %s", e.raw)
	}
	return d.ID
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// tap opens link as a phone's browser would (GET, then the page's form
// POST with Origin: null) and returns the answer's status and body.
func tap(t *testing.T, link, decision string) (int, string) {
	t.Helper()
	resp, err := http.Get(link)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return resp.StatusCode, string(b)
	}
	m := csrfField.FindStringSubmatch(string(b))
	if m == nil {
		t.Fatalf("no form on the link page:\n%s", b)
	}
	req, _ := http.NewRequest(http.MethodPost, link, strings.NewReader(url.Values{"csrf": {m[1]}, "decision": {decision}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", "null")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ = io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// linkToken is the token part of a link, to look for in logs.
func linkToken(link string) string {
	_, tok, _ := strings.Cut(link, "/a/")
	return tok
}

// TestApproveFromAPhone: an agent posts over MCP to a running server; the
// webhook receiver gets the signed event with its links; the view link is
// opened (by chromium at 390 px when installed, else as its HTTP requests)
// and Approve tapped; the post exists once on X; a second tap says the
// link was used; no log line holds a link.
func TestApproveFromAPhone(t *testing.T) {
	bin := buildTuitbot(t)
	x := startSim(t, nil)
	hook := newPhoneHook(t)
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	h := startPhoneHost(t, bin, filepath.Join(t.TempDir(), "home"), x, "", freePort(t), hook.srv.URL+"/hook", key)
	const text = "Approved from my phone, once"
	id := postForApproval(t, h.cs, text)
	ev := hook.wait(t)
	if ev.Body.Type != "approval.created" || ev.Body.Data.ItemID != id || !strings.HasPrefix(ev.Body.Data.ViewURL, "http://"+h.addr+"/a/") {
		t.Fatalf("event %+v", ev.Body)
	}
	status, page := tap(t, ev.Body.Data.ViewURL, "approve")
	if status != http.StatusOK || !strings.Contains(page, "Approved") {
		t.Fatalf("tap: %d\n%s", status, page)
	}
	if n := x.postsByText()[text]; n != 1 {
		t.Fatalf("the post exists %d times on X", n)
	}
	status, page = tap(t, ev.Body.Data.ViewURL, "approve")
	if status != http.StatusGone || !strings.Contains(page, "already used") {
		t.Fatalf("second tap: %d\n%s", status, page)
	}
	t.Run("chromium at 390 px", func(t *testing.T) {
		const text = "Approved in a phone-sized browser"
		postForApproval(t, h.cs, text)
		ev := hook.wait(t)
		ctx := phoneBrowser(t)
		if err := chromedp.Do(ctx,
			chromedp.Navigate(ev.Body.Data.ViewURL),
			chromedp.WaitVisible(chromedp.ID("approve")),
			chromedp.Click(chromedp.ID("approve")),
			chromedp.WaitVisible(chromedp.ID("outcome")),
		); err != nil {
			t.Fatal(err)
		}
		title, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("outcome")))
		if err != nil {
			t.Fatal(err)
		}
		if title != "Approved" || x.postsByText()[text] != 1 {
			t.Fatalf("after the tap: %q, post count %d", title, x.postsByText()[text])
		}
		if err := chromedp.Do(ctx, chromedp.Navigate(ev.Body.Data.ViewURL), chromedp.WaitVisible(chromedp.CSS("body"))); err != nil {
			t.Fatal(err)
		}
		again, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("body")))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(again, "already used") {
			t.Fatalf("second visit: %q", again)
		}
	})
	for _, tok := range []string{linkToken(ev.Body.Data.ViewURL), linkToken(ev.Body.Data.ApproveURL)} {
		if strings.Contains(h.stderr.String(), tok) {
			t.Fatalf("a link token is in the server's log")
		}
	}
}

// TestApproveFromAPhoneTwoHosts: two `mcp serve --web` hosts on one
// PostgreSQL database deliver the event once between them, and taps on the
// two hosts give one decision.
func TestApproveFromAPhoneTwoHosts(t *testing.T) {
	pgtest.ServerURL(t)
	bin := buildTuitbot(t)
	x := startSim(t, nil)
	hook := newPhoneHook(t)
	dbURL := pgtest.NewDatabase(t, "")
	db, err := store.Open(context.Background(), dbURL, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	var hosts []*phoneHost
	for i := 0; i < 2; i++ {
		hosts = append(hosts, startPhoneHost(t, bin, filepath.Join(t.TempDir(), fmt.Sprintf("host%d", i)), x, dbURL, freePort(t), hook.srv.URL+"/hook", key))
	}
	const n = 6
	texts := map[int64]string{}
	for i := 0; i < n; i++ {
		text := fmt.Sprintf("Two hosts, one decision #%d", i)
		texts[postForApproval(t, hosts[i%2].cs, text)] = text
	}
	events := map[int64]hookEvent{}
	for len(events) < n {
		ev := hook.wait(t)
		if _, dup := events[ev.Body.Data.ItemID]; dup {
			t.Fatalf("item %d announced twice", ev.Body.Data.ItemID)
		}
		events[ev.Body.Data.ItemID] = ev
	}
	for id, ev := range events {
		// The same link, tapped on both hosts at once (two devices).
		view := ev.Body.Data.ViewURL
		other := strings.Replace(view, hosts[0].addr, hosts[1].addr, 1)
		if other == view {
			other = strings.Replace(view, hosts[1].addr, hosts[0].addr, 1)
		}
		var wg sync.WaitGroup
		codes := make([]int, 2)
		for i, link := range []string{view, other} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				codes[i], _ = tap(t, link, "approve")
			}()
		}
		wg.Wait()
		ok := 0
		for _, c := range codes {
			if c == http.StatusOK {
				ok++
			} else if c != http.StatusGone {
				t.Fatalf("item %d: a tap answered %d", id, c)
			}
		}
		if ok != 1 || x.postsByText()[texts[id]] != 1 {
			t.Fatalf("item %d: %d taps decided, post count %d; want one of each", id, ok, x.postsByText()[texts[id]])
		}
	}
	for id, c := range hook.deliveries() {
		if c != 1 {
			t.Fatalf("message %s delivered %d times", id, c)
		}
	}
}

// phoneBrowser is headless chromium sized like a phone (390 px wide).
// Without chromium the step skips, unless TUITBOT_REQUIRE_BROWSER is set.
func phoneBrowser(t *testing.T) context.Context {
	t.Helper()
	return browsertest.Start(t, 390, 844)
}
