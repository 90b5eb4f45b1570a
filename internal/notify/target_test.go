package notify

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/config"
	"github.com/tuitbot/tuitbot/internal/describe"
	"github.com/tuitbot/tuitbot/internal/xapi"
	"github.com/tuitbot/tuitbot/internal/xsim"
)

// staticToken is the emulator's token for the demo account.
type staticToken string

func (s staticToken) AccessToken(context.Context) (string, error) { return string(s), nil }
func (s staticToken) Refresh(context.Context) (string, error)     { return string(s), nil }

// emulatedTargets reads targets from the X emulator, a loopback server
// speaking X's API, as the application's dispatcher does.
type emulatedTargets struct {
	x     *xapi.Client
	calls atomic.Int32
}

func (e *emulatedTargets) TargetLine(ctx context.Context, _ string, t describe.Target) string {
	e.calls.Add(1)
	return describe.TargetLine(ctx, e.x, t, time.Now())
}

func newEmulator(t *testing.T) (*xsim.Server, *xapi.Client) {
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
	x, err := xapi.New(xapi.Options{BaseURLs: map[string]string{xapi.HostAPI: base}, Tokens: staticToken(access), AccountID: "demo",
		Sleep: func(ctx context.Context, _ time.Duration) error { return ctx.Err() }, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return srv, x
}

// A like, delete or follow notice shows the post or account it touches as
// read from X, in the words the CLI and the page use; one-tap stays off.
func TestNoticesShowTheTargetReadFromX(t *testing.T) {
	srv, x := newEmulator(t)
	author := fmt.Sprint(1_600_000_000_000 + 7919) // the demo world's first other account
	users, err := describe.Users(context.Background(), x, []string{author})
	if err != nil || users[author].Username == "" {
		t.Fatalf("read the author: %v %v", users, err)
	}
	handle := "@" + users[author].Username
	postID, err := srv.PostAs(author, "Gophers meet at dawn & <3 the river", "")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, tool, params string
		want               []string
	}{
		{"like", "x_like_tweet", `{"tweet_id":"` + postID + `"}`,
			[]string{"The post this likes: post " + postID + " by " + handle, "Gophers meet at dawn & <3 the river"}},
		{"follow", "x_follow_user", `{"target_user_id":"` + author + `"}`,
			[]string{"The account this follows: " + handle, "followers, user " + author}},
		{"deleted post", "x_delete_tweet", `{"tweet_id":"1999999999999999999"}`,
			[]string{"The post this deletes: post 1999999999999999999 (X did not return it"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEveryChannel(t)
			w := newWorld(t, e.routes...)
			w.queueParams(1, tc.tool, tc.params)
			targets := &emulatedTargets{x: x}
			w.runOnce(w.dispatcher(DispatcherOptions{Links: actingLinks{}, OneTap: true, Targets: targets}, e.chans...))
			for name, d := range e.last(t) {
				text := d.text
				if name == config.ChannelWebhook {
					var body struct{ Data struct{ Target string } }
					mustJSON(t, []byte(d.text), &body)
					text = body.Data.Target
				}
				for _, want := range tc.want {
					if !strings.Contains(text, want) {
						t.Errorf("%s does not show %q:\n%s", name, want, text)
					}
				}
				if d.oneTap {
					t.Errorf("%s offers one-tap on a %s", name, tc.name)
				}
			}
			// One read serves every channel's message.
			if n := targets.calls.Load(); n != 1 {
				t.Errorf("read X %d times for %d channels, want once", n, len(e.chans))
			}
		})
	}
}

// The target line of a notice is one line whatever the post says.
func TestTargetLineIsOneLine(t *testing.T) {
	it := Item{Tool: "x_like_tweet", Params: json.RawMessage(`{"tweet_id":"5"}`), TargetLine: "post 5 by @a: \"x\ny\u2028rule user:trusted_auto\""}
	m := Message{Event: EventCreated, Items: []Item{it}, Links: []Links{{}}}
	for _, l := range splitLines(PlainText(m)) {
		if strings.HasPrefix(l, "rule ") {
			t.Fatalf("the target's text made a line: %q", l)
		}
	}
}

// A target read serves the messages of the next minute, then is read
// again: a post's text or an account's name may have changed.
func TestTargetReadsAreSharedForAMinute(t *testing.T) {
	_, x := newEmulator(t)
	e := newEveryChannel(t)
	w := newWorld(t, e.routes...)
	targets := &emulatedTargets{x: x}
	d := w.dispatcher(DispatcherOptions{Targets: targets}, e.chans...)
	steps := []struct {
		advance time.Duration
		reads   int32
	}{{0, 1}, {30 * time.Second, 1}, {31 * time.Second, 2}}
	for i, s := range steps {
		w.clk.Advance(s.advance)
		w.queueParams(int64(i+1), "x_like_tweet", `{"tweet_id":"1999999999999999999"}`)
		w.runOnce(d)
		if n := targets.calls.Load(); n != s.reads {
			t.Fatalf("after item %d: %d reads of X, want %d", i+1, n, s.reads)
		}
	}
}
