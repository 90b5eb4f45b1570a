package xsim

import (
	"testing"
	"time"
)

// TestRelationsSurviveTheWorldFile: a relation (muting) is kept in the
// world file and read back, and only between users that exist.
func TestRelationsSurviveTheWorldFile(t *testing.T) {
	w := &World{Users: []User{{ID: "1", Username: "a"}, {ID: "2", Username: "b"}}}
	st := newState(w)
	if !st.relate("muting", Edge{From: "1", To: "2"}) || st.relate("muting", Edge{From: "1", To: "2"}) {
		t.Fatal("relate must report a new edge once")
	}
	back := newState(st.snapshot(time.Unix(0, 0)))
	if !back.related("muting", "1", "2") || back.related("muting", "2", "1") {
		t.Fatal("the relation did not survive the world file as it was")
	}
	if !back.unrelate("muting", "1", "2") || back.related("muting", "1", "2") || back.unrelate("muting", "1", "2") {
		t.Fatal("unrelate must remove the edge once")
	}
	if got := newState(back.snapshot(time.Unix(0, 0))).relationEdges(); len(got) != 0 {
		t.Fatalf("an emptied relation is still written: %v", got)
	}
}
