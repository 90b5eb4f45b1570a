package xapi

import (
	"encoding/json"
	"testing"
)

func TestPublicTypesAcceptSpecAliases(t *testing.T) {
	var tw Tweet
	if err := json.Unmarshal([]byte(`{"id":"1","text":"t","referenced_posts":[{"type":"quoted","id":"2"}],
		"edit_history_post_ids":["1"],"public_metrics":{"repost_count":4,"like_count":2}}`), &tw); err != nil {
		t.Fatal(err)
	}
	if tw.PublicMetrics.RetweetCount != 4 || tw.PublicMetrics.LikeCount != 2 || len(tw.ReferencedTweets) != 1 || len(tw.EditHistoryTweetIDs) != 1 {
		t.Fatalf("tweet = %+v", tw)
	}
	var in Includes
	if err := json.Unmarshal([]byte(`{"posts":[{"id":"3","text":"x"}],"users":[{"id":"9","username":"u","public_metrics":{"post_count":7}}]}`), &in); err != nil {
		t.Fatal(err)
	}
	if len(in.Tweets) != 1 || in.Users[0].PublicMetrics.TweetCount != 7 {
		t.Fatalf("includes = %+v", in)
	}
	var m TweetMetrics
	if err := json.Unmarshal([]byte(`{"retweet_count":5}`), &m); err != nil || m.RetweetCount != 5 {
		t.Fatalf("metrics = %+v %v", m, err)
	}
	var um UserMetrics
	if err := json.Unmarshal([]byte(`{"tweet_count":3,"followers_count":1}`), &um); err != nil || um.TweetCount != 3 || um.FollowersCount != 1 {
		t.Fatalf("user metrics = %+v %v", um, err)
	}
	// What the client emits uses X's wire names and decodes back unchanged.
	out, err := json.Marshal(tw)
	if err != nil {
		t.Fatal(err)
	}
	var back Tweet
	if err := json.Unmarshal(out, &back); err != nil || back.PublicMetrics != tw.PublicMetrics || back.ReferencedTweets[0] != tw.ReferencedTweets[0] {
		t.Fatalf("round trip %s -> %+v %v", out, back, err)
	}
	if err := json.Unmarshal([]byte(`{"id":5}`), &tw); err == nil {
		t.Fatalf("wrong types accepted")
	}
}
