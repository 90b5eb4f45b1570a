package main

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/tuitbot/tuitbot/internal/testcert"
)

const cliHookSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

// hookReceiver is a local webhook endpoint that verifies every delivery
// with the Standard Webhooks reference library.
type hookReceiver struct {
	srv    *httptest.Server
	mu     sync.Mutex
	bodies []string
	status int
}

func newHookReceiver(t *testing.T) *hookReceiver {
	t.Helper()
	wh, err := standardwebhooks.NewWebhook(cliHookSecret)
	if err != nil {
		t.Fatal(err)
	}
	h := &hookReceiver{status: http.StatusNoContent}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if err := wh.Verify(b, r.Header); err != nil {
			t.Errorf("webhook signature refused by the reference library: %v", err)
		}
		h.mu.Lock()
		h.bodies = append(h.bodies, string(b))
		status := h.status
		h.mu.Unlock()
		w.WriteHeader(status)
	}))
	t.Cleanup(h.srv.Close)
	return h
}

func (h *hookReceiver) got() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.bodies...)
}

func (h *hookReceiver) answer(status int) {
	h.mu.Lock()
	h.status = status
	h.mu.Unlock()
}

func writeNotifyConfig(t *testing.T, hm *home, url string) {
	t.Helper()
	cfg := "[notify]\nbatch_window_seconds = 0\n\n[[notify.channels]]\nname = \"hook\"\ntype = \"webhook\"\nurl = \"" + url + "/hook?key=query-secret\"\nsecret_env = \"HOOK_SECRET\"\n"
	if err := os.WriteFile(hm.path("config.toml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
}

// `tuitbot notify test` works in the sandbox without an X account: the
// receiver gets one signed message, and status and the outbox say so
// without showing the secret or the URL's query.
func TestNotifyTestInTheSandbox(t *testing.T) {
	rcv := newHookReceiver(t)
	h := newHome(t).with("HOOK_SECRET=" + cliHookSecret)
	writeNotifyConfig(t, h, rcv.srv.URL)

	r := h.ok(t, "notify", "test", "--channel", "hook", "--sandbox")
	mustContain(t, "notify test", r.stdout, "channel hook: test message delivered")
	got := rcv.got()
	if len(got) != 1 || !strings.Contains(got[0], `"type":"notify.test"`) {
		t.Fatalf("receiver got %v", got)
	}

	st := h.ok(t, "notify", "status", "--json", "--sandbox")
	var rep struct {
		Channels []struct {
			Name, Type, Target string
			LastSuccess        string `json:"last_success"`
			Pending, Failed    int
		} `json:"channels"`
	}
	if err := json.Unmarshal([]byte(st.stdout), &rep); err != nil {
		t.Fatalf("%v\n%s", err, st.stdout)
	}
	if len(rep.Channels) != 1 || rep.Channels[0].LastSuccess == "" || rep.Channels[0].Target != rcv.srv.URL {
		t.Fatalf("status %+v", rep)
	}
	for _, out := range []string{st.stdout, r.stdout, r.stderr, h.ok(t, "notify", "status", "--sandbox").stdout, h.ok(t, "config", "show").stdout} {
		for _, leak := range []string{"query-secret", "MfKQ9r8GKYq"} {
			if strings.Contains(out, leak) {
				t.Errorf("output shows %q:\n%s", leak, out)
			}
		}
	}

	// A receiver that refuses is reported, and the row can be retried.
	rcv.answer(http.StatusUnauthorized)
	f := h.fails(t, "notify", "test", "--channel", "hook", "--sandbox")
	mustContain(t, "notify test", f.stderr, "not delivered", "failed", "401")
	list := h.ok(t, "notify", "outbox", "list", "--status", "failed", "--json", "--sandbox")
	var rows struct {
		Rows []struct {
			ID     int64  `json:"id"`
			Status string `json:"status"`
		} `json:"rows"`
	}
	if err := json.Unmarshal([]byte(list.stdout), &rows); err != nil || len(rows.Rows) != 1 {
		t.Fatalf("outbox list: %v\n%s", err, list.stdout)
	}
	id := rows.Rows[0].ID
	mustContain(t, "retry", h.ok(t, "notify", "outbox", "retry", itoa(id), "--sandbox").stdout, "is pending again")
	mustContain(t, "drop", h.ok(t, "notify", "outbox", "drop", itoa(id), "--sandbox").stdout, "dropped")
	mustContain(t, "drop again", h.fails(t, "notify", "outbox", "drop", itoa(id), "--sandbox").stderr, "it is dropped")

	// Without the secret the channel cannot be built, and the error says
	// which key and variable.
	bad := newHome(t)
	writeNotifyConfig(t, bad, rcv.srv.URL)
	mustContain(t, "missing secret", bad.fails(t, "notify", "test", "--channel", "hook", "--sandbox").stderr,
		"notify.channels[0].secret_env", "HOOK_SECRET")
	mustContain(t, "unknown channel", h.fails(t, "notify", "test", "--channel", "nope", "--sandbox").stderr, "--channel", "hook")
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// `approve links rotate-key` replaces the 0600 key; `revoke` answers for
// an item; with links off both say how to turn them on.
func TestApproveLinksCommands(t *testing.T) {
	h := newHome(t)
	mustContain(t, "links off", h.fails(t, "approve", "links", "rotate-key").stderr, "[approval_links] enabled = true")
	cfg := "[notify]\npublic_base_url = \"https://phone.example.ts.net\"\n[approval_links]\nenabled = true\n"
	if err := os.WriteFile(h.path("config.toml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	mustContain(t, "rotate", h.ok(t, "approve", "links", "rotate-key").stdout, "link key rotated")
	st, err := os.Stat(h.path("approval_link.key"))
	if err != nil || st.Mode().Perm() != 0o600 || st.Size() != 32 {
		t.Fatalf("key file: %v %v", st, err)
	}
	mustContain(t, "revoke", h.ok(t, "approve", "links", "revoke", "7").stdout, "0 open link(s) of item 7 revoked")
	mustContain(t, "bad id", h.fails(t, "approve", "links", "revoke", "x").stderr, "not an approval id")
}

// `tuitbot status` reports how long decided items waited, per channel.
func TestStatusShowsApprovalLatency(t *testing.T) {
	h := newHome(t)
	seedPending(t, h, 2)
	h.ok(t, "approve", "reject", "1")
	out := h.ok(t, "status").stdout
	mustContain(t, "status", out, "approval latency, queued to decided (30 days):", "all", "cli", "(1 items)")
	var st struct {
		Latency []struct {
			Channel string  `json:"channel"`
			Count   int     `json:"count"`
			P50     float64 `json:"p50_seconds"`
		} `json:"approval_latency"`
	}
	if err := json.Unmarshal([]byte(h.ok(t, "status", "--json").stdout), &st); err != nil {
		t.Fatal(err)
	}
	if len(st.Latency) != 2 || st.Latency[0].Channel != "all" || st.Latency[1].Channel != "cli" || st.Latency[1].Count != 1 {
		t.Fatalf("approval_latency %+v", st.Latency)
	}
}

// `tuitbot web --listen` on another address than loopback needs TLS or a
// trusted proxy, and says both; with TLS the login URL is https and works.
func TestWebListenNeedsTLSOrProxy(t *testing.T) {
	h := newHome(t)
	f := h.fails(t, "web", "--listen", "0.0.0.0:0")
	mustContain(t, "refusal", f.stderr, "--tls-cert", "--tls-key", "--behind-proxy", "not a loopback address")
	mustContain(t, "half TLS", h.fails(t, "web", "--listen", "0.0.0.0:0", "--tls-cert", "c.pem").stderr, "--tls-cert and --tls-key go together")
	mustContain(t, "bad CIDR", h.fails(t, "web", "--listen", "0.0.0.0:0", "--behind-proxy", "tailnet").stderr, "--behind-proxy \"tailnet\"")

	certFile, keyFile, pool := writeTestCert(t, h.dir)
	cmd, stdout, stderr := h.start(t, "web", "--sandbox", "--listen", "127.0.0.1:0", "--tls-cert", certFile, "--tls-key", keyFile)
	m := stdout.waitFor(regexp.MustCompile(`(?m)^https://127\.0\.0\.1:\d+/login\?token=[0-9a-f]+$`), 30*time.Second)
	if m == nil {
		t.Fatalf("no https login URL\nstdout:\n%s\nstderr:\n%s", stdout, stderr)
	}
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
	resp, err := c.Get(m[0])
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Request.URL.Scheme != "https" {
		t.Fatalf("login over TLS: %d at %s", resp.StatusCode, resp.Request.URL)
	}
	var secure bool
	for _, r := range []*http.Response{resp.Request.Response} {
		if r == nil {
			continue
		}
		for _, ck := range r.Cookies() {
			secure = secure || ck.Secure
		}
	}
	if !secure {
		t.Error("the session cookie over TLS is not Secure")
	}
	waitSignalExit(t, cmd, stderr)
}

// writeTestCert writes a self-signed certificate for 127.0.0.1 and its key.
func writeTestCert(t *testing.T, dir string) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	c := testcert.New(t)
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, c.CertPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, c.KeyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile, c.Pool
}
