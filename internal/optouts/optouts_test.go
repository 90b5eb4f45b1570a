package optouts

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/store"
)

func openStore(t *testing.T) Store {
	t.Helper()
	db, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "t.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	at := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	return Store{DB: db, AccountID: "default", Now: func() time.Time { return at }}
}

// TestRecordListClear: a message saying an opt-out phrase suppresses its
// author, by id and by username in any case; another message does not;
// clearing lifts it.
func TestRecordListClear(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	for _, m := range []Message{
		{ID: "1", AuthorID: "42", AuthorUsername: "Alice", Text: "@tuitbot STOP"},
		{ID: "2", AuthorID: "43", AuthorUsername: "bob", Text: "@tuitbot nice stopwatch"},
		{ID: "3", AuthorID: "42", AuthorUsername: "Alice", Text: "unsubscribe"},
	} {
		if _, err := s.Record(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		user string
		want bool
	}{{"42", true}, {"@ALICE", true}, {"alice", true}, {"43", false}, {"bob", false}, {"", false}} {
		got, err := s.OptedOut(ctx, tc.user)
		if err != nil || got != tc.want {
			t.Fatalf("OptedOut(%q) = %v, %v; want %v", tc.user, got, err, tc.want)
		}
	}
	list, err := s.List(ctx)
	if err != nil || len(list) != 1 || list[0].UserID != "42" || list[0].Phrase != "stop" || list[0].SourceID != "1" {
		t.Fatalf("List = %+v, %v; want alice's first opt-out only", list, err)
	}
	if ok, err := s.Clear(ctx, "@Alice"); err != nil || !ok {
		t.Fatalf("Clear = %v, %v", ok, err)
	}
	if got, _ := s.OptedOut(ctx, "42"); got {
		t.Fatal("still opted out after Clear")
	}
	if ok, _ := s.Clear(ctx, "42"); ok {
		t.Fatal("a second Clear reported a row")
	}
}
