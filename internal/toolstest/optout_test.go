package toolstest

import (
	"fmt"
	"testing"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/config"
	"github.com/tuitbot/tuitbot/internal/xsim"
)

// TestOptOutRefusesEverySpelling: a mention saying "stop", read with
// x_get_user_mentions, puts its author on the suppression list; then a
// typed reply to them, a universal reply (x_post), a DM to them and a post
// @mentioning them are refused with user_opted_out before X: no write
// reaches the emulator and nothing is billed. Clearing lifts it.
func TestOptOutRefusesEverySpelling(t *testing.T) {
	var x xTraffic
	e := newEnv(t, envOptions{permissive: true, access: config.AccessEnterprise, onX: x.hook})
	user := strangerOf(t, e.Sim, 0)
	name := usernameOf(t, e.Sim, user)
	if _, err := e.Sim.PostAs(user, "@"+xsim.DemoUsername+" Unsubscribe! Leave me alone.", ""); err != nil {
		t.Fatal(err)
	}
	e.call("x_get_user_mentions", map[string]any{}).ok(t, nil)
	mention, err := e.Sim.PostAs(user, "@"+xsim.DemoUsername+" one more question about retries?", "")
	if err != nil {
		t.Fatal(err)
	}
	raw := func(body string) map[string]any {
		return map[string]any{"path": "/2/tweets", "body": body,
			"headers": []map[string]any{{"key": "Content-Type", "value": "application/json"}}}
	}
	for _, tc := range []struct {
		name string
		tool string
		args map[string]any
	}{
		{"typed reply", "x_reply_to_tweet", map[string]any{"text": "Happy to help", "in_reply_to_id": mention}},
		{"universal reply", "x_post", raw(fmt.Sprintf(`{"text":"Happy to help","reply":{"in_reply_to_tweet_id":%q}}`, mention))},
		{"DM", "x_send_dm", map[string]any{"participant_id": user, "text": "Hi there"}},
		{"post mentioning them", "x_post_tweet", map[string]any{"text": "Thanks @" + name + " for the idea"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			writes, _ := x.snapshot()
			billed := e.Sim.Billing()
			e.call(tc.tool, tc.args).fails(t, apperr.UserOptedOut).mentions(t, "nothing was sent to X")
			if w, _ := x.snapshot(); w != writes {
				t.Errorf("%d writes reached X, want none", w-writes)
			}
			for ep, n := range e.Sim.Billing().Requests {
				if ep[:4] != "GET " && n != billed.Requests[ep] {
					t.Errorf("%s billed %d more times", ep, n-billed.Requests[ep])
				}
			}
		})
	}
	if ok, err := clearOptOut(t, e, name); err != nil || !ok {
		t.Fatalf("Clear(%s) = %v, %v", name, ok, err)
	}
	e.call("x_reply_to_tweet", map[string]any{"text": "Happy to help", "in_reply_to_id": mention}).ok(t, nil)
}

func clearOptOut(t *testing.T, e *env, user string) (bool, error) {
	t.Helper()
	s, err := e.App.OptOuts()
	if err != nil {
		return false, err
	}
	return s.Clear(e.ctx, user)
}

// TestOptOutByDM: a DM saying "opt out", read with x_get_dm_events, puts
// its sender on the suppression list, and a DM to them is refused with
// user_opted_out before X.
func TestOptOutByDM(t *testing.T) {
	var x xTraffic
	e := newEnv(t, envOptions{permissive: true, access: config.AccessEnterprise, onX: x.hook})
	to := dmRecipient(t, e)
	if _, err := e.Sim.DMAs(to.ID, "Please opt me out. OPT OUT."); err != nil {
		t.Fatal(err)
	}
	e.call("x_get_dm_events", map[string]any{}).ok(t, nil)
	writes, _ := x.snapshot()
	e.call("x_send_dm", map[string]any{"participant_id": to.ID, "text": "Hi again"}).fails(t, apperr.UserOptedOut)
	if w, _ := x.snapshot(); w != writes {
		t.Errorf("%d writes reached X, want none", w-writes)
	}
}
