package xapi_test

import (
	"context"
	"slices"
	"testing"

	"github.com/tuitbot/tuitbot/internal/xapi"
)

// TestEditTweetAndEditState: EditTweet sends edit_options and returns the
// new version; EditState reads the chain's edit_controls and author.
func TestEditTweetAndEditState(t *testing.T) {
	ctx := context.Background()
	s := newSim(t, nil)
	first, _, err := s.c.PostTweet(ctx, xapi.PostParams{Text: "a post the client edits"})
	if err != nil {
		t.Fatal(err)
	}
	st, _, err := s.c.EditState(ctx, first.ID)
	if err != nil {
		t.Fatal(err)
	}
	ec := st.EditControls
	if st.AuthorID != s.srv.DemoUserID() || ec == nil || ec.EditsRemaining == nil || *ec.EditsRemaining != 5 ||
		ec.IsEditEligible == nil || !*ec.IsEditEligible || ec.EditableUntil == nil || !ec.EditableUntil.After(st.CreatedAt) {
		t.Fatalf("edit state %+v, controls %+v", st, ec)
	}
	v2, _, err := s.c.EditTweet(ctx, first.ID, xapi.PostParams{Text: "a post the client edited"})
	if err != nil {
		t.Fatal(err)
	}
	if v2.ID == first.ID || !slices.Equal(v2.EditHistoryTweetIDs, []string{first.ID, v2.ID}) {
		t.Fatalf("edit answered %+v", v2)
	}
	if st, _, _ := s.c.EditState(ctx, v2.ID); *st.EditControls.EditsRemaining != 4 {
		t.Fatalf("after one edit: %+v", st.EditControls)
	}
	if _, err := (xapi.PostParams{Text: "x", EditOf: first.ID, ReplyTo: "5"}).Body(); err == nil {
		t.Fatal("an edit that changes the post it answers was accepted")
	}
	if eps := xapi.NewEndpoints(); func() string {
		r, _ := eps.Match("POST", "/2/tweets", []byte(`{"text":"x","edit_options":{"previous_post_id":"1"}}`))
		return r.Tool
	}() != "x_edit_tweet" {
		t.Fatal("an edit body does not meet x_edit_tweet's row")
	}
}
