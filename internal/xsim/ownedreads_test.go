package xsim

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// ownedWorld is the demo world plus what the five owned reads the emulator
// added (blocking, muting, pinned_lists, followed_lists, list_memberships)
// return, each list newest first.
type ownedWorld struct {
	blocked, muted              []string // users, latest first
	pinned, followed, memberOf  []string // the demo account's Lists, newest List first
	otherFollows, otherMemberOf []string // another person's, as the demo account sees them
	other                       string   // that person
	owners                      map[string]string
	listFollowers               map[string]int64 // follower_count of each List
}

// withOwnedWorld adds blocks, mutes and Lists to the world: the demo
// account blocks and mutes three people each, owns a List it pinned, and
// follows, pins or belongs to Lists of others, one of them private (which
// it must not see).
func withOwnedWorld(ow *ownedWorld) func(*Options) {
	return func(o *Options) {
		w := o.World
		me := w.DemoUserID
		brands := map[string]bool{}
		for _, id := range w.DemoAccounts {
			brands[id] = true
		}
		var p []string
		for _, u := range w.Users {
			if !brands[u.ID] {
				p = append(p, u.ID)
			}
		}
		at := func(h int) time.Time { return testEpoch.Add(-time.Duration(48-h) * time.Hour) }
		w.Relations = map[string][]Edge{
			"blocking": {{From: me, To: p[0], At: at(1)}, {From: me, To: p[1], At: at(2)}, {From: me, To: p[2], At: at(3)}},
			"muting":   {{From: me, To: p[3], At: at(1)}, {From: me, To: p[4], At: at(2)}, {From: me, To: p[5], At: at(3)}},
		}
		ow.blocked = []string{p[2], p[1], p[0]}
		ow.muted = []string{p[5], p[4], p[3]}
		ow.other = p[6]
		// Ids below any the world hands out, ascending in this order.
		mine := List{ID: "1000000000000000001", OwnerID: me, Name: "mine", CreatedAt: at(1), PinnedBy: []string{me}}
		b := List{ID: "1000000000000000002", OwnerID: p[0], Name: "b", CreatedAt: at(2), Members: []string{me, p[7]},
			Followers: []string{ow.other, me}, PinnedBy: []string{me}, FollowerBase: 10}
		c := List{ID: "1000000000000000003", OwnerID: p[1], Name: "c", CreatedAt: at(3), Members: []string{me}, Followers: []string{me}}
		hidden := List{ID: "1000000000000000004", OwnerID: p[2], Name: "hidden", Private: true, CreatedAt: at(4),
			Members: []string{me, ow.other}, Followers: []string{ow.other}}
		e := List{ID: "1000000000000000005", OwnerID: p[2], Name: "e", CreatedAt: at(5), Members: []string{me, ow.other}}
		w.Lists = append(w.Lists, mine, b, c, hidden, e)
		ow.pinned = []string{b.ID, mine.ID}
		ow.followed = []string{c.ID, b.ID}
		ow.memberOf = []string{e.ID, c.ID, b.ID}
		ow.otherFollows = []string{b.ID}
		ow.otherMemberOf = []string{e.ID}
		ow.owners = map[string]string{}
		ow.listFollowers = map[string]int64{}
		for _, l := range w.Lists {
			ow.owners[l.ID] = l.OwnerID
			ow.listFollowers[l.ID] = l.FollowerBase + int64(len(l.Followers))
		}
	}
}

func ids(r resp) []string {
	var out []string
	for _, d := range r.list() {
		out = append(out, d.(map[string]any)["id"].(string))
	}
	return out
}

// TestOwnedReadsServed: the five owned reads the emulator serves answer as
// X's spec says, for the authenticated user and for another; page by
// max_results and pagination_token where the spec has them; answer an
// account with none with an empty page; and bill each resource at $0.001
// on a pay-per-use app when the path's user is the caller, the ordinary
// read price otherwise, and nothing when refused.
func TestOwnedReadsServed(t *testing.T) {
	ow := &ownedWorld{}
	e := newEnv(t, withOwnedWorld(ow))
	if err := e.s.SetAccess(AccessPayPerUse); err != nil {
		t.Fatal(err)
	}
	brand := e.s.DemoAccounts()["brand_b"]
	brandTok, _, _ := e.s.IssueToken(brand, e.s.AllScopes())
	mine := func(suffix string) string { return "/2/users/" + e.me + "/" + suffix }
	theirs := func(suffix string) string { return "/2/users/" + ow.other + "/" + suffix }
	cases := []struct {
		name   string
		path   string
		token  string // "" is the demo account's
		status int
		want   []string // ids of the page, in order
		next   bool     // a next_token is expected
		// bill is the units billed per kind.
		bill map[string]int64
	}{
		{"blocking: the owner's", mine("blocking?user.fields=username"), "", 200, ow.blocked, false, map[string]int64{BillOwnedRead: 3}},
		{"blocking: first page", mine("blocking?max_results=2"), "", 200, ow.blocked[:2], true, map[string]int64{BillOwnedRead: 2}},
		{"blocking: another user's is refused", theirs("blocking"), "", 403, nil, false, nil},
		{"blocking: none", "/2/users/" + brand + "/blocking", brandTok, 200, nil, false, nil},
		{"blocking: max_results out of range", mine("blocking?max_results=1001"), "", 400, nil, false, nil},
		{"muting: the owner's", mine("muting"), "", 200, ow.muted, false, map[string]int64{BillOwnedRead: 3}},
		{"muting: first page", mine("muting?max_results=1"), "", 200, ow.muted[:1], true, map[string]int64{BillOwnedRead: 1}},
		{"muting: another user's is refused", theirs("muting"), "", 403, nil, false, nil},
		{"muting: none", "/2/users/" + brand + "/muting", brandTok, 200, nil, false, nil},
		{"pinned_lists: the owner's, one page", mine("pinned_lists?list.fields=private"), "", 200, ow.pinned, false, map[string]int64{BillOwnedRead: 2}},
		{"pinned_lists: another user's is refused", theirs("pinned_lists"), "", 403, nil, false, nil},
		{"pinned_lists: none", "/2/users/" + brand + "/pinned_lists", brandTok, 200, nil, false, nil},
		{"followed_lists: the owner's", mine("followed_lists"), "", 200, ow.followed, false, map[string]int64{BillOwnedRead: 2}},
		{"followed_lists: first page", mine("followed_lists?max_results=1"), "", 200, ow.followed[:1], true, map[string]int64{BillOwnedRead: 1}},
		{"followed_lists: another user's at the List read price", theirs("followed_lists"), "", 200, ow.otherFollows, false, map[string]int64{BillListRead: 1}},
		{"followed_lists: none", "/2/users/" + brand + "/followed_lists", brandTok, 200, nil, false, nil},
		{"followed_lists: max_results out of range", mine("followed_lists?max_results=101"), "", 400, nil, false, nil},
		{"list_memberships: the owner's, without a private List of another", mine("list_memberships"), "", 200, ow.memberOf, false, map[string]int64{BillOwnedRead: 3}},
		{"list_memberships: first page", mine("list_memberships?max_results=2"), "", 200, ow.memberOf[:2], true, map[string]int64{BillOwnedRead: 2}},
		{"list_memberships: another user's at the List read price", theirs("list_memberships"), "", 200, ow.otherMemberOf, false, map[string]int64{BillListRead: 1}},
		{"list_memberships: none", "/2/users/" + brand + "/list_memberships", brandTok, 200, nil, false, nil},
		{"list_memberships: a bad page token", mine("list_memberships?pagination_token=nope"), "", 400, nil, false, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tok := e.token
			if tc.token != "" {
				tok = tc.token
			}
			e.s.mu.Lock()
			e.s.st.seen = map[string]bool{} // every case pays for what it reads
			e.s.mu.Unlock()
			// Forgotten behind the log's back: the state file is written whole.
			if err := e.s.Save(); err != nil {
				t.Fatal(err)
			}
			before := e.s.Billing()
			r := e.doTok("GET", tc.path, tok, nil)
			after := e.s.Billing()
			wantStatus(t, r, tc.status)
			switch tc.status {
			case 403:
				if d, _ := r.body["detail"].(string); !strings.Contains(d, "`id`") {
					t.Errorf("refusal %s does not name the id", r.raw)
				}
			case 400:
				param := "max_results"
				if strings.Contains(tc.path, "pagination_token") {
					param = "pagination_token"
				}
				if !strings.Contains(string(r.raw), param) {
					t.Errorf("400 %s does not name %s", r.raw, param)
				}
			case 200:
				if got := ids(r); !slices.Equal(got, tc.want) {
					t.Errorf("ids %v, want %v", got, tc.want)
				}
				if n, _ := r.meta()["result_count"].(float64); int(n) != len(tc.want) {
					t.Errorf("result_count %v, want %d", r.meta()["result_count"], len(tc.want))
				}
				if _, has := r.meta()["next_token"]; has != tc.next {
					t.Errorf("next_token present %v, want %v: %s", has, tc.next, r.raw)
				}
				if len(tc.want) == 0 {
					if _, has := r.body["data"]; has {
						t.Errorf("an empty page has data: %s", r.raw)
					}
				}
			}
			var wantMicros int64
			for kind, units := range tc.bill {
				if got := after.Units[kind] - before.Units[kind]; got != units {
					t.Errorf("%s units %d, want %d (billed %v)", kind, got, units, diffUnits(before, after))
				}
				wantMicros += units * Prices()[kind]
			}
			if got := after.Micros - before.Micros; got != wantMicros {
				t.Errorf("billed %d micro-dollars (%v), want %d", got, diffUnits(before, after), wantMicros)
			}
		})
	}

	t.Run("pages follow on", func(t *testing.T) {
		for _, p := range []struct {
			path string
			max  int
			want []string
		}{
			{mine("blocking"), 2, ow.blocked},
			{mine("muting"), 2, ow.muted},
			{mine("followed_lists"), 1, ow.followed},
			{mine("list_memberships"), 2, ow.memberOf},
		} {
			var got []string
			tok := ""
			for i := 0; ; i++ {
				q := "?max_results=" + strconv.Itoa(p.max)
				if tok != "" {
					q += "&pagination_token=" + tok
				}
				r := e.get(p.path + q)
				wantStatus(t, r, 200)
				if i > 0 && r.meta()["previous_token"] == nil {
					t.Errorf("%s page %d has no previous_token: %s", p.path, i, r.raw)
				}
				got = append(got, ids(r)...)
				tok, _ = r.meta()["next_token"].(string)
				if tok == "" || i > len(p.want) {
					break
				}
			}
			if !slices.Equal(got, p.want) {
				t.Errorf("%s paged: %v, want %v", p.path, got, p.want)
			}
		}
	})

	t.Run("list fields and the owner expansion", func(t *testing.T) {
		for _, suffix := range []string{"pinned_lists", "followed_lists", "list_memberships"} {
			r := e.get(mine(suffix + "?list.fields=follower_count,member_count,private&expansions=owner_id&user.fields=username"))
			wantStatus(t, r, 200)
			owners := map[string]bool{}
			for _, d := range r.list() {
				l := d.(map[string]any)
				id := l["id"].(string)
				if l["owner_id"] != ow.owners[id] {
					t.Errorf("%s: List %s owner_id %v, want %s", suffix, id, l["owner_id"], ow.owners[id])
				}
				if n, _ := l["follower_count"].(float64); int64(n) != ow.listFollowers[id] {
					t.Errorf("%s: List %s follower_count %v, want %d", suffix, id, l["follower_count"], ow.listFollowers[id])
				}
				if _, ok := l["private"].(bool); !ok {
					t.Errorf("%s: List %s without private: %v", suffix, id, l)
				}
				owners[ow.owners[id]] = true
			}
			inc, _ := r.body["includes"].(map[string]any)
			users, _ := inc["users"].([]any)
			if len(users) != len(owners) {
				t.Errorf("%s: includes.users %v, want the %d owners", suffix, inc, len(owners))
			}
			for _, u := range users {
				um := u.(map[string]any)
				if !owners[um["id"].(string)] || um["username"] == nil {
					t.Errorf("%s: included user %v is no owner or lacks its username", suffix, um)
				}
			}
		}
	})

	t.Run("enterprise: the owner's reads keep their price", func(t *testing.T) {
		if err := e.s.SetAccess(AccessEnterprise); err != nil {
			t.Fatal(err)
		}
		defer func() { _ = e.s.SetAccess(AccessPayPerUse) }()
		e.s.mu.Lock()
		e.s.st.seen = map[string]bool{}
		e.s.mu.Unlock()
		if err := e.s.Save(); err != nil {
			t.Fatal(err)
		}
		before := e.s.Billing()
		wantStatus(t, e.get(mine("blocking")), 200)
		wantStatus(t, e.get(mine("followed_lists")), 200)
		if d := diffUnits(before, e.s.Billing()); d[BillUserRead] != 3 || d[BillListRead] != 2 || d[BillOwnedRead] != 0 {
			t.Errorf("billed %v, want 3 user reads and 2 List reads", d)
		}
	})
}

// TestListPinsAndFollows: following and pinning a List, as the spec's
// POST and DELETE routes do, shows in the owned reads and in the List's
// follower_count, survives the world file, is the caller's own act alone,
// pins only a List the caller owns or follows, and hides nothing a
// private List keeps from others.
func TestListPinsAndFollows(t *testing.T) {
	e := newEnv(t)
	if err := e.s.SetAccess(AccessPayPerUse); err != nil {
		t.Fatal(err)
	}
	w := e.s.World()
	var pub, priv List
	for _, l := range w.Lists {
		if l.Private {
			priv = l
		} else {
			pub = l
		}
	}
	mine := "/2/users/" + e.me
	followers := func() int64 {
		t.Helper()
		r := e.get("/2/users/" + pub.OwnerID + "/owned_lists?list.fields=follower_count")
		for _, d := range r.list() {
			if l := d.(map[string]any); l["id"] == pub.ID {
				return int64(l["follower_count"].(float64))
			}
		}
		t.Fatalf("List %s not among its owner's: %s", pub.ID, r.raw)
		return 0
	}
	base := followers()

	// A List one neither owns nor follows cannot be pinned.
	r := e.do("POST", mine+"/pinned_lists", map[string]any{"list_id": pub.ID})
	wantProblem(t, r, http.StatusForbidden, typeBlank)
	for range 2 {
		r = e.do("POST", mine+"/followed_lists", map[string]any{"list_id": pub.ID})
		wantStatus(t, r, 200)
		if r.data()["following"] != true {
			t.Fatalf("follow answered %s", r.raw)
		}
	}
	if got := followers(); got != base+1 {
		t.Fatalf("follower_count %d after a follow (twice), want %d", got, base+1)
	}
	r = e.do("POST", mine+"/pinned_lists", map[string]any{"list_id": pub.ID})
	if wantStatus(t, r, 200); r.data()["pinned"] != true {
		t.Fatalf("pin answered %s", r.raw)
	}
	if got := ids(e.get(mine + "/followed_lists")); !slices.Equal(got, []string{pub.ID}) {
		t.Fatalf("followed_lists %v after the follow", got)
	}
	if got := ids(e.get(mine + "/pinned_lists")); !slices.Equal(got, []string{pub.ID}) {
		t.Fatalf("pinned_lists %v after the pin", got)
	}
	back := newState(e.s.st.snapshot(testEpoch))
	if l := back.lists[pub.ID]; l == nil || !slices.Equal(l.Followers, []string{e.me}) || !slices.Equal(l.PinnedBy, []string{e.me}) {
		t.Fatalf("the follow and pin did not survive the world file: %+v", l)
	}

	for _, bad := range []struct {
		name   string
		method string
		path   string
		body   any
		status int
		param  string
	}{
		{"another user's follow", "POST", "/2/users/" + pub.OwnerID + "/followed_lists", map[string]any{"list_id": pub.ID}, 403, "id"},
		{"another user's pin", "POST", "/2/users/" + pub.OwnerID + "/pinned_lists", map[string]any{"list_id": pub.ID}, 403, "id"},
		{"another user's unpin", "DELETE", "/2/users/" + pub.OwnerID + "/pinned_lists/" + pub.ID, nil, 403, "id"},
		{"a private List of another", "POST", mine + "/followed_lists", map[string]any{"list_id": priv.ID}, 404, "list_id"},
		{"a List that does not exist", "DELETE", mine + "/followed_lists/12", nil, 404, "list_id"},
		{"a list_id that is no id", "POST", mine + "/pinned_lists", map[string]any{"list_id": "abc"}, 400, "list_id"},
		{"no list_id", "POST", mine + "/followed_lists", map[string]any{}, 400, "list_id"},
	} {
		r := e.do(bad.method, bad.path, bad.body)
		if r.status != bad.status || !strings.Contains(string(r.raw), bad.param) {
			t.Errorf("%s: %d %s, want %d naming %s", bad.name, r.status, r.raw, bad.status, bad.param)
		}
	}

	r = e.do("DELETE", mine+"/pinned_lists/"+pub.ID, nil)
	if wantStatus(t, r, 200); r.data()["pinned"] != false {
		t.Fatalf("unpin answered %s", r.raw)
	}
	r = e.do("DELETE", mine+"/followed_lists/"+pub.ID, nil)
	if wantStatus(t, r, 200); r.data()["following"] != false {
		t.Fatalf("unfollow answered %s", r.raw)
	}
	if got := followers(); got != base {
		t.Fatalf("follower_count %d after the unfollow, want %d", got, base)
	}
	if got := ids(e.get(mine + "/pinned_lists")); len(got) != 0 {
		t.Fatalf("pinned_lists %v after the unpin", got)
	}
	b := e.s.Billing()
	for key, want := range map[string]int64{
		"POST /2/users/{id}/followed_lists": 2, "POST /2/users/{id}/pinned_lists": 1,
		"DELETE /2/users/{id}/pinned_lists/{list_id}": 1, "DELETE /2/users/{id}/followed_lists/{list_id}": 1,
	} {
		if b.Requests[key] != want {
			t.Errorf("billed requests of %s = %d, want %d", key, b.Requests[key], want)
		}
	}
}

// TestBlockArrangesABlock: Block makes a block GET blocking shows, and
// refuses users that do not exist and a block of oneself.
func TestBlockArrangesABlock(t *testing.T) {
	e := newEnv(t)
	other := e.userID("hn_hank")
	if err := e.s.Block(e.me, other); err != nil {
		t.Fatal(err)
	}
	if got := ids(e.get("/2/users/" + e.me + "/blocking")); !slices.Equal(got, []string{other}) {
		t.Fatalf("blocking %v, want [%s]", got, other)
	}
	for _, bad := range [][2]string{{e.me, "1"}, {"1", other}, {e.me, e.me}} {
		if err := e.s.Block(bad[0], bad[1]); err == nil {
			t.Errorf("Block(%s, %s) accepted", bad[0], bad[1])
		}
	}
}
