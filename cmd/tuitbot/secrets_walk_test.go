package main

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/config"
)

// walkSecrets gives every secret setting (config.SecretSettings, read from
// the secret tags) a recognisable value. A setting added later without a
// value here fails the walk, so no credential is left out of it.
var walkSecrets = map[string][]string{
	"x_api.client_secret":               {"walk-x-client-secret-5c1e"},
	"llm.api_key":                       {"walk-llm-api-key-a7d0"},
	"llm.api_key_env":                   {"walk-llm-key-from-env-31b9"},
	"storage.database_url":              {"postgres://walker:walk-db-password-6e2f@127.0.0.1:1/tuitbot"},
	"notify.channels[].secret_env":      {"whsec_d2Fsay13ZWJob29rLXNpZ25pbmctc2VjcmV0"},
	"notify.channels[].topic":           {"walk-literal-topic-0d4c"},
	"notify.channels[].topic_env":       {"walk-env-topic-8a13"},
	"notify.channels[].token_env":       {"walk-ntfy-token-f29b"},
	"notify.channels[].webhook_url_env": {"/services/TWALK/BWALK/walk-slack-path-c6e8", "/api/webhooks/1234/walk-discord-path-9b57"},
	"notify.channels[].bot_token_env":   {"123456:walk-telegram-bot-token-44aa"},
	"notify.channels[].password_env":    {"walk-smtp-password-e81d"},
}

// echo is a local destination that refuses every message with an error
// quoting what it got: the path (a webhook's or a bot's key), the
// Authorization header, an ntfy topic and the links, as careless servers
// do.
type echo struct {
	srv    *httptest.Server
	mu     sync.Mutex
	bodies []string
	got    chan struct{}
}

func newEcho(t *testing.T) *echo {
	t.Helper()
	e := &echo{got: make(chan struct{}, 1)}
	e.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		e.mu.Lock()
		e.bodies = append(e.bodies, string(b))
		e.mu.Unlock()
		select {
		case e.got <- struct{}{}:
		default:
		}
		// What is secret first: a channel keeps only the first 200
		// characters of an answer.
		var sent struct {
			Topic string `json:"topic"`
		}
		_ = json.Unmarshal(b, &sent)
		var quoted []string
		for _, l := range linkURL.FindAllString(string(b), -1) {
			quoted = append(quoted, l, strings.ReplaceAll(l, "/", `\/`))
		}
		w.WriteHeader(http.StatusInternalServerError)
		fmt.Fprintf(w, "upstream error for %s (auth %q, topic %q): %s", r.URL.Path, r.Header.Get("Authorization"), sent.Topic, strings.Join(quoted, " "))
	}))
	t.Cleanup(e.srv.Close)
	return e
}

func (e *echo) seen() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.bodies...)
}

// leaks lists the secrets out holds, in any of the spellings a JSON or URL
// encoder gives them.
func leaks(out string, secrets map[string]string) []string {
	var found []string
	for what, v := range secrets {
		j, _ := json.Marshal(v)
		for _, sp := range []string{v, strings.Trim(string(j), `"`), strings.ReplaceAll(strings.Trim(string(j), `"`), "/", `\/`), url.QueryEscape(v)} {
			if strings.Contains(out, sp) {
				found = append(found, what)
				break
			}
		}
	}
	return found
}

var (
	linkInBody = regexp.MustCompile(`/a/([A-Za-z0-9_-]{16,})`)
	linkURL    = regexp.MustCompile(`https://[a-z.]+/a/[A-Za-z0-9_-]{16,}`)
)

// TestNoSecretReachesAnyOutput gives every setting that can approve or read
// an approval a recognisable value, in the file and the environment: the X
// client secret, the LLM key, the database URL, a webhook's signing secret,
// ntfy topics and token, Slack and Discord webhook URLs, a Telegram bot
// token, an SMTP password. It runs the MCP server and the review page with
// notifications going to local destinations that quote back what they get,
// and finds none of those values, nor the stored ones (the link key, the
// MCP token, the OAuth tokens, the web login token and session) nor a link
// token, in: get_config, get_capabilities, get_notification_status and
// health_check over MCP, `config show` (and --json), the /settings page,
// the logs of both servers, and /metrics. The database URL is walked
// through `config show` only: a server given one would need PostgreSQL.
func TestNoSecretReachesAnyOutput(t *testing.T) {
	for _, s := range config.SecretSettings() {
		if len(walkSecrets[s.Key]) == 0 {
			t.Fatalf("secret setting %s has no value in walkSecrets: give it one so the walk covers it", s.Key)
		}
	}
	hook, ntfy, chat, tg := newEcho(t), newEcho(t), newEcho(t), newEcho(t)
	v := func(key string, i int) string { return walkSecrets[key][i] }
	secrets := map[string]string{}
	env := []string{"WALK_LLM_KEY=" + v("llm.api_key_env", 0), "WALK_HOOK_SECRET=" + v("notify.channels[].secret_env", 0),
		"WALK_NTFY_TOPIC=" + v("notify.channels[].topic_env", 0), "WALK_NTFY_TOKEN=" + v("notify.channels[].token_env", 0),
		"WALK_SLACK_URL=" + chat.srv.URL + v("notify.channels[].webhook_url_env", 0),
		"WALK_DISCORD_URL=" + chat.srv.URL + v("notify.channels[].webhook_url_env", 1),
		"WALK_TG_TOKEN=" + v("notify.channels[].bot_token_env", 0), "WALK_SMTP_PASSWORD=" + v("notify.channels[].password_env", 0)}
	for key, vals := range walkSecrets {
		for i, val := range vals {
			secrets[fmt.Sprintf("%s#%d", key, i)] = val
		}
	}
	// The settings of the configuration's own keys are set through their
	// override variables, all but the database (it needs a server).
	def := config.Default()
	var fieldEnv []string
	for _, f := range config.Fields(&def) {
		if f.Secret && f.Name() != "storage.database_url" {
			fieldEnv = append(fieldEnv, f.EnvName()+"="+v(f.Name(), 0))
		}
	}
	file := fmt.Sprintf(`
[llm]
api_key_env = "WALK_LLM_KEY"

[notify]
public_base_url = "https://phone.example.ts.net"
batch_window_seconds = 0

[approval_links]
enabled = true
one_tap = true

[[notify.channels]]
name = "hook"
type = "webhook"
url = "%[1]s/in"
secret_env = "WALK_HOOK_SECRET"

[[notify.channels]]
name = "phone"
type = "ntfy"
server = "%[2]s"
topic = "%[3]s"

[[notify.channels]]
name = "tablet"
type = "ntfy"
server = "%[2]s"
topic_env = "WALK_NTFY_TOPIC"
token_env = "WALK_NTFY_TOKEN"

[[notify.channels]]
name = "team"
type = "slack"
webhook_url_env = "WALK_SLACK_URL"

[[notify.channels]]
name = "guild"
type = "discord"
webhook_url_env = "WALK_DISCORD_URL"

[[notify.channels]]
name = "tg"
type = "telegram"
bot_token_env = "WALK_TG_TOKEN"
chat_id = "-1001234"
allowed_user_ids = [42]
api_base_url = "%[4]s"

[[notify.channels]]
name = "mail"
type = "email"
smtp_host = "127.0.0.1"
smtp_port = 1
tls = "none"
from = "bot@example.com"
to = ["me@example.com"]
username = "bot"
password_env = "WALK_SMTP_PASSWORD"
`, hook.srv.URL, ntfy.srv.URL, v("notify.channels[].topic", 0), tg.srv.URL)
	h := newHome(t).with(append(env, fieldEnv...)...)
	if err := os.WriteFile(h.path("config.toml"), []byte(file), 0o600); err != nil {
		t.Fatal(err)
	}
	outputs := map[string]string{}

	// config show, with the database URL too (show opens no database).
	withDB := h.with("TUITBOT_STORAGE__DATABASE_URL=" + v("storage.database_url", 0))
	show := withDB.ok(t, "config", "show")
	mustContain(t, "config show", show.stdout, "WALK_NTFY_TOPIC")
	outputs["config show"] = show.stdout + show.stderr
	js := withDB.ok(t, "config", "show", "--json")
	outputs["config show --json"] = js.stdout + js.stderr

	// The MCP server: an agent posts, the notice goes to every channel,
	// every destination refuses it quoting what it got.
	p := startStdio(t, h.with(), "--sandbox", "--log-level", "debug", "--metrics-listen", "127.0.0.1:0")
	p.started(t)
	post := p.callTool(t, 2, "x_post_tweet", map[string]any{"text": "walk every secret past every output"})
	if !post.Success {
		t.Fatalf("x_post_tweet: %+v", post.Error)
	}
	for name, e := range map[string]*echo{"webhook": hook, "ntfy": ntfy, "slack/discord": chat} {
		select {
		case <-e.got:
		case <-time.After(20 * time.Second):
			t.Fatalf("the %s destination got nothing\nstderr:\n%s", name, p.stderr)
		}
	}
	raw := func(id int, tool string) string {
		t.Helper()
		p.send(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":{}}}`, id, tool))
		r := p.next(t, tool)
		if r.Error != nil || !strings.Contains(string(r.Result), `\"success\":true`) {
			t.Fatalf("%s: %+v %s", tool, r.Error, r.Result)
		}
		return string(r.Result)
	}
	// The dispatcher records each refusal after the answer: wait until
	// the status shows every channel's.
	id := 10
	var status string
	for deadline := time.Now().Add(20 * time.Second); ; id++ {
		status = raw(id, "get_notification_status")
		if strings.Count(status, `\"last_error\":`) >= 7 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the refusals were never recorded: %s", status)
		}
	}
	mustContain(t, "get_notification_status", status, "upstream error for")
	outputs["get_notification_status"] = status
	for _, tool := range []string{"get_config", "get_capabilities", "health_check"} {
		id++
		outputs[tool] = raw(id, tool)
	}
	metricsURL := p.stderr.waitFor(regexp.MustCompile(`url=(http://127\.0\.0\.1:\d+/metrics)`), 10*time.Second)
	if metricsURL == nil {
		t.Fatalf("no metrics listener\nstderr:\n%s", p.stderr)
	}
	tok, err := os.ReadFile(h.path("sandbox/mcp_token"))
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodGet, metricsURL[1], nil)
	req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(tok)))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), "tuitbot_") {
		t.Fatalf("/metrics: %d\n%s", resp.StatusCode, b)
	}
	outputs["/metrics"] = string(b)
	p.stop(t)
	outputs["mcp serve log"] = p.stderr.String()

	// The review page's settings, and its log.
	cmd, stdout, stderr := h.start(t, "web", "--sandbox", "--listen", "127.0.0.1:0", "--log-level", "debug")
	c, base, login := webLogin(t, stdout)
	// The login link and the session it opens decide items too.
	if _, tok, ok := strings.Cut(login, "token="); ok {
		secrets["web login token"] = tok
	}
	if u, err := url.Parse(base + "/"); err == nil {
		for _, ck := range c.Jar.Cookies(u) {
			secrets["web session cookie "+ck.Name] = ck.Value
		}
	}
	settings := webGet(t, c, base+"/settings")
	mustContain(t, "settings page", settings, "Client secret</dt><dd>"+config.Mask)
	outputs["/settings"] = settings
	waitSignalExit(t, cmd, stderr)
	outputs["web log"] = stderr.String()

	// What the process stored: the link key, the MCP token, OAuth tokens.
	key, err := os.ReadFile(h.path("sandbox/approval_link.key"))
	if err != nil || len(key) < 16 {
		t.Fatalf("link key: %v", err)
	}
	secrets["approval_link.key (hex)"] = hex.EncodeToString(key)
	secrets["approval_link.key (base64)"] = base64.StdEncoding.EncodeToString(key)
	secrets["approval_link.key (base64url)"] = base64.RawURLEncoding.EncodeToString(key)
	secrets["mcp_token"] = strings.TrimSpace(string(tok))
	tokenFiles, _ := filepath.Glob(h.path("sandbox/tokens/*.json"))
	for _, f := range tokenFiles {
		var tk map[string]any
		if b, err := os.ReadFile(f); err == nil && json.Unmarshal(b, &tk) == nil {
			for _, k := range []string{"access_token", "refresh_token"} {
				if s, _ := tk[k].(string); len(s) >= 8 {
					secrets[filepath.Base(f)+" "+k] = s
				}
			}
		}
	}
	if len(tokenFiles) == 0 {
		t.Errorf("no OAuth token file in the sandbox home: the walk cannot check them")
	}
	// And every link the destinations were sent.
	links := 0
	for _, e := range []*echo{hook, ntfy} {
		for _, body := range e.seen() {
			for _, m := range linkInBody.FindAllStringSubmatch(body, -1) {
				secrets["link token "+m[1][:12]] = m[1]
				links++
			}
		}
	}
	if links == 0 {
		t.Fatal("no destination was sent a link: the walk cannot check them")
	}

	for name, out := range outputs {
		if l := leaks(out, secrets); len(l) > 0 {
			t.Errorf("%s shows %v", name, l)
		}
	}
}
