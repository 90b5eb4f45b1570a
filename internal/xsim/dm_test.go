package xsim

import (
	"net/http"
	"path/filepath"
	"testing"
)

// TestDirectMessages: a message is stored once, billed once as a DM
// interaction, listed newest first and per conversation (each event billed
// once a day as a DM event read); a user who takes messages only from the
// accounts they follow gets X's 403 and nothing is billed; only the sender
// may delete a message.
func TestDirectMessages(t *testing.T) {
	e := newEnv(t)
	p := Prices()
	gabe, victor := e.userID("gopher_gabe"), e.userID("vc_victor")
	r := e.do("POST", "/2/dm_conversations/with/"+gabe+"/messages", map[string]any{"text": "hello gabe"})
	wantStatus(t, r, http.StatusCreated)
	id := r.data()["dm_event_id"].(string)
	if conv := r.data()["dm_conversation_id"]; conv != dmConversationID(e.me, gabe) {
		t.Fatalf("conversation id %v", conv)
	}
	b := e.s.Billing()
	if b.Units[BillDMCreate] != 1 || b.Micros != p[BillDMCreate] || e.counter(CountDMsSent) != 1 {
		t.Fatalf("after one message: billing %+v, sent %d", b, e.counter(CountDMsSent))
	}

	refused := e.do("POST", "/2/dm_conversations/with/"+victor+"/messages", map[string]any{"text": "hello victor"})
	wantProblem(t, refused, http.StatusForbidden, typeBlank)
	if d := refused.body["detail"]; d != DetailDMNotAllowed {
		t.Fatalf("refusal detail %v", d)
	}
	if e.s.Billing().Micros != p[BillDMCreate] || len(e.s.DMs()) != 1 {
		t.Fatal("a refused message was stored or billed")
	}
	// Once victor follows the demo account, the message goes through.
	e.s.mu.Lock()
	e.s.st.follow(Edge{From: victor, To: e.me})
	e.s.mu.Unlock()
	wantStatus(t, e.do("POST", "/2/dm_conversations/with/"+victor+"/messages", map[string]any{"text": "hello victor"}), http.StatusCreated)

	all := e.get("/2/dm_events?expansions=sender_id")
	wantStatus(t, all, http.StatusOK)
	if l := all.list(); len(l) != 2 || l[0].(map[string]any)["text"] != "hello victor" || l[1].(map[string]any)["sender_id"] != e.me {
		t.Fatalf("all events %s", all.raw)
	}
	one := e.get("/2/dm_conversations/with/" + gabe + "/dm_events")
	if l := one.list(); len(l) != 1 || l[0].(map[string]any)["id"] != id {
		t.Fatalf("conversation events %s", one.raw)
	}
	if n := e.s.Billing().Units[BillDMRead]; n != 2 {
		t.Fatalf("DM event reads billed %d, want 2 (each event once a day)", n)
	}
	wantStatus(t, e.get("/2/dm_events?event_types=Typing"), http.StatusBadRequest)

	// Gabe cannot delete the demo account's message.
	gabeTok, _, _ := e.s.IssueToken(gabe, e.s.AllScopes())
	wantStatus(t, e.doTok("DELETE", "/2/dm_events/"+id, gabeTok, nil), http.StatusForbidden)
	wantStatus(t, e.do("DELETE", "/2/dm_events/"+id, nil), http.StatusOK)
	wantStatus(t, e.do("DELETE", "/2/dm_events/"+id, nil), http.StatusNotFound)
	if l := e.get("/2/dm_conversations/with/" + gabe + "/dm_events").list(); len(l) != 0 {
		t.Fatalf("a deleted message is still listed: %v", l)
	}
}

// TestCommunitiesAndTierFlag: a community search finds by name and bills
// community reads; a member posts in a community, a non-member gets X's
// 403; the quotes-need-a-higher-tier flag answers X's client-forbidden
// 403 and survives a save and a load of the world.
func TestCommunitiesAndTierFlag(t *testing.T) {
	e := newEnv(t)
	found := e.get("/2/communities/search?query=agents&community.fields=member_count")
	wantStatus(t, found, http.StatusOK)
	l := found.list()
	if len(l) != 1 || l[0].(map[string]any)["name"] != "AI agents in production" {
		t.Fatalf("search %s", found.raw)
	}
	if n := e.s.Billing().Units[BillCommunityRead]; n != 1 {
		t.Fatalf("community reads billed %d, want 1", n)
	}
	var member, other string
	for _, cm := range e.s.Communities() {
		for _, m := range cm.MemberIDs {
			if m == e.me {
				member = cm.ID
			}
		}
		if member != cm.ID {
			other = cm.ID
		}
	}
	wantStatus(t, e.do("POST", "/2/tweets", map[string]any{"text": "in my community", "community_id": member}), http.StatusCreated)
	r := e.do("POST", "/2/tweets", map[string]any{"text": "not my community", "community_id": other})
	wantProblem(t, r, http.StatusForbidden, typeBlank)
	wantStatus(t, e.do("POST", "/2/tweets", map[string]any{"text": "no such community", "community_id": "123"}), http.StatusNotFound)

	quoted := e.someTweet()
	e.s.SetQuotesNeedHigherTier(true)
	q := e.do("POST", "/2/tweets", map[string]any{"text": "a quote", "quote_tweet_id": quoted})
	wantProblem(t, q, http.StatusForbidden, typeClientForbidden)
	if q.body["reason"] != "client-not-enrolled" || q.body["detail"] != DetailFeatureUnavailable {
		t.Fatalf("tier refusal %s", q.raw)
	}
	path := filepath.Join(t.TempDir(), "world.json")
	if err := SaveWorld(path, e.s.World()); err != nil {
		t.Fatal(err)
	}
	w, err := LoadWorld(path)
	if err != nil {
		t.Fatal(err)
	}
	if !w.QuotesNeedHigherTier || len(w.Communities) != 2 || len(w.DMs) != 0 {
		t.Fatalf("loaded world: tier flag %v, %d communities", w.QuotesNeedHigherTier, len(w.Communities))
	}
	e.s.SetQuotesNeedHigherTier(false)
	wantStatus(t, e.do("POST", "/2/tweets", map[string]any{"text": "a quote", "quote_tweet_id": quoted}), http.StatusCreated)
}
