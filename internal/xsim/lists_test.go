package xsim

import (
	"net/http"
	"slices"
	"testing"
)

// TestListsLifecycle: a List is created, gains a member whose posts make
// its timeline, survives the world file, loses the member and is deleted;
// a repeated add changes nothing but is billed like any request, and every
// List endpoint is billed under its own name.
func TestListsLifecycle(t *testing.T) {
	e := newEnv(t)
	other := e.s.World().Lists[0].Members[0]

	r := e.do("POST", "/2/lists", map[string]any{"name": "Builders", "description": "people who ship"})
	wantStatus(t, r, http.StatusCreated)
	id, _ := r.data()["id"].(string)
	if id == "" || r.data()["name"] != "Builders" {
		t.Fatalf("create answered %s", r.raw)
	}
	add := "/2/lists/" + id + "/members"
	for range 2 {
		r = e.do("POST", add, map[string]any{"user_id": other})
		wantStatus(t, r, http.StatusOK)
		if r.data()["is_member"] != true {
			t.Fatalf("add answered %s", r.raw)
		}
	}
	if got := e.s.ListMembers(id); !slices.Equal(got, []string{other}) {
		t.Fatalf("members %v after adding %s twice", got, other)
	}
	if n := e.counter(CountListMembersAdded); n != 1 {
		t.Fatalf("%s = %d after a repeated add, want 1", CountListMembersAdded, n)
	}

	r = e.get(add + "?user.fields=username")
	if l := r.list(); len(l) != 1 || l[0].(map[string]any)["id"] != other {
		t.Fatalf("members read %s", r.raw)
	}
	r = e.get("/2/lists/" + id + "/tweets?max_results=5")
	if len(r.list()) == 0 {
		t.Fatalf("the list's timeline is empty though its member posts: %s", r.raw)
	}
	for _, tw := range r.list() {
		tid := tw.(map[string]any)["id"].(string)
		e.s.mu.Lock()
		author := e.s.st.tweets[tid].AuthorID
		e.s.mu.Unlock()
		if author != other {
			t.Fatalf("list timeline holds post %s by %s, who is no member", tid, author)
		}
	}

	back := newState(e.s.st.snapshot(testEpoch))
	if l := back.lists[id]; l == nil || l.Name != "Builders" || !slices.Equal(l.Members, []string{other}) {
		t.Fatalf("the list did not survive the world file: %+v", l)
	}

	r = e.do("DELETE", add+"/"+other, nil)
	if wantStatus(t, r, http.StatusOK); r.data()["is_member"] != false || len(e.s.ListMembers(id)) != 0 {
		t.Fatalf("remove answered %s; members now %v", r.raw, e.s.ListMembers(id))
	}
	wantStatus(t, e.do("DELETE", "/2/lists/"+id, nil), http.StatusOK)
	wantProblem(t, e.do("DELETE", "/2/lists/"+id, nil), http.StatusNotFound, typeNotFound)

	b := e.s.Billing()
	for key, want := range map[string]int64{
		"POST /2/lists": 1, "POST /2/lists/{id}/members": 2, "DELETE /2/lists/{id}/members/{user_id}": 1,
		"DELETE /2/lists/{id}": 1, "GET /2/lists/{id}/members": 1, "GET /2/lists/{id}/tweets": 1,
	} {
		if b.Requests[key] != want {
			t.Errorf("billed requests of %s = %d, want %d", key, b.Requests[key], want)
		}
	}
}

// TestPrivateListsAreTheOwnersAlone: someone else's private List is read
// as a List that does not exist, left out of their owned lists, and only
// an owner may change a List.
func TestPrivateListsAreTheOwnersAlone(t *testing.T) {
	e := newEnv(t)
	w := e.s.World()
	var pub, priv List
	for _, l := range w.Lists {
		if l.Private {
			priv = l
		} else {
			pub = l
		}
	}
	if priv.ID == "" || pub.ID == "" || priv.OwnerID == e.me {
		t.Fatalf("the demo world needs a public and a private list of another user: %+v", w.Lists)
	}
	for _, path := range []string{"/2/lists/" + priv.ID + "/members", "/2/lists/" + priv.ID + "/tweets"} {
		r := e.get(path)
		wantStatus(t, r, http.StatusOK)
		if len(r.list()) != 0 || r.body["errors"] == nil {
			t.Fatalf("GET %s showed a private list to a stranger: %s", path, r.raw)
		}
	}
	r := e.get("/2/users/" + priv.OwnerID + "/owned_lists?list.fields=private,member_count")
	if l := r.list(); len(l) != 1 || l[0].(map[string]any)["id"] != pub.ID {
		t.Fatalf("a stranger sees owned lists %s, want only %s", r.raw, pub.ID)
	}
	owner, _, _ := e.s.IssueToken(priv.OwnerID, e.s.AllScopes())
	r = e.doTok("GET", "/2/users/"+priv.OwnerID+"/owned_lists", owner, nil)
	if len(r.list()) != 2 {
		t.Fatalf("the owner sees owned lists %s, want both", r.raw)
	}
	if r = e.doTok("GET", "/2/lists/"+priv.ID+"/members", owner, nil); len(r.list()) != len(priv.Members) {
		t.Fatalf("the owner reads members %s, want %d", r.raw, len(priv.Members))
	}
	wantProblem(t, e.do("POST", "/2/lists/"+pub.ID+"/members", map[string]any{"user_id": e.me}), http.StatusForbidden, typeBlank)
	wantProblem(t, e.do("DELETE", "/2/lists/"+pub.ID, nil), http.StatusForbidden, typeBlank)
	wantProblem(t, e.do("DELETE", "/2/lists/"+priv.ID, nil), http.StatusNotFound, typeNotFound)
	if got := e.s.ListMembers(pub.ID); !slices.Equal(got, pub.Members) {
		t.Fatalf("a stranger changed the list: %v", got)
	}
}

// TestListRequestsAreValidated: X's limits on a List's name, description
// and member id are answered with its invalid-request error naming the
// field.
func TestListRequestsAreValidated(t *testing.T) {
	e := newEnv(t)
	for _, c := range []struct {
		body  any
		field string
	}{
		{map[string]any{"description": "no name"}, "name"},
		{map[string]any{"name": ""}, "name"},
		{map[string]any{"name": "a name far longer than twenty-five"}, "name"},
		{map[string]any{"name": "ok", "description": string(make([]byte, 101))}, "description"},
		{map[string]any{"name": "ok", "mode": "private"}, "body"},
	} {
		r := e.do("POST", "/2/lists", c.body)
		wantProblem(t, r, http.StatusBadRequest, typeInvalidRequest)
		if r.body["parameter"] != c.field {
			t.Errorf("%v: parameter %v, want %s", c.body, r.body["parameter"], c.field)
		}
	}
	r := e.do("POST", "/2/lists", map[string]any{"name": "mine"})
	id := r.data()["id"].(string)
	bad := e.do("POST", "/2/lists/"+id+"/members", map[string]any{"user_id": "x1"})
	if wantProblem(t, bad, http.StatusBadRequest, typeInvalidRequest); bad.body["parameter"] != "user_id" {
		t.Fatalf("bad member id answered %s", bad.raw)
	}
	wantProblem(t, e.do("POST", "/2/lists/"+id+"/members", map[string]any{"user_id": "12"}), http.StatusNotFound, typeNotFound)
	if n := e.counter(CountListsCreated); n != 1 {
		t.Fatalf("%s = %d, want 1", CountListsCreated, n)
	}
}
