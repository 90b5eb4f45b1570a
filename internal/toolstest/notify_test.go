package toolstest

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/config"
)

const toolsHookSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

// signedHook is a local webhook receiver: each delivery verified with the
// Standard Webhooks reference library is handed to got.
func signedHook(t *testing.T) (*httptest.Server, chan []byte) {
	t.Helper()
	wh, err := standardwebhooks.NewWebhook(toolsHookSecret)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan []byte, 16)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if err := wh.Verify(b, r.Header); err != nil {
			t.Errorf("signature refused: %v", err)
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		got <- b
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	return srv, got
}

// deadHook accepts connections and never answers: a channel as dead as one
// can be without refusing.
func deadHook(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c)
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		for _, c := range conns {
			c.Close()
		}
	})
	return "http://" + ln.Addr().String()
}

// A post routed to approval is announced through the outbox: the tool
// call is answered at once although one channel never answers, and the
// live channel gets the signed approval.created event for that item.
func TestRoutedPostIsAnnouncedAndADeadChannelDoesNotSlowIt(t *testing.T) {
	live, got := signedHook(t)
	dead := deadHook(t)
	secrets := map[string]string{"HOOK_SECRET": toolsHookSecret}
	e := newEnv(t, envOptions{
		getenv: func(k string) string { return secrets[k] },
		configure: func(c *config.Config) {
			c.Notify.BatchWindowSeconds = 0
			c.Notify.Channels = []config.NotifyChannel{
				{Name: "dead", Type: "webhook", URL: dead + "/hook", SecretEnv: "HOOK_SECRET"},
				{Name: "live", Type: "webhook", URL: live.URL + "/hook", SecretEnv: "HOOK_SECRET"},
			}
		},
	})
	if err := e.App.StartNotifications(e.ctx); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	r := e.call("x_post_tweet", map[string]any{"text": "announced from the outbox"})
	elapsed := time.Since(start)
	var q struct {
		ID int64 `json:"approval_queue_id"`
	}
	r.ok(t, &q)
	if q.ID == 0 {
		t.Fatalf("not routed to approval: %+v", r)
	}
	t.Logf("x_post_tweet answered in %v with a dead channel configured", elapsed)
	// A call that waited for the dead channel would take the dispatcher's
	// send timeout (30 s) at least; the bound is a third of it, so a
	// loaded machine's scheduling cannot fail the test and a waiting call
	// cannot pass it. How fast the call is, is BenchmarkQueuedToDelivered's.
	if elapsed >= 10*time.Second {
		t.Fatalf("x_post_tweet took %v with a dead channel configured: it waited for the channel", elapsed)
	}
	var body struct {
		Type string `json:"type"`
		Data struct {
			ItemID int64  `json:"item_id"`
			Text   string `json:"text"`
			Tool   string `json:"tool"`
		} `json:"data"`
	}
	select {
	case b := <-got:
		if err := json.Unmarshal(b, &body); err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the live channel got nothing")
	}
	if body.Type != "approval.created" || body.Data.ItemID != q.ID || body.Data.Text != "announced from the outbox" || body.Data.Tool != "x_post_tweet" {
		t.Fatalf("event %+v", body)
	}

	// The live channel's loop records a delivery before it sends the next
	// message, so once a second one arrives the first is on record.
	e.call("x_post_tweet", map[string]any{"text": "a second post"}).ok(t, nil)
	select {
	case <-got:
	case <-time.After(10 * time.Second):
		t.Fatal("the live channel got no second message")
	}
	// get_notification_status shows both channels without their paths or
	// secrets; the live one has delivered, the dead one still waits.
	var rep struct {
		Channels []struct {
			Name        string `json:"name"`
			Type        string `json:"type"`
			Target      string `json:"target"`
			LastSuccess string `json:"last_success"`
			Pending     int    `json:"pending"`
		} `json:"channels"`
	}
	st := e.call("get_notification_status", map[string]any{})
	st.ok(t, &rep)
	if len(rep.Channels) != 2 || rep.Channels[1].Name != "live" || rep.Channels[1].LastSuccess == "" || rep.Channels[1].Target != live.URL ||
		rep.Channels[0].Pending != 2 || rep.Channels[0].LastSuccess != "" {
		t.Fatalf("status %+v", rep)
	}
	raw, _ := json.Marshal(st)
	for _, leak := range []string{"/hook", "whsec_", "/a/"} {
		if strings.Contains(string(raw), leak) {
			t.Fatalf("get_notification_status shows %q: %s", leak, raw)
		}
	}
	// It takes no arguments.
	e.call("get_notification_status", map[string]any{"channel": "live"}).fails(t, apperr.InvalidInput)
}
