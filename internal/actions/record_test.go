package actions

import (
	"slices"
	"testing"
)

// Every post X takes is reported to the recorder once, with what the
// ledgers need; calls that post nothing report nothing.
func TestPostsAreRecorded(t *testing.T) {
	e := newXEnv(t)
	target := e.otherTweets(1)[0]
	tweet := e.do("x_post_tweet", PostParams{Text: "a tweet to record"}).Result.(PostedTweet)
	reply := e.do("x_reply_to_tweet", PostParams{Text: "a reply to record", InReplyToID: target}).Result.(PostedTweet)
	thread := e.do("x_post_thread", ThreadParams{Tweets: []string{"thread root", "thread two"}}).Result.(PostedThread)
	e.do("x_like_tweet", TweetIDParams{TweetID: target})
	want := []string{
		"tweet " + tweet.ID + " a tweet to record",
		"reply " + target + " " + reply.ID + " a reply to record",
		"thread " + thread.RootTweetID + " thread root",
	}
	if got := e.rec.all(); !slices.Equal(got, want) {
		t.Fatalf("recorded %q, want %q", got, want)
	}
}
