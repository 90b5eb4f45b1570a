package web

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tuitbot/tuitbot/internal/config"
	"github.com/tuitbot/tuitbot/internal/gateway"
	"github.com/tuitbot/tuitbot/internal/notify"
)

// siteItems reads the site's approval queue as the dispatcher does.
type siteItems struct{ s *site }

func (i siteItems) Item(ctx context.Context, _ string, id int64) (*gateway.ApprovalItem, error) {
	return i.s.a.Gateway.Item(ctx, id)
}

// echoReceiver is a webhook receiver that refuses every delivery with an
// error answer quoting what it was sent: the links, in the spelling the
// current case asks for.
type echoReceiver struct {
	srv   *httptest.Server
	mu    sync.Mutex
	quote func(links []string) string
	got   []string // the link tokens of the last delivery
}

func newEchoReceiver(t *testing.T) *echoReceiver {
	t.Helper()
	e := &echoReceiver{}
	e.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var ev struct {
			Data struct {
				ViewURL    string `json:"view_url"`
				ApproveURL string `json:"approve_url"`
				RejectURL  string `json:"reject_url"`
			} `json:"data"`
		}
		if err := json.Unmarshal(b, &ev); err != nil {
			t.Errorf("receiver: %v", err)
		}
		links := []string{ev.Data.ViewURL, ev.Data.ApproveURL, ev.Data.RejectURL}
		e.mu.Lock()
		defer e.mu.Unlock()
		e.got = nil
		for _, l := range links {
			_, tok, ok := strings.Cut(l, "/a/")
			if !ok || len(tok) < 16 {
				t.Errorf("receiver: %q is not an approval link", l)
			}
			e.got = append(e.got, tok)
		}
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = io.WriteString(w, e.quote(links))
	}))
	t.Cleanup(e.srv.Close)
	return e
}

func (e *echoReceiver) answer(quote func(links []string) string) {
	e.mu.Lock()
	e.quote = quote
	e.mu.Unlock()
}

func (e *echoReceiver) tokens() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.got...)
}

// A receiver whose error answer quotes the approval links, in any spelling
// (plain, JSON with \/ or \u002f, percent-encoded, the token alone) or the
// channel's own secret, leaves none of it in the outbox's last_error:
// not in the rows `notify outbox list` prints, not in the report `notify
// status` prints, not in get_notification_status.
func TestChannelErrorsKeepNoLinkToken(t *testing.T) {
	const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	t.Setenv("TUITBOT_TEST_HOOK_SECRET", secret)
	rcv := newEchoReceiver(t)
	s := newSite(t, func(c *config.Config) {
		linksOn(c)
		c.ApprovalLinks.OneTap = true
		c.Notify.BatchWindowSeconds = 0
		c.Notify.Channels = []config.NotifyChannel{{Name: "hook", Type: "webhook", URL: rcv.srv.URL + "/in", SecretEnv: "TUITBOT_TEST_HOOK_SECRET"}}
	})
	chans, err := s.a.NotifyChannels()
	if err != nil {
		t.Fatal(err)
	}
	d := notify.NewDispatcher(notify.DispatcherOptions{Outbox: s.a.Outbox(), Channels: chans, Items: siteItems{s}, Links: s.a.Links(), OneTap: true})
	cs := s.mcpClient()
	slashes := func(links []string, slash string) string {
		var out []string
		for _, l := range links {
			out = append(out, strings.ReplaceAll(l, "/", slash))
		}
		return strings.Join(out, " ")
	}
	cases := []struct {
		name  string
		quote func(links []string) string
	}{
		{"plain", func(l []string) string { return "500 upstream error for " + strings.Join(l, ", ") }},
		{"JSON \\/", func(l []string) string { return `{"error":"upstream error","links":"` + slashes(l, `\/`) + `"}` }},
		{"JSON \\u002f", func(l []string) string { return `{"error":"upstream error for ` + slashes(l, `\u002f`) + `"}` }},
		{"JSON \\u002F", func(l []string) string { return `{"error":"upstream error for ` + slashes(l, `\u002F`) + `"}` }},
		{"percent-encoded", func(l []string) string {
			return "bad redirect to /login?next=" + url.QueryEscape(l[0]) + "&then=" + strings.ToLower(url.QueryEscape(l[1]))
		}},
		{"token alone", func(l []string) string {
			var toks []string
			for _, u := range l {
				toks = append(toks, u[strings.LastIndex(u, "/")+1:])
			}
			return `{"error":"unknown token(s) ` + strings.Join(toks, ",") + `"}`
		}},
		{"the channel's secret", func([]string) string { return "signature refused; expected key " + secret }},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rcv.answer(tc.quote)
			s.postTweet(cs, "an error answer quotes my links, case "+string(rune('a'+i)))
			if _, err := d.RunOnce(context.Background()); err != nil {
				t.Fatal(err)
			}
			leaks := append(rcv.tokens(), secret, strings.TrimPrefix(secret, "whsec_"))
			if len(leaks) != 5 {
				t.Fatalf("the receiver got no links (%v)", leaks)
			}
			rows, err := s.a.Outbox().List(context.Background(), notify.Filter{Limit: 1})
			if err != nil || len(rows) != 1 || rows[0].LastError == "" {
				t.Fatalf("no failed delivery recorded: %+v %v", rows, err)
			}
			rep, err := s.a.Outbox().Report(context.Background(), s.a.Cfg.Notify, true)
			if err != nil {
				t.Fatal(err)
			}
			repJSON, _ := json.Marshal(rep)
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "get_notification_status", Arguments: map[string]any{}})
			if err != nil {
				t.Fatal(err)
			}
			tool, _ := json.Marshal(res)
			if !strings.Contains(string(tool), "500") {
				t.Errorf("get_notification_status lacks the error: %s", tool)
			}
			for name, out := range map[string]string{"outbox row": rows[0].LastError, "notify status": string(repJSON), "get_notification_status": string(tool)} {
				for _, leak := range leaks {
					if strings.Contains(out, leak) {
						t.Errorf("%s holds %.12s…: %s", name, leak, out)
					}
				}
			}
		})
	}
}
