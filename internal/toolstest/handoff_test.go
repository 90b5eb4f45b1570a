package toolstest

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/config"
	"github.com/tuitbot/tuitbot/internal/gateway"
)

// TestGetHandOff: a follow refused on pay-per-use access is handed to a
// person; get_handoff shows it open with X's follow intent (here the
// sandbox emulator's); once the person presses Follow on that page,
// get_handoff with check=true finds it with an owned read and answers
// done_by_person with the user followed, as the audit row records. A bad
// or unknown id is refused naming handoff_id.
func TestGetHandOff(t *testing.T) {
	e := newEnv(t, envOptions{permissive: true, access: config.AccessPayPerUse})
	var user string
	follows := func() bool {
		for _, f := range e.Sim.World().Follows {
			if f.From == e.Sim.DemoUserID() && f.To == user {
				return true
			}
		}
		return false
	}
	for n := 0; user == "" || follows(); n++ {
		if n > 200 {
			t.Fatal("the demo account follows everyone in the world")
		}
		user = strangerOf(t, e.Sim, n)
	}
	r := e.call("x_follow_user", map[string]any{"target_user_id": user}).fails(t, apperr.XFeatureUnavailable)
	id, _ := r.extra("handoff_id").(float64)
	if id == 0 {
		t.Fatalf("no handoff_id in the refusal: %+v", r.Error)
	}
	var h gateway.HandOff
	e.call("get_handoff", map[string]any{"handoff_id": id}).ok(t, &h)
	if h.Status != gateway.HandOffOpen || h.Effect != "x_follow_user" || !strings.HasPrefix(h.IntentURL, e.App.Sim.URL+"/intent/") {
		t.Fatalf("hand-off %+v, want an open follow with the emulator's intent at %s", h, e.App.Sim.URL)
	}
	// X's follow intent takes the handle, never the id: tuitbot never saw
	// this user's handle (and a refusal reads nothing from X), so the link
	// is the profile, whose button follows.
	if u, _ := url.Parse(h.IntentURL); u == nil || u.Path != "/intent/user" || u.Query().Get("user_id") != user {
		t.Fatalf("the follow's link %q is not the profile of %s", h.IntentURL, user)
	}

	// The person presses Follow on the intent page.
	res, err := http.PostForm(h.IntentURL, url.Values{})
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK || !follows() {
		t.Fatalf("the intent page answered %d; following: %t", res.StatusCode, follows())
	}
	e.call("get_handoff", map[string]any{"handoff_id": id}).ok(t, &h)
	if h.Status != gateway.HandOffOpen {
		t.Fatalf("without check the hand-off is %q, want open until a check", h.Status)
	}
	e.call("get_handoff", map[string]any{"handoff_id": id, "check": true}).ok(t, &h)
	if h.Status != gateway.HandOffDone || h.UserID != user {
		t.Fatalf("after the check: %+v, want done_by_person with user %s", h, user)
	}
	a := e.audit(h.CorrelationID)
	if a.Status != "handed_off" || a.Resolution != gateway.HandOffDone || !strings.Contains(string(a.Result), user) {
		t.Fatalf("audit row %+v", a)
	}

	e.call("get_handoff", map[string]any{"handoff_id": 0}).fails(t, apperr.InvalidInput).mentions(t, "handoff_id")
	e.call("get_handoff", map[string]any{"handoff_id": 987654}).fails(t, apperr.NotFound).mentions(t, "handoff_id")
}
