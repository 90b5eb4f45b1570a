package workflow

import (
	"context"
	"time"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/gateway"
)

// Stats is get_stats' data.
type Stats struct {
	Days             int            `json:"days"`
	Since            string         `json:"since"`
	MutationsByTool  map[string]int `json:"executed_mutations_by_tool"`
	Replies          int            `json:"replies"`
	Tweets           int            `json:"tweets"`
	Threads          int            `json:"threads"`
	FollowersStart   *int64         `json:"followers_start,omitempty"`
	FollowersEnd     *int64         `json:"followers_end,omitempty"`
	FollowerDelta    *int64         `json:"follower_delta,omitempty"`
	PendingApprovals int            `json:"pending_approvals"`
	XSpendUSD        float64        `json:"x_spend_usd"`
	LLMSpendUSD      float64        `json:"llm_spend_usd"`
}

func checkRange(field string, n, lo, hi int) error {
	if n < lo || n > hi {
		return apperr.New(apperr.InvalidInput, "%s: must be %d-%d (got %d)", field, lo, hi, n)
	}
	return nil
}

// Stats summarises the last days.
func (s *Service) Stats(ctx context.Context, days int) (*Stats, error) {
	if err := checkRange("days", days, 1, 365); err != nil {
		return nil, err
	}
	since := s.Now().Add(-time.Duration(days) * 24 * time.Hour)
	st := &Stats{Days: days, Since: s.ts(since)}
	var err error
	if st.MutationsByTool, err = gateway.SucceededByTool(ctx, s.DB, s.account(), since); err != nil {
		return nil, err
	}
	if st.Replies, err = s.count(ctx, `SELECT count(*) FROM replies_sent WHERE account_id = ? AND created_at >= ?`, s.account(), s.ts(since)); err != nil {
		return nil, dbErr(err, "count replies")
	}
	if st.Tweets, err = s.count(ctx, `SELECT count(*) FROM original_tweets WHERE account_id = ? AND kind = 'tweet' AND created_at >= ?`, s.account(), s.ts(since)); err != nil {
		return nil, dbErr(err, "count tweets")
	}
	if st.Threads, err = s.count(ctx, `SELECT count(*) FROM original_tweets WHERE account_id = ? AND kind = 'thread' AND created_at >= ?`, s.account(), s.ts(since)); err != nil {
		return nil, dbErr(err, "count threads")
	}
	if st.PendingApprovals, err = gateway.PendingApprovals(ctx, s.DB, s.account(), s.Now()); err != nil {
		return nil, err
	}
	if st.XSpendUSD, err = s.float(ctx, `SELECT sum(cost_usd) FROM x_api_usage WHERE account_id = ? AND created_at >= ?`, s.account(), s.ts(since)); err != nil {
		return nil, dbErr(err, "sum X spend")
	}
	if st.LLMSpendUSD, err = s.float(ctx, `SELECT sum(cost_usd) FROM llm_usage WHERE account_id = ? AND created_at >= ?`, s.account(), s.ts(since)); err != nil {
		return nil, dbErr(err, "sum LLM spend")
	}
	snaps, err := s.FollowerTrend(ctx, 10000, since)
	if err != nil {
		return nil, err
	}
	if len(snaps) > 0 {
		first, last := snaps[len(snaps)-1].Followers, snaps[0].Followers
		d := last - first
		st.FollowersStart, st.FollowersEnd, st.FollowerDelta = &first, &last, &d
	}
	return st, nil
}

// Snapshot is one follower snapshot.
type Snapshot struct {
	Followers int64  `json:"followers_count"`
	Following int64  `json:"following_count"`
	Tweets    int64  `json:"tweet_count"`
	TakenAt   string `json:"taken_at"`
}

// TakeSnapshot records the authenticated user's counts now.
func (s *Service) TakeSnapshot(ctx context.Context) (*Snapshot, error) {
	x, err := s.X()
	if err != nil {
		return nil, err
	}
	me, _, err := x.Me(ctx)
	if err != nil {
		return nil, err
	}
	sn := &Snapshot{Followers: me.PublicMetrics.FollowersCount, Following: me.PublicMetrics.FollowingCount,
		Tweets: me.PublicMetrics.TweetCount, TakenAt: s.ts(s.Now())}
	_, err = s.DB.ExecContext(ctx, `INSERT INTO follower_snapshots (account_id, followers_count, following_count, tweet_count, taken_at)
		VALUES (?, ?, ?, ?, ?)`, s.account(), sn.Followers, sn.Following, sn.Tweets, sn.TakenAt)
	if err != nil {
		return nil, dbErr(err, "store snapshot")
	}
	return sn, nil
}

// FollowerTrend lists snapshots, newest first.
func (s *Service) FollowerTrend(ctx context.Context, limit int, since time.Time) ([]Snapshot, error) {
	if limit <= 0 {
		limit = 7
	}
	rows, err := s.DB.QueryContext(ctx, `SELECT followers_count, following_count, tweet_count, taken_at FROM follower_snapshots
		WHERE account_id = ? AND taken_at >= ? ORDER BY taken_at DESC, id DESC LIMIT ?`, s.account(), s.ts(since), limit)
	if err != nil {
		return nil, dbErr(err, "read snapshots")
	}
	defer rows.Close()
	out := []Snapshot{}
	for rows.Next() {
		var sn Snapshot
		if err := rows.Scan(&sn.Followers, &sn.Following, &sn.Tweets, &sn.TakenAt); err != nil {
			return nil, dbErr(err, "read snapshots")
		}
		out = append(out, sn)
	}
	return out, rows.Err()
}

// Reply is one reply we sent.
type Reply struct {
	TargetTweetID  string `json:"target_tweet_id"`
	ReplyTweetID   string `json:"reply_tweet_id"`
	AuthorUsername string `json:"author_username,omitempty"`
	Content        string `json:"content"`
	Caller         string `json:"caller"`
	CreatedAt      string `json:"created_at"`
}

// RecentReplies lists replies of the last hours, newest first.
func (s *Service) RecentReplies(ctx context.Context, sinceHours int) ([]Reply, error) {
	if err := checkRange("since_hours", sinceHours, 1, 24*90); err != nil {
		return nil, err
	}
	rows, err := s.DB.QueryContext(ctx, `SELECT target_tweet_id, reply_tweet_id, author_username, content, caller, created_at FROM replies_sent
		WHERE account_id = ? AND created_at >= ? ORDER BY created_at DESC, id DESC LIMIT 500`,
		s.account(), s.ts(s.Now().Add(-time.Duration(sinceHours)*time.Hour)))
	if err != nil {
		return nil, dbErr(err, "read replies")
	}
	defer rows.Close()
	out := []Reply{}
	for rows.Next() {
		var r Reply
		if err := rows.Scan(&r.TargetTweetID, &r.ReplyTweetID, &r.AuthorUsername, &r.Content, &r.Caller, &r.CreatedAt); err != nil {
			return nil, dbErr(err, "read replies")
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// ReplyCountToday counts replies since the start of the UTC day.
func (s *Service) ReplyCountToday(ctx context.Context) (int, error) {
	n, err := s.count(ctx, `SELECT count(*) FROM replies_sent WHERE account_id = ? AND created_at >= ?`, s.account(), s.ts(dayStart(s.Now())))
	return n, dbErr(err, "count replies")
}

// UsageRow is one day/endpoint row of the X cost ledger.
type UsageRow struct {
	Day      string  `json:"day"`
	Endpoint string  `json:"endpoint"`
	Calls    int     `json:"calls"`
	Items    int     `json:"billable_items"`
	CostUSD  float64 `json:"estimated_usd"`
}

// XUsage is get_x_usage's data.
type XUsage struct {
	Days     int        `json:"days"`
	Rows     []UsageRow `json:"rows"`
	TotalUSD float64    `json:"total_estimated_usd"`
	Calls    int        `json:"total_calls"`
}

// XUsage groups the X cost ledger per day and endpoint.
func (s *Service) XUsage(ctx context.Context, days int) (*XUsage, error) {
	if err := checkRange("days", days, 1, 365); err != nil {
		return nil, err
	}
	rows, err := s.DB.QueryContext(ctx, `SELECT substr(created_at, 1, 10) AS day, endpoint, count(*), sum(items), sum(cost_usd)
		FROM x_api_usage WHERE account_id = ? AND created_at >= ? GROUP BY day, endpoint ORDER BY day DESC, endpoint`,
		s.account(), s.ts(dayStart(s.Now()).Add(-time.Duration(days-1)*24*time.Hour)))
	if err != nil {
		return nil, dbErr(err, "read X usage")
	}
	defer rows.Close()
	out := &XUsage{Days: days, Rows: []UsageRow{}}
	for rows.Next() {
		var r UsageRow
		if err := rows.Scan(&r.Day, &r.Endpoint, &r.Calls, &r.Items, &r.CostUSD); err != nil {
			return nil, dbErr(err, "read X usage")
		}
		out.Rows = append(out.Rows, r)
		out.TotalUSD += r.CostUSD
		out.Calls += r.Calls
	}
	return out, rows.Err()
}

// LLMUsageRow is one day/model row of the LLM ledger.
type LLMUsageRow struct {
	Day          string  `json:"day"`
	Provider     string  `json:"provider"`
	Model        string  `json:"model"`
	Calls        int     `json:"calls"`
	InputTokens  int     `json:"input_tokens"`
	OutputTokens int     `json:"output_tokens"`
	CostUSD      float64 `json:"estimated_usd"`
}

// LLMUsage is get_llm_usage's data.
type LLMUsage struct {
	Days     int           `json:"days"`
	Rows     []LLMUsageRow `json:"rows"`
	TotalUSD float64       `json:"total_estimated_usd"`
}

// LLMUsage groups the LLM ledger per day and model.
func (s *Service) LLMUsage(ctx context.Context, days int) (*LLMUsage, error) {
	if err := checkRange("days", days, 1, 365); err != nil {
		return nil, err
	}
	rows, err := s.DB.QueryContext(ctx, `SELECT substr(created_at, 1, 10) AS day, provider, model, count(*), sum(input_tokens),
		sum(output_tokens), sum(cost_usd) FROM llm_usage WHERE account_id = ? AND created_at >= ? GROUP BY day, provider, model ORDER BY day DESC`,
		s.account(), s.ts(dayStart(s.Now()).Add(-time.Duration(days-1)*24*time.Hour)))
	if err != nil {
		return nil, dbErr(err, "read LLM usage")
	}
	defer rows.Close()
	out := &LLMUsage{Days: days, Rows: []LLMUsageRow{}}
	for rows.Next() {
		var r LLMUsageRow
		if err := rows.Scan(&r.Day, &r.Provider, &r.Model, &r.Calls, &r.InputTokens, &r.OutputTokens, &r.CostUSD); err != nil {
			return nil, dbErr(err, "read LLM usage")
		}
		out.Rows = append(out.Rows, r)
		out.TotalUSD += r.CostUSD
	}
	return out, rows.Err()
}

// ActionEntry is one action log line.
type ActionEntry = gateway.ActionEntry

// ActionLog lists the action log lines of the last hours.
func (s *Service) ActionLog(ctx context.Context, sinceHours int, actionType string) ([]ActionEntry, error) {
	if err := checkRange("since_hours", sinceHours, 1, 24*90); err != nil {
		return nil, err
	}
	return gateway.ActionLog(ctx, s.DB, s.account(), s.Now().Add(-time.Duration(sinceHours)*time.Hour), actionType)
}

// ActionCounts counts the action log lines of the last hours by type and
// status.
func (s *Service) ActionCounts(ctx context.Context, sinceHours int) (map[string]map[string]int, error) {
	if err := checkRange("since_hours", sinceHours, 1, 24*90); err != nil {
		return nil, err
	}
	return gateway.ActionCounts(ctx, s.DB, s.account(), s.Now().Add(-time.Duration(sinceHours)*time.Hour))
}
