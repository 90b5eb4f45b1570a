package toolstest

import (
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/config"
	"github.com/tuitbot/tuitbot/internal/gateway"
	"github.com/tuitbot/tuitbot/internal/xsim"
)

// xLog records the requests that reach the emulator, as "METHOD /path".
type xLog struct {
	mu   sync.Mutex
	seen []string
}

func (l *xLog) hook(r *http.Request) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seen = append(l.seen, r.Method+" "+r.URL.Path)
}

// since returns the requests after the first n.
func (l *xLog) since(n int) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.seen[n:]...)
}

func (l *xLog) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.seen)
}

// TestRawMessagesAndDeletesGoToAPerson: with a rule allowing x_post by
// name, approval mode off and a cap of 4 messages a day, every route that
// sends a direct message (v2 by participant, by conversation, a new
// group; v1.1's event), in any spelling, is x_send_dm and waits for a
// person; the v1.1 List delete is x_list_delete and waits like every
// delete; a write no row lists waits too. Nothing reaches X until a person
// approves; approved, each runs once, its audit row names the typed tool,
// and the messages count against max_dms_per_day: the fifth is refused.
func TestRawMessagesAndDeletesGoToAPerson(t *testing.T) {
	var xl xLog
	e := newEnv(t, envOptions{permissive: true, agentApproval: true, onX: xl.hook, configure: func(c *config.Config) {
		c.MCPPolicy.Rules = []config.PolicyRule{allowRule("raw_ok", config.PolicyConditions{Tools: []string{"x_post"}})}
		c.Limits.MaxDMsPerDay = 4
	}})
	me := e.Sim.DemoUserID()
	to := dmRecipient(t, e)
	var third string
	for _, u := range e.Sim.World().Users {
		if u.ID != me && u.ID != to.ID && !u.DMsFromFollowedOnly && !u.Protected {
			third = u.ID
			break
		}
	}
	var list struct {
		ID string `json:"id"`
	}
	executed(t, e.call("x_list_create", map[string]any{"name": "to delete raw"}), &list)
	// X names a one-to-one conversation by both ids, the smaller first.
	conv := me + "-" + to.ID
	if len(to.ID) < len(me) || len(to.ID) == len(me) && to.ID < me {
		conv = to.ID + "-" + me
	}

	type rawCall struct {
		name, path, body string
		query            []map[string]string
		equiv, rule      string
		approve          bool
		counter          string
	}
	calls := []rawCall{
		{"v2 by participant", "/2/dm_conversations/with/" + to.ID + "/messages", `{"text":"raw one"}`, nil,
			"x_send_dm", "default:approval_unless_named", true, xsim.CountDMsSent},
		{"v2 by conversation", "/2/dm_conversations/" + conv + "/messages", `{"text":"raw two"}`, nil,
			"x_send_dm", "default:approval_unless_named", true, xsim.CountDMsSent},
		{"v2 new group", "/2/dm_conversations", `{"conversation_type":"Group","participant_ids":["` + to.ID + `","` + third + `"],"message":{"text":"raw three"}}`, nil,
			"x_send_dm", "default:approval_unless_named", true, xsim.CountDMsSent},
		{"v1.1 event", "/1.1/direct_messages/events/new.json",
			`{"event":{"type":"message_create","message_create":{"target":{"recipient_id":"` + to.ID + `"},"message_data":{"text":"raw four"}}}}`, nil,
			"x_send_dm", "default:approval_unless_named", true, xsim.CountDMsSent},
		{"v1.1 List delete", "/1.1/lists/destroy.json", "", []map[string]string{{"key": "list_id", "value": list.ID}},
			"x_list_delete", "hard:delete_approval", true, xsim.CountListsDeleted},
		// Other spellings of the same routes wait the same way.
		{"trailing slash", "/2/dm_conversations/" + conv + "/messages/", `{"text":"s"}`, nil, "x_send_dm", "default:approval_unless_named", false, ""},
		{"letter case", "/2/DM_Conversations/" + conv + "/Messages", `{"text":"s"}`, nil, "x_send_dm", "default:approval_unless_named", false, ""},
		{".json suffix", "/2/dm_conversations/" + conv + "/messages.json", `{"text":"s"}`, nil, "x_send_dm", "default:approval_unless_named", false, ""},
		{"percent-encoded", "/2/dm_conversations/" + conv + "/%6Dessages", `{"text":"s"}`, nil, "x_send_dm", "default:approval_unless_named", false, ""},
		{"v1.1 without .json", "/1.1/Direct_Messages/events/new", `{"event":{"type":"message_create"}}`, nil, "x_send_dm", "default:approval_unless_named", false, ""},
		// The same List delete as above: the one already waiting answers.
		{"v1.1 List delete, upper case", "/1.1/LISTS/destroy", "", []map[string]string{{"key": "list_id", "value": list.ID}}, "x_list_delete", "", false, ""},
		// A write the endpoint table does not list, whatever x_post's rule.
		{"unlisted", "/1.1/lists/members/destroy_all.json", "", []map[string]string{{"key": "list_id", "value": list.ID}}, "", "hard:unlisted_write", false, ""},
	}
	sim := e.counters()
	queued := map[string]int64{}
	for _, c := range calls {
		n := xl.len()
		args := map[string]any{"path": c.path}
		if c.body != "" {
			args["body"] = c.body
		}
		if c.query != nil {
			args["query"] = c.query
		}
		var q routed
		e.call("x_post", args).ok(t, &q)
		if got := xl.since(n); len(got) != 0 {
			t.Errorf("%s: %v reached X before anyone approved it", c.name, got)
		}
		if !q.Routed || q.MatchedRuleID != c.rule || c.rule == "" && !strings.Contains(q.Reason, "already waiting") {
			t.Errorf("%s: x_post answered %+v, want routed to approval by %s", c.name, q, c.rule)
			continue
		}
		var it gateway.ApprovalItem
		e.call("get_approval_item", map[string]any{"id": q.ApprovalID}).ok(t, &it)
		if it.Tool != "x_post" || it.EquivalentTool != c.equiv {
			t.Errorf("%s: approval item names %q / %q, want x_post / %q", c.name, it.Tool, it.EquivalentTool, c.equiv)
		}
		if c.approve {
			queued[c.name] = q.ApprovalID
		}
	}
	e.requireDelta(sim, nil)
	if t.Failed() {
		return
	}

	// Approved, each reaches X once and its audit row names the typed tool.
	for _, c := range calls {
		if !c.approve {
			continue
		}
		before, n := e.counters(), xl.len()
		var it gateway.ApprovalItem
		r := e.call("approve_item", map[string]any{"id": queued[c.name]}).ok(t, &it)
		if it.Status != gateway.ApprovalExecuted || it.CorrelationID == "" {
			t.Fatalf("%s: approved item %+v", c.name, it)
		}
		if strings.HasPrefix(c.path, "/2/") {
			// A v2 message is undone as x_send_dm's is: by deleting it.
			dms := e.Sim.DMs()
			requireUndo(t, r.Meta.Rollback, "x_delete_dm", map[string]any{"dm_event_id": dms[len(dms)-1].ID})
		}
		if got := xl.since(n); len(got) != 1 {
			t.Errorf("%s: the approved request reached X as %v, want once", c.name, got)
		}
		e.requireDelta(before, map[string]int64{c.counter: 1})
		a := e.audit(it.CorrelationID)
		if a.Tool != "x_post" || a.EquivalentTool != c.equiv || a.Status != "success" {
			t.Errorf("%s: audit row %s / %s / %s, want x_post / %s / success", c.name, a.Tool, a.EquivalentTool, a.Status, c.equiv)
		}
	}

	// Four messages are the day's cap: a fifth, raw or typed, is refused
	// before X.
	before, n := e.counters(), xl.len()
	var q routed
	e.call("x_post", map[string]any{"path": "/2/dm_conversations/" + conv + "/messages", "body": `{"text":"raw five"}`}).ok(t, &q)
	if !q.Routed {
		t.Fatalf("the fifth raw message answered %+v, want routed", q)
	}
	e.call("approve_item", map[string]any{"id": q.ApprovalID}).fails(t, apperr.PolicyRateLimited).mentions(t, "limits.max_dms_per_day")
	if got := xl.since(n); len(got) != 0 {
		t.Errorf("the fifth message reached X: %v", got)
	}
	e.requireDelta(before, nil)
	if n := len(e.Sim.DMs()); n != 4 {
		t.Errorf("the emulator holds %d messages, want 4", n)
	}
}
