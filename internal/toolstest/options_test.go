package toolstest

import (
	"encoding/json"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/actions"
	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/xapi"
	"github.com/tuitbot/tuitbot/internal/xsim"
)

// TestPostOptions: a poll posted through x_post_tweet is stored by the
// emulator and read back through expansions=attachments.poll_ids; reply
// settings reach X; the first post of a thread takes the options; invalid
// options are refused naming the field before any X request; and options
// are part of the request an idempotency key stands for.
func TestPostOptions(t *testing.T) {
	var requests atomic.Int64
	e := newEnv(t, envOptions{permissive: true, onX: func(*http.Request) { requests.Add(1) }})
	foreign := e.demoTweet(func(tw xsim.Tweet) bool { return tw.AuthorID != e.Sim.DemoUserID() && tw.RetweetOf == "" })

	t.Run("poll round trip", func(t *testing.T) {
		var p actions.PostedTweet
		executed(t, e.call("x_post_tweet", map[string]any{"text": "Which do you reach for first?",
			"options": map[string]any{"poll": map[string]any{"options": []string{"Go", "Rust", "Zig"}, "duration_minutes": 1440},
				"reply_settings": "following"}}), &p)
		tw, ok := e.tweetByID(p.ID)
		if !ok || tw.Poll == nil || len(tw.Poll.Options) != 3 || tw.Poll.DurationMinutes != 1440 || tw.ReplySettings != "following" {
			t.Fatalf("emulator tweet %+v (poll %+v), want a 3-choice day-long poll, replies from following", tw, tw.Poll)
		}
		var raw actions.RawData
		e.call("x_get", map[string]any{"path": "/2/tweets/" + p.ID, "query": []map[string]string{
			{"key": "expansions", "value": "attachments.poll_ids"}, {"key": "tweet.fields", "value": "attachments,reply_settings"},
			{"key": "poll.fields", "value": "duration_minutes"}}}).ok(t, &raw)
		var body struct {
			Data struct {
				ReplySettings string `json:"reply_settings"`
				Attachments   struct {
					PollIDs []string `json:"poll_ids"`
				} `json:"attachments"`
			} `json:"data"`
			Includes struct {
				Polls []struct {
					ID      string `json:"id"`
					Options []struct {
						Position int    `json:"position"`
						Label    string `json:"label"`
					} `json:"options"`
					DurationMinutes int `json:"duration_minutes"`
				} `json:"polls"`
			} `json:"includes"`
		}
		if err := json.Unmarshal(raw.JSON, &body); err != nil {
			t.Fatalf("read back: %v: %s", err, raw.JSON)
		}
		polls := body.Includes.Polls
		if len(body.Data.Attachments.PollIDs) != 1 || len(polls) != 1 || polls[0].ID != body.Data.Attachments.PollIDs[0] ||
			len(polls[0].Options) != 3 || polls[0].Options[1].Label != "Rust" || polls[0].Options[1].Position != 2 ||
			polls[0].DurationMinutes != 1440 || body.Data.ReplySettings != "following" {
			t.Fatalf("read back %s", raw.JSON)
		}
	})

	t.Run("typed reads return the poll", func(t *testing.T) {
		var p actions.PostedTweet
		executed(t, e.call("x_post_tweet", map[string]any{"text": "Which editor this year?",
			"options": map[string]any{"poll": map[string]any{"options": []string{"Vim", "Emacs"}, "duration_minutes": 90}}}), &p)
		stored, _ := e.tweetByID(p.ID)
		// xapi.Tweet decodes X's wire form, which has no poll inline: the
		// tool's answer is read as a reader of it would.
		var tw struct {
			Poll *xapi.TweetPoll `json:"poll"`
		}
		e.call("get_tweet_by_id", map[string]any{"tweet_id": p.ID}).ok(t, &tw)
		poll := tw.Poll
		if poll == nil {
			t.Fatalf("get_tweet_by_id of a poll post has no poll: %+v", tw)
		}
		if len(poll.Options) != 2 || poll.Options[0].Label != "Vim" || poll.Options[1].Position != 2 || poll.Options[1].Votes != 0 ||
			poll.DurationMinutes != 90 || poll.EndDatetime.Sub(stored.Poll.EndsAt).Abs() >= time.Second || poll.VotingStatus != "open" || poll.ID != stored.Poll.ID {
			t.Errorf("poll = %+v, want Vim and Emacs (no votes yet), 90 minutes, ending %s, open", poll, stored.Poll.EndsAt)
		}
	})

	t.Run("the first post of a thread takes the options", func(t *testing.T) {
		var th actions.PostedThread
		executed(t, e.call("x_post_thread", map[string]any{"tweets": []string{"Poll first: tabs or spaces?", "Results tomorrow."},
			"options": map[string]any{"poll": map[string]any{"options": []string{"Tabs", "Spaces"}, "duration_minutes": 60}}}), &th)
		first, _ := e.tweetByID(th.ThreadTweetIDs[0])
		second, _ := e.tweetByID(th.ThreadTweetIDs[1])
		if first.Poll == nil || second.Poll != nil {
			t.Fatalf("first post poll %+v, second %+v; want only the first with a poll", first.Poll, second.Poll)
		}
	})

	mediaID := uploadPNG(t, e, "poll-refused.png", 77)
	poll := map[string]any{"options": []string{"Yes", "No"}, "duration_minutes": 30}
	refused := []struct {
		name  string
		tool  string
		args  map[string]any
		field string
	}{
		{"poll with media", "x_post_tweet", map[string]any{"text": "A poll and a picture", "media_ids": []string{mediaID},
			"options": map[string]any{"poll": poll}}, "options.poll"},
		{"poll on a quote", "x_quote_tweet", map[string]any{"text": "Quote with a poll", "quoted_tweet_id": foreign.ID,
			"options": map[string]any{"poll": poll}}, "options.poll"},
		{"poll with media on a thread's first post", "x_post_thread", map[string]any{"tweets": []string{"one", "two"},
			"media_ids": [][]string{{mediaID}}, "options": map[string]any{"poll": poll}}, "options.poll"},
		{"one choice", "x_post_tweet", map[string]any{"text": "One choice",
			"options": map[string]any{"poll": map[string]any{"options": []string{"Only"}, "duration_minutes": 30}}}, "options.poll.options"},
		{"five choices", "x_post_tweet", map[string]any{"text": "Five choices",
			"options": map[string]any{"poll": map[string]any{"options": []string{"a", "b", "c", "d", "e"}, "duration_minutes": 30}}}, "options.poll.options"},
		{"a long choice", "x_post_tweet", map[string]any{"text": "Long choice",
			"options": map[string]any{"poll": map[string]any{"options": []string{"ok", "this choice is far too long"}, "duration_minutes": 30}}}, "options.poll.options[1]"},
		{"an empty choice", "x_reply_to_tweet", map[string]any{"text": "Empty choice", "in_reply_to_id": foreign.ID,
			"options": map[string]any{"poll": map[string]any{"options": []string{"ok", " "}, "duration_minutes": 30}}}, "options.poll.options[1]"},
		{"too short", "x_post_tweet", map[string]any{"text": "Short poll",
			"options": map[string]any{"poll": map[string]any{"options": []string{"a", "b"}, "duration_minutes": 4}}}, "options.poll.duration_minutes"},
		{"too long", "x_post_tweet", map[string]any{"text": "Long poll",
			"options": map[string]any{"poll": map[string]any{"options": []string{"a", "b"}, "duration_minutes": 10081}}}, "options.poll.duration_minutes"},
		{"reply settings", "x_post_tweet", map[string]any{"text": "Who replies",
			"options": map[string]any{"reply_settings": "friends"}}, "options.reply_settings"},
		{"community id", "x_post_tweet", map[string]any{"text": "In a community",
			"options": map[string]any{"community_id": "c-1"}}, "options.community_id"},
	}
	for _, tt := range refused {
		t.Run(tt.name, func(t *testing.T) {
			before := requests.Load()
			e.call(tt.tool, tt.args).fails(t, apperr.InvalidInput).mentions(t, tt.field)
			if n := requests.Load() - before; n != 0 {
				t.Fatalf("%d requests reached X", n)
			}
		})
	}

	t.Run("options are part of the request a key stands for", func(t *testing.T) {
		args := func(rs string) map[string]any {
			return map[string]any{"text": "Keyed post with settings", "idempotency_key": "opts-1",
				"options": map[string]any{"reply_settings": rs}}
		}
		executed(t, e.call("x_post_tweet", args("verified")), nil)
		e.call("x_post_tweet", args("following")).fails(t, apperr.IdempotencyConflict)
	})
}
