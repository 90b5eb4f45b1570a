package xsim

import (
	"fmt"
	"time"
)

// analyticsFields are the analytics.fields X's document lists.
var analyticsFields = []string{"app_install_attempts", "app_opens", "bookmarks", "detail_expands", "email_tweet", "engagements",
	"follows", "hashtag_clicks", "id", "impressions", "likes", "media_views", "permalink_clicks", "quote_tweets", "replies",
	"retweets", "shares", "timestamp", "timestamped_metrics", "unfollows", "unlikes", "url_clicks", "user_profile_clicks"}

// handlePostAnalytics is GET /2/tweets/analytics: the totals of the
// caller's own posts, from the same counts their public metrics show, so
// the two sources agree. A post of another author is an error item, as X
// gives analytics only to a post's owner.
func (s *Server) handlePostAnalytics(c *call) reply {
	ids, bad := splitIDs(c, "ids")
	if bad != nil {
		return *bad
	}
	q := c.r.URL.Query()
	var bounds [2]time.Time
	for i, p := range []string{"start_time", "end_time"} {
		raw := q.Get(p)
		t, err := time.Parse(time.RFC3339, raw)
		if err != nil {
			return errInvalidParam(p, raw, fmt.Sprintf("The `%s` query parameter value [%s] is not a valid date-time", p, raw))
		}
		bounds[i] = t
	}
	if !bounds[0].Before(bounds[1]) {
		return errInvalidParam("start_time", q.Get("start_time"), "The `start_time` query parameter value must be before `end_time`")
	}
	gran := q.Get("granularity")
	switch gran {
	case "":
		gran = "total"
	case "hourly", "daily", "weekly", "total":
	default:
		return errInvalidParam("granularity", gran, fmt.Sprintf("The `granularity` query parameter value [%s] is not one of [hourly,weekly,daily,total]", gran))
	}
	fields, bad := parseList("analytics.fields", q.Get("analytics.fields"), analyticsFields)
	if bad != nil {
		return *bad
	}
	if len(fields) == 0 {
		fields = map[string]bool{"impressions": true, "likes": true, "retweets": true, "replies": true, "quote_tweets": true, "bookmarks": true, "engagements": true}
	}
	var data, errs []any
	var found []string
	for _, id := range ids {
		t := s.st.tweets[id]
		if t == nil || t.AuthorID != c.user.ID || t.RetweetOf != "" {
			errs = append(errs, notFoundItem("tweet", "ids", id))
			continue
		}
		m := s.st.tweetMetrics(t)
		all := map[string]int64{
			"impressions": m["impression_count"], "likes": m["like_count"], "retweets": m["retweet_count"],
			"replies": m["reply_count"], "quote_tweets": m["quote_count"], "bookmarks": m["bookmark_count"],
		}
		all["engagements"] = all["likes"] + all["retweets"] + all["replies"] + all["quote_tweets"] + all["bookmarks"]
		metrics := map[string]any{}
		for k, v := range all {
			if fields[k] {
				metrics[k] = v
			}
		}
		// The emulator keeps no history of the counts: every granularity
		// answers one bucket holding the totals, starting at start_time.
		data = append(data, map[string]any{"id": id, "timestamped_metrics": []any{
			map[string]any{"timestamp": bounds[0].UTC().Format(time.RFC3339), "metrics": metrics},
		}})
		found = append(found, id)
	}
	s.chargeReads(c, BillPostRead, found)
	body := map[string]any{}
	if len(data) > 0 {
		body["data"] = data
	}
	if len(errs) > 0 {
		body["errors"] = errs
	}
	return ok(body)
}
