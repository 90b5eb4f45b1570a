package xapi_test

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/xapi"
	"github.com/tuitbot/tuitbot/internal/xsim"
)

type simTokens struct {
	mu      sync.Mutex
	access  string
	refresh func() string
	calls   int
}

func (s *simTokens) AccessToken(context.Context) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.access, nil
}

func (s *simTokens) Refresh(context.Context) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	if s.refresh == nil {
		return "", apperr.New(apperr.XAuthExpired, "no refresh")
	}
	s.access = s.refresh()
	return s.access, nil
}

type memUsage struct {
	mu   sync.Mutex
	rows []xapi.Usage
}

func (m *memUsage) RecordXUsage(_ context.Context, u xapi.Usage) error {
	m.mu.Lock()
	m.rows = append(m.rows, u)
	m.mu.Unlock()
	return nil
}

type sim struct {
	srv    *xsim.Server
	c      *xapi.Client
	tokens *simTokens
	usage  *memUsage
	url    string
}

func noSleep(ctx context.Context, d time.Duration) error { return ctx.Err() }

func newSim(t *testing.T, transport http.RoundTripper, mod ...func(*xapi.Options)) *sim {
	t.Helper()
	srv := xsim.New(xsim.Options{World: xsim.DemoWorld(1), Seed: 1})
	ctx, cancel := context.WithCancel(context.Background())
	base, err := srv.Start(ctx, "")
	if err != nil {
		t.Fatalf("start emulator: %v", err)
	}
	t.Cleanup(func() {
		cancel()
		_ = srv.Close()
	})
	access, _, _ := srv.IssueToken(srv.DemoUserID(), srv.AllScopes())
	tokens := &simTokens{access: access}
	usage := &memUsage{}
	opts := xapi.Options{
		BaseURLs:  map[string]string{xapi.HostAPI: base, xapi.HostUpload: base, xapi.HostUploadLegacy: base},
		Tokens:    tokens,
		Usage:     usage,
		AccountID: "demo",
		Sleep:     noSleep,
		Timeout:   2 * time.Second,
	}
	if transport != nil {
		opts.HTTPClient = &http.Client{Transport: transport}
	}
	for _, m := range mod {
		m(&opts)
	}
	c, err := xapi.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return &sim{srv: srv, c: c, tokens: tokens, usage: usage, url: base}
}

// exerciseSurface calls every public endpoint method once and returns the
// first failure.
func exerciseSurface(t *testing.T, s *sim) {
	t.Helper()
	ctx := context.Background()
	c := s.c
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	me, _, err := c.Me(ctx)
	must("Me", err)
	if me.ID != s.srv.DemoUserID() || me.Username != xsim.DemoUsername {
		t.Fatalf("Me = %+v", me)
	}
	found, err := c.SearchRecent(ctx, xapi.SearchParams{Query: "golang", MaxResults: 10})
	must("SearchRecent", err)
	if len(found.Data) == 0 {
		t.Fatalf("search found nothing in the demo world")
	}
	other := found.Data[0]
	if other.Author == nil || other.Author.ID != other.AuthorID {
		t.Fatalf("search result author not expanded: %+v", other)
	}
	if found.Meta.NextToken != "" {
		next, err := c.SearchRecent(ctx, xapi.SearchParams{Query: "golang", MaxResults: 10, PaginationToken: found.Meta.NextToken})
		must("SearchRecent page 2", err)
		if len(next.Data) > 0 && next.Data[0].ID == other.ID {
			t.Fatalf("pagination returned the first page again")
		}
	}
	tw, _, err := c.GetTweet(ctx, other.ID)
	must("GetTweet", err)
	if tw.ID != other.ID || tw.Author == nil {
		t.Fatalf("GetTweet = %+v", tw)
	}
	batch, err := c.GetTweets(ctx, []string{other.ID, "1"})
	must("GetTweets", err)
	if len(batch.Data) != 1 || len(batch.Errors) != 1 {
		t.Fatalf("GetTweets data=%d errors=%d", len(batch.Data), len(batch.Errors))
	}
	u, _, err := c.GetUser(ctx, other.AuthorID)
	must("GetUser", err)
	_, _, err = c.GetUserByUsername(ctx, u.Username)
	must("GetUserByUsername", err)
	_, err = c.GetUsers(ctx, []string{me.ID, u.ID})
	must("GetUsers", err)
	_, err = c.Mentions(ctx, "", xapi.ListParams{MaxResults: 5})
	must("Mentions", err)
	_, err = c.UserTweets(ctx, u.ID, xapi.ListParams{MaxResults: 5})
	must("UserTweets", err)
	_, err = c.HomeTimeline(ctx, xapi.ListParams{MaxResults: 10})
	must("HomeTimeline", err)
	_, err = c.Followers(ctx, "", xapi.ListParams{MaxResults: 10})
	must("Followers", err)
	_, err = c.Following(ctx, "", xapi.ListParams{MaxResults: 10})
	must("Following", err)
	_, err = c.LikedTweets(ctx, "", xapi.ListParams{MaxResults: 5})
	must("LikedTweets", err)
	_, err = c.Bookmarks(ctx, xapi.ListParams{MaxResults: 5})
	must("Bookmarks", err)
	_, err = c.LikingUsers(ctx, other.ID, xapi.ListParams{MaxResults: 10})
	must("LikingUsers", err)

	for _, step := range []struct {
		name string
		run  func() (bool, xapi.CallInfo, error)
		want bool
	}{
		{"Like", func() (bool, xapi.CallInfo, error) { return c.Like(ctx, other.ID) }, true},
		{"Unlike", func() (bool, xapi.CallInfo, error) { return c.Unlike(ctx, other.ID) }, false},
		{"Retweet", func() (bool, xapi.CallInfo, error) { return c.Retweet(ctx, other.ID) }, true},
		{"Unretweet", func() (bool, xapi.CallInfo, error) { return c.Unretweet(ctx, other.ID) }, false},
		{"Bookmark", func() (bool, xapi.CallInfo, error) { return c.Bookmark(ctx, other.ID) }, true},
		{"Unbookmark", func() (bool, xapi.CallInfo, error) { return c.Unbookmark(ctx, other.ID) }, false},
	} {
		got, _, err := step.run()
		must(step.name, err)
		if got != step.want {
			t.Fatalf("%s = %v, want %v", step.name, got, step.want)
		}
	}
	stranger := notFollowed(t, s)
	fr, _, err := c.Follow(ctx, stranger)
	must("Follow", err)
	if !fr.Following && !fr.PendingFollow {
		t.Fatalf("Follow = %+v", fr)
	}
	_, _, err = c.Unfollow(ctx, stranger)
	must("Unfollow", err)

	list, _, err := c.CreateList(ctx, xapi.NewList{Name: "spec list", Description: "the client's list", Private: true})
	must("CreateList", err)
	for range 2 {
		in, _, err := c.AddListMember(ctx, list.ID, other.AuthorID)
		must("AddListMember", err)
		if !in {
			t.Fatal("AddListMember: not a member")
		}
	}
	owned, err := c.OwnedLists(ctx, "", xapi.ListParams{MaxResults: 10})
	must("OwnedLists", err)
	if len(owned.Data) != 1 || owned.Data[0].ID != list.ID || !owned.Data[0].Private || owned.Data[0].MemberCount != 1 || owned.Data[0].OwnerID != me.ID {
		t.Fatalf("OwnedLists = %+v", owned.Data)
	}
	members, err := c.ListMembers(ctx, list.ID, xapi.ListParams{MaxResults: 10})
	must("ListMembers", err)
	if len(members.Data) != 1 || members.Data[0].ID != other.AuthorID {
		t.Fatalf("ListMembers = %+v", members.Data)
	}
	posts, err := c.ListTweets(ctx, list.ID, xapi.ListParams{MaxResults: 10})
	must("ListTweets", err)
	if len(posts.Data) == 0 || posts.Data[0].AuthorID != other.AuthorID || posts.Data[0].Author == nil {
		t.Fatalf("ListTweets = %+v", posts.Data)
	}
	if _, err := c.ListTweets(ctx, "1", xapi.ListParams{}); apperr.CodeOf(err) != apperr.XNotFound {
		t.Fatalf("ListTweets of no list: %v, want %s", err, apperr.XNotFound)
	}
	if in, _, err := c.RemoveListMember(ctx, list.ID, other.AuthorID); err != nil || in {
		t.Fatalf("RemoveListMember = %v, %v", in, err)
	}
	if gone, _, err := c.DeleteList(ctx, list.ID); err != nil || !gone {
		t.Fatalf("DeleteList = %v, %v", gone, err)
	}

	img, _, err := c.UploadMedia(ctx, xapi.UploadParams{Bytes: pngBytes(), MediaType: "image/png", AltText: "a tiny square"})
	must("UploadMedia image", err)
	vid, _, err := c.UploadMedia(ctx, xapi.UploadParams{Data: bytes.NewReader(mp4Bytes(300 << 10)), Size: 300 << 10, MediaType: "video/mp4", ChunkSize: 128 << 10})
	must("UploadMedia video", err)
	post, _, err := c.PostTweet(ctx, xapi.PostParams{Text: "shipping the Go port " + time.Now().Format(time.RFC3339Nano), MediaIDs: []string{img.ID}})
	must("PostTweet", err)
	reply, _, err := c.PostTweet(ctx, xapi.PostParams{Text: "and a reply with video", ReplyTo: post.ID, MediaIDs: []string{vid.ID}})
	must("PostTweet reply", err)
	quote, _, err := c.PostTweet(ctx, xapi.PostParams{Text: "quoting with media", QuoteOf: other.ID, MediaIDs: []string{img.ID}})
	must("PostTweet quote", err)
	got, _, err := c.GetTweet(ctx, quote.ID)
	must("GetTweet quote", err)
	if got.Attachments == nil || len(got.Attachments.MediaKeys) != 1 {
		t.Fatalf("quote lost its media: %+v", got)
	}
	if len(got.ReferencedTweets) != 1 || got.ReferencedTweets[0].Type != "quoted" {
		t.Fatalf("quote references = %+v", got.ReferencedTweets)
	}
	for _, id := range []string{quote.ID, reply.ID, post.ID} {
		deleted, _, err := c.DeleteTweet(ctx, id)
		must("DeleteTweet", err)
		if !deleted {
			t.Fatalf("DeleteTweet(%s) = false", id)
		}
	}
	raw, err := c.Raw(ctx, xapi.RawRequest{Method: "GET", Path: "/2/tweets/" + other.ID})
	must("Raw GET", err)
	if raw.Status != 200 || !bytes.Contains(raw.Body, []byte(other.ID)) {
		t.Fatalf("Raw = %d %s", raw.Status, raw.Body)
	}
}

func TestEmulatorWholeSurface(t *testing.T) {
	s := newSim(t, nil)
	exerciseSurface(t, s)
	c := s.srv.Counters()
	for _, k := range []string{"likes", "unlikes", "retweets", "unretweets", "bookmarks", "unbookmarks", "follows", "unfollows"} {
		if c[k] != 1 {
			t.Errorf("counter %s = %d, want 1", k, c[k])
		}
	}
	if c["tweets_created"] != 3 || c["tweets_deleted"] != 3 || c["media_uploaded"] != 2 || c["media_metadata"] != 1 {
		t.Errorf("counters = %v", c)
	}
	if len(s.c.RateLimits()) == 0 {
		t.Errorf("no rate-limit state tracked from the emulator's headers")
	}
	var spent float64
	s.usage.mu.Lock()
	for _, r := range s.usage.rows {
		spent += r.CostUSD
	}
	rows := len(s.usage.rows)
	s.usage.mu.Unlock()
	if rows == 0 || spent <= 0 {
		t.Errorf("ledger rows=%d spent=%v", rows, spent)
	}
}

func TestEmulatorApplyThenFailPostIsUnknownAndExactlyOnce(t *testing.T) {
	for _, reset := range []bool{false, true} {
		s := newSim(t, nil)
		s.srv.SetFault("POST /2/tweets", xsim.Fault{ApplyThenFailNext: 1, ApplyThenReset: reset})
		_, info, err := s.c.PostTweet(context.Background(), xapi.PostParams{Text: "exactly once please"})
		if apperr.CodeOf(err) != apperr.XOutcomeUnknown {
			t.Fatalf("reset=%v: err = %v, want x_outcome_unknown", reset, err)
		}
		if info.RetryCount != 0 {
			t.Fatalf("reset=%v: retried a post", reset)
		}
		if n := s.srv.Counters()["tweets_created"]; n != 1 {
			t.Fatalf("reset=%v: tweets_created = %d, want exactly 1", reset, n)
		}
	}
}

func TestEmulatorRetryPolicy(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name    string
		route   string
		fault   xsim.Fault
		run     func(*sim) (xapi.CallInfo, error)
		code    apperr.Code
		retries int
		counter string
		applied int64
	}{
		{"post 429 retried", "POST /2/tweets", xsim.Fault{RateLimitNext: 1},
			func(s *sim) (xapi.CallInfo, error) {
				_, i, err := s.c.PostTweet(ctx, xapi.PostParams{Text: "after a 429"})
				return i, err
			}, "", 1, "tweets_created", 1},
		{"post 5xx not retried", "POST /2/tweets", xsim.Fault{ErrorNext: 1},
			func(s *sim) (xapi.CallInfo, error) {
				_, i, err := s.c.PostTweet(ctx, xapi.PostParams{Text: "after a 503"})
				return i, err
			}, apperr.XOutcomeUnknown, 0, "tweets_created", 0},
		{"post reset not retried", "POST /2/tweets", xsim.Fault{ResetNext: 1},
			func(s *sim) (xapi.CallInfo, error) {
				_, i, err := s.c.PostTweet(ctx, xapi.PostParams{Text: "after a reset"})
				return i, err
			}, apperr.XOutcomeUnknown, 0, "tweets_created", 0},
		{"post malformed answer", "POST /2/tweets", xsim.Fault{MalformedNext: 1},
			func(s *sim) (xapi.CallInfo, error) {
				_, i, err := s.c.PostTweet(ctx, xapi.PostParams{Text: "malformed answer"})
				return i, err
			}, apperr.XOutcomeUnknown, 0, "tweets_created", 1},
		{"post timeout not retried", "POST /2/tweets", xsim.Fault{TimeoutNext: 1},
			func(s *sim) (xapi.CallInfo, error) {
				_, i, err := s.c.PostTweet(ctx, xapi.PostParams{Text: "slow"})
				return i, err
			}, apperr.XOutcomeUnknown, 0, "tweets_created", 0},
		{"like 5xx retried", "POST /2/users/{id}/likes", xsim.Fault{ErrorNext: 2},
			func(s *sim) (xapi.CallInfo, error) {
				id := anyTweet(t, s)
				_, i, err := s.c.Like(ctx, id)
				return i, err
			}, "", 2, "likes", 1},
		{"like apply-then-fail retried idempotently", "POST /2/users/{id}/likes", xsim.Fault{ApplyThenFailNext: 1},
			func(s *sim) (xapi.CallInfo, error) {
				id := anyTweet(t, s)
				_, i, err := s.c.Like(ctx, id)
				return i, err
			}, "", 1, "likes", 1},
		{"follow reset retried", "POST /2/users/{id}/following", xsim.Fault{ResetNext: 1},
			func(s *sim) (xapi.CallInfo, error) {
				_, i, err := s.c.Follow(ctx, notFollowed(t, s))
				return i, err
			}, "", 1, "follows", 1},
		{"read truncated retried", "GET /2/tweets/{id}", xsim.Fault{TruncateNext: 1},
			func(s *sim) (xapi.CallInfo, error) {
				_, i, err := s.c.GetTweet(ctx, anyTweet(t, s))
				return i, err
			}, "", 1, "", 0},
		{"delete 5xx exhausted", "DELETE /2/tweets/{id}", xsim.Fault{ErrorNext: 5},
			func(s *sim) (xapi.CallInfo, error) {
				p, _, err := s.c.PostTweet(ctx, xapi.PostParams{Text: "to delete"})
				if err != nil {
					return xapi.CallInfo{}, err
				}
				_, i, err := s.c.DeleteTweet(ctx, p.ID)
				return i, err
			}, apperr.XAPIError, 0, "tweets_deleted", 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// The emulator's 429 resets at the end of its 15-minute window;
			// allow waiting that long (the sleeper does not really wait).
			s := newSim(t, nil, func(o *xapi.Options) { o.MaxRateLimitWait = time.Hour })
			if _, err := s.c.MyUserID(ctx); err != nil {
				t.Fatal(err)
			}
			s.srv.SetFault(tc.route, tc.fault)
			info, err := tc.run(s)
			if tc.code == "" {
				if err != nil {
					t.Fatalf("want success, got %v", err)
				}
				if info.RetryCount != tc.retries {
					t.Fatalf("retries = %d, want %d", info.RetryCount, tc.retries)
				}
			} else if apperr.CodeOf(err) != tc.code {
				t.Fatalf("err = %v, want %s", err, tc.code)
			}
			if tc.counter != "" {
				if got := s.srv.Counters()[tc.counter]; got != tc.applied {
					t.Fatalf("%s = %d, want %d", tc.counter, got, tc.applied)
				}
			}
		})
	}
}

func TestEmulatorErrorBodies(t *testing.T) {
	ctx := context.Background()
	t.Run("duplicate", func(t *testing.T) {
		s := newSim(t, nil)
		if _, _, err := s.c.PostTweet(ctx, xapi.PostParams{Text: "same words twice"}); err != nil {
			t.Fatal(err)
		}
		_, _, err := s.c.PostTweet(ctx, xapi.PostParams{Text: "same words twice"})
		if apperr.CodeOf(err) != apperr.XDuplicateContent {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("suspended", func(t *testing.T) {
		s := newSim(t, nil)
		s.srv.SetSuspended(s.srv.DemoUserID(), true)
		_, _, err := s.c.PostTweet(ctx, xapi.PostParams{Text: "while suspended"})
		if apperr.CodeOf(err) != apperr.XAccountRestricted {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("client not enrolled", func(t *testing.T) {
		s := newSim(t, nil)
		s.srv.SetFault("GET /2/tweets/search/recent", xsim.Fault{ClientNotEnrolled: true})
		_, err := s.c.SearchRecent(ctx, xapi.SearchParams{Query: "golang"})
		if apperr.CodeOf(err) != apperr.XForbidden {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("rate limited far reset", func(t *testing.T) {
		s := newSim(t, nil)
		s.srv.SetFault("GET /2/users/me", xsim.Fault{RateLimitNext: 10})
		_, _, err := s.c.Me(ctx)
		e := apperr.As(err)
		if e.Code != apperr.XRateLimited {
			t.Fatalf("err = %v", err)
		}
		if _, ok := e.Extra["retry_after_ms"]; !ok {
			t.Fatalf("no retry_after_ms: %v", e.Extra)
		}
	})
	t.Run("not found", func(t *testing.T) {
		s := newSim(t, nil)
		_, _, err := s.c.GetTweet(ctx, "1")
		if apperr.CodeOf(err) != apperr.XNotFound {
			t.Fatalf("err = %v", err)
		}
		_, _, err = s.c.GetUserByUsername(ctx, "nobody_here_x")
		if apperr.CodeOf(err) != apperr.XNotFound {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("expired token refreshed once", func(t *testing.T) {
		s := newSim(t, nil)
		good, _, _ := s.srv.IssueToken(s.srv.DemoUserID(), s.srv.AllScopes())
		s.tokens.mu.Lock()
		s.tokens.access = "not-a-real-token"
		s.tokens.refresh = func() string { return good }
		s.tokens.mu.Unlock()
		if _, _, err := s.c.Me(ctx); err != nil {
			t.Fatalf("after refresh: %v", err)
		}
		if s.tokens.calls != 1 {
			t.Fatalf("refreshes = %d", s.tokens.calls)
		}
		for _, r := range s.usage.rows {
			if strings.Contains(r.Endpoint, "not-a-real-token") {
				t.Fatalf("token in ledger")
			}
		}
	})
}

func anyTweet(t *testing.T, s *sim) string {
	t.Helper()
	p, err := s.c.SearchRecent(context.Background(), xapi.SearchParams{Query: "golang", MaxResults: 10})
	if err != nil || len(p.Data) == 0 {
		t.Fatalf("no tweet to act on: %v", err)
	}
	return p.Data[0].ID
}

// notFollowed returns a user of the demo world the demo account does not
// follow yet, so a follow has an effect.
func notFollowed(t *testing.T, s *sim) string {
	t.Helper()
	w := s.srv.World()
	following := map[string]bool{}
	for _, e := range w.Follows {
		if e.From == w.DemoUserID {
			following[e.To] = true
		}
	}
	for _, u := range w.Users {
		if u.ID != w.DemoUserID && !following[u.ID] && !u.Protected {
			return u.ID
		}
	}
	t.Fatal("the demo account follows everyone")
	return ""
}

// pngBytes is a minimal valid 1x1 PNG.
func pngBytes() []byte {
	return []byte{
		0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
		0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1f, 0x15, 0xc4,
		0x89, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0x00, 0x01, 0x00, 0x00,
		0x05, 0x00, 0x01, 0x0d, 0x0a, 0x2d, 0xb4, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae,
		0x42, 0x60, 0x82,
	}
}

// mp4Bytes is n bytes that start like an MP4 file (ftyp box).
func mp4Bytes(n int) []byte {
	b := make([]byte, n)
	copy(b, []byte{0x00, 0x00, 0x00, 0x18, 'f', 't', 'y', 'p', 'm', 'p', '4', '2', 0, 0, 0, 0, 'm', 'p', '4', '2', 'i', 's', 'o', 'm'})
	for i := 24; i < n; i++ {
		b[i] = byte(i * 7)
	}
	return b
}

// surfaceEndpoints is every endpoint the typed client uses.
var surfaceEndpoints = []string{
	"GET /2/users/me", "GET /2/tweets/search/recent", "GET /2/tweets/:id", "GET /2/tweets", "GET /2/users/:id",
	"GET /2/users/by/username/:username", "GET /2/users", "GET /2/users/:id/mentions", "GET /2/users/:id/tweets",
	"GET /2/users/:id/timelines/reverse_chronological", "GET /2/users/:id/followers", "GET /2/users/:id/following",
	"GET /2/users/:id/liked_tweets", "GET /2/users/:id/bookmarks", "GET /2/tweets/:id/liking_users",
	"POST /2/users/:id/likes", "DELETE /2/users/:id/likes/:tweet_id", "POST /2/users/:id/retweets",
	"DELETE /2/users/:id/retweets/:source_tweet_id", "POST /2/users/:id/bookmarks", "DELETE /2/users/:id/bookmarks/:tweet_id",
	"POST /2/users/:id/following", "DELETE /2/users/:source_user_id/following/:target_user_id", "POST /2/media/upload",
	"POST /2/media/upload/initialize", "POST /2/media/upload/:id/append", "POST /2/media/upload/:id/finalize",
	"GET /2/media/upload", "POST /2/media/metadata", "POST /2/tweets", "DELETE /2/tweets/:id",
}

func TestSurfaceCoversEveryEndpoint(t *testing.T) {
	s := newSim(t, nil)
	exerciseSurface(t, s)
	seen := map[string]bool{}
	s.usage.mu.Lock()
	for _, r := range s.usage.rows {
		seen[r.Endpoint] = true
	}
	s.usage.mu.Unlock()
	for _, e := range surfaceEndpoints {
		if !seen[e] {
			t.Errorf("the surface run never called %s", e)
		}
	}
}

// TestScopeGroupRefusalSaysHowToGrantIt: with the default login's scopes,
// X refuses a List request for want of list.*; the error says how to ask
// for the group, while a refusal outside any group gets no such hint.
func TestScopeGroupRefusalSaysHowToGrantIt(t *testing.T) {
	s := newSim(t, nil)
	ctx := context.Background()
	s.tokens.mu.Lock()
	s.tokens.access, _, _ = s.srv.IssueToken(s.srv.DemoUserID(), xapi.NewEndpoints().Scopes())
	s.tokens.mu.Unlock()
	_, err := s.c.OwnedLists(ctx, "", xapi.ListParams{})
	var ae *apperr.Error
	if !errors.As(err, &ae) || ae.Code != apperr.XForbidden || !strings.Contains(apperr.JoinHints(ae.Hints), "--scopes +"+xapi.ScopeGroupList) {
		t.Fatalf("a List read without list scopes: %v, want %s with a hint to add the %q scopes", err, apperr.XForbidden, xapi.ScopeGroupList)
	}
	if _, _, err := s.c.Like(ctx, "1"); err == nil || strings.Contains(err.Error(), "--scopes") {
		t.Fatalf("a refusal outside any scope group: %v, want no scope hint", err)
	}
}
