package main

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/tuitbot/tuitbot/internal/optouts"
	"github.com/tuitbot/tuitbot/internal/store"
)

// TestOptOutsListAndClear: `optouts list` shows a user who said stop, and
// `optouts clear @USERNAME` takes them off the suppression list, so the
// automation rules let calls reach them again.
func TestOptOutsListAndClear(t *testing.T) {
	h := newHome(t)
	ctx := context.Background()
	withList := func(fn func(s optouts.Store)) {
		t.Helper()
		db, err := store.Open(ctx, h.path("tuitbot.db"), store.Options{})
		if err != nil {
			t.Fatalf("open the home's database: %v", err)
		}
		defer db.Close()
		fn(optouts.Store{DB: db, AccountID: "default"})
	}
	withList(func(s optouts.Store) {
		if ok, err := s.Record(ctx, optouts.Message{ID: "900", AuthorID: "77", AuthorUsername: "Rae", Text: "@tuitbot_demo stop"}); err != nil || !ok {
			t.Fatalf("Record = %v, %v", ok, err)
		}
	})
	var list OptOutList
	if err := json.Unmarshal([]byte(h.ok(t, "optouts", "list", "--json").stdout), &list); err != nil {
		t.Fatal(err)
	}
	if list.Count != 1 || list.OptOuts[0].UserID != "77" || list.OptOuts[0].Username != "rae" || list.OptOuts[0].Phrase != "stop" {
		t.Fatalf("optouts list: %+v, want rae's opt-out", list)
	}
	mustContain(t, "optouts list", h.ok(t, "optouts", "list").stdout, "77", "rae", "stop")
	var cleared OptOutCleared
	if err := json.Unmarshal([]byte(h.ok(t, "optouts", "clear", "@Rae", "--json").stdout), &cleared); err != nil {
		t.Fatal(err)
	}
	if !cleared.Cleared {
		t.Fatalf("optouts clear: %+v, want cleared", cleared)
	}
	withList(func(s optouts.Store) {
		if out, err := s.OptedOut(ctx, "77"); err != nil || out {
			t.Fatalf("after clear: OptedOut = %v, %v; want false", out, err)
		}
	})
	mustContain(t, "second clear", h.ok(t, "optouts", "clear", "77").stdout, "was not on the suppression list")
	h.fails(t, "optouts", "clear")
}
