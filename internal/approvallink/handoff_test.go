package approvallink

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/gateway"
	"github.com/tuitbot/tuitbot/internal/store/storetest"
)

// gwHandOffs reads hand-offs through the gateway; check is what "I did
// it" runs (X is not here: the test says what a look on X finds).
type gwHandOffs struct {
	g     *gateway.Gateway
	check func(ctx context.Context) ([]gateway.HandOff, error)
}

func (h gwHandOffs) HandOff(ctx context.Context, _ string, id int64) (*gateway.HandOff, error) {
	return h.g.GetHandOff(ctx, id)
}

func (h gwHandOffs) Check(ctx context.Context, _ string) ([]gateway.HandOff, error) {
	return h.check(ctx)
}

// personLiked is X as the check sees it after the person pressed Like.
type personLiked struct{ post string }

func (p personLiked) OwnPosts(context.Context) ([]gateway.OwnPost, error) { return nil, nil }
func (p personLiked) LikedPosts(context.Context) ([]string, error)        { return []string{p.post}, nil }
func (p personLiked) Following(context.Context) ([]string, error)         { return nil, nil }

// TestHandOffLinks: a hand-off's link is signed like an approval link
// and shows the hand-off (its card and Do it on X); a forged one is not
// found; it decides nothing (approve and reject are refused, and no
// approval item of the same number is touched); "I did it" needs the
// link's CSRF value, looks on X, and once the hand-off is done the link is
// used (410), as it is once its time is up or the hand-off is settled.
func TestHandOffLinks(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		e := newEnv(t)
		it := e.queue("an approval item with the hand-off's number")
		g := e.g
		x := personLiked{}
		e.svc.o.HandOffs = gwHandOffs{g: g, check: func(ctx context.Context) ([]gateway.HandOff, error) { return g.CheckHandOffs(ctx, x, true) }}
		h, err := g.HandOff(e.ctx, gateway.HandOffRequest{Effect: "x_like_tweet", TweetID: "1500", Reason: "X removed likes from pay-per-use"})
		if err != nil {
			t.Fatal(err)
		}
		if h.ID != it.ID {
			t.Fatalf("hand-off %d and item %d: the test needs them to share a number", h.ID, it.ID)
		}
		link, err := e.svc.HandOffLink(e.ctx, "default", h.ID, "phone")
		if err != nil {
			t.Fatal(err)
		}
		tok := tokenOf(t, link)
		l, err := e.svc.Check(e.ctx, tok)
		if err != nil {
			t.Fatal(err)
		}
		if l.Action != HandOff || l.HandOff == nil || l.HandOff.IntentURL != "https://x.com/intent/like?tweet_id=1500" || l.Item.Tool != "x_like_tweet" || l.CSRF == "" {
			t.Fatalf("link %+v", l)
		}

		forged := tok[:len(tok)-2] + "AA"
		if forged == tok {
			forged = tok[:len(tok)-2] + "BB"
		}
		_, err = e.svc.Check(e.ctx, forged)
		refusal(t, err, http.StatusNotFound, "not valid")
		for _, d := range []string{Approve, Reject, ""} {
			_, err = e.svc.Act(e.ctx, tok, l.CSRF, d)
			refusal(t, err, http.StatusBadRequest, "cannot")
		}
		if cur, _ := e.g.Item(e.ctx, it.ID); cur.Status != gateway.ApprovalPending || e.executed.Load() != 0 {
			t.Fatalf("a hand-off link decided approval item %d: %s", it.ID, cur.Status)
		}
		// An approval link is no hand-off link either.
		al, err := e.svc.Links(e.ctx, "default", it, "phone")
		if err != nil {
			t.Fatal(err)
		}
		_, err = e.svc.CheckHandOff(e.ctx, tokenOf(t, al.View), l.CSRF)
		refusal(t, err, http.StatusBadRequest, "cannot")

		_, err = e.svc.CheckHandOff(e.ctx, tok, "not-it")
		refusal(t, err, http.StatusForbidden, "check value")
		// Not done yet: the link stays.
		got, err := e.svc.CheckHandOff(e.ctx, tok, l.CSRF)
		if err != nil || got.Status != gateway.HandOffOpen {
			t.Fatalf("before the person acts: %+v %v", got, err)
		}
		x.post = "1500"
		e.svc.o.HandOffs = gwHandOffs{g: g, check: func(ctx context.Context) ([]gateway.HandOff, error) { return g.CheckHandOffs(ctx, x, true) }}
		got, err = e.svc.CheckHandOff(e.ctx, tok, l.CSRF)
		if err != nil || got.Status != gateway.HandOffDone || got.PostID != "1500" {
			t.Fatalf("after the person liked: %+v %v", got, err)
		}
		_, err = e.svc.Check(e.ctx, tok)
		refusal(t, err, http.StatusGone, "already used")

		// A settled hand-off's other links no longer work; nor do expired ones.
		h2, err := g.HandOff(e.ctx, gateway.HandOffRequest{Effect: "x_like_tweet", TweetID: "1501", Reason: "r"})
		if err != nil {
			t.Fatal(err)
		}
		l2, err := e.svc.HandOffLink(e.ctx, "default", h2.ID, "phone")
		if err != nil {
			t.Fatal(err)
		}
		e.clk.Advance(61 * time.Minute)
		_, err = e.svc.Check(e.ctx, tokenOf(t, l2))
		refusal(t, err, http.StatusGone, "expired")
		if _, err := e.svc.HandOffLink(e.ctx, "default", h.ID, "phone"); err == nil || !strings.Contains(err.Error(), "done_by_person") {
			t.Fatalf("a link for a settled hand-off: %v", err)
		}
	})
}
