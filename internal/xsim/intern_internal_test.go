package xsim

import (
	"testing"
	"time"
	"unsafe"
)

// sameString reports whether a and b share their bytes, not just their
// value.
func sameString(a, b string) bool {
	return len(a) == len(b) && unsafe.StringData(a) == unsafe.StringData(b)
}

// TestLoadedWorldKeepsEachStringOnce: a loaded world's ids are shared by
// every place that names them (a post's author with the user, a like with
// the post and the liker), not decoded afresh for each.
func TestLoadedWorldKeepsEachStringOnce(t *testing.T) {
	w := DemoWorldAt(7, time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	// Each string a fresh copy, as decoding the world file makes them.
	fresh := func(s string) string { return string([]byte(s)) }
	for i := range w.Users {
		w.Users[i].ID = fresh(w.Users[i].ID)
	}
	for i := range w.Tweets {
		tw := &w.Tweets[i]
		tw.ID, tw.AuthorID, tw.ConversationID, tw.Lang = fresh(tw.ID), fresh(tw.AuthorID), fresh(tw.ConversationID), fresh(tw.Lang)
	}
	for i := range w.Likes {
		w.Likes[i].From, w.Likes[i].To = fresh(w.Likes[i].From), fresh(w.Likes[i].To)
	}
	if len(w.Tweets) == 0 || len(w.Likes) == 0 {
		t.Fatal("the demo world has no posts or likes to check")
	}
	s := New(Options{World: w})
	st := s.st
	langs := map[string]string{}
	for id, tw := range st.tweets {
		author := st.users[tw.AuthorID]
		if author == nil {
			continue
		}
		if !sameString(tw.AuthorID, author.ID) {
			t.Fatalf("post %s: its author id is a copy of the user's", id)
		}
		if conv := st.tweets[tw.ConversationID]; conv != nil && !sameString(tw.ConversationID, conv.ID) {
			t.Fatalf("post %s: its conversation id is a copy of the first post's", id)
		}
		if first, ok := langs[tw.Lang]; ok && !sameString(first, tw.Lang) {
			t.Fatalf("post %s: its language %q is a copy", id, tw.Lang)
		}
		langs[tw.Lang] = tw.Lang
	}
	liked := 0
	for user, es := range st.likesBy {
		for _, e := range es {
			if !sameString(e.From, st.users[user].ID) || !sameString(e.To, st.tweets[e.To].ID) {
				t.Fatalf("like %s -> %s: the edge holds copies of the ids", e.From, e.To)
			}
			liked++
		}
	}
	if liked == 0 {
		t.Fatal("no like was loaded")
	}
}
