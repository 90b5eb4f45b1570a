package actions

import (
	"context"
	"encoding/json"

	"github.com/tuitbot/tuitbot/internal/gateway"
	"github.com/tuitbot/tuitbot/internal/policy"
	"github.com/tuitbot/tuitbot/internal/xapi"
)

// UserIDParams are the stored parameters of follow and unfollow.
type UserIDParams struct {
	TargetUserID string `json:"target_user_id"`
}

// Engagement is the data of like, retweet and bookmark tools.
type Engagement struct {
	Tool    string `json:"action"`
	Active  bool   `json:"active"`
	TweetID string `json:"tweet_id"`
}

// FollowState is the data of follow and unfollow.
type FollowState struct {
	Following     bool   `json:"following"`
	PendingFollow bool   `json:"pending_follow,omitempty"`
	TargetUserID  string `json:"target_user_id"`
}

type tweetOp struct {
	tool, undo, note, method, endpoint string
	cat                                policy.Category
	do                                 func(*xapi.Client, context.Context, string) (bool, xapi.CallInfo, error)
}

func engageActions(d Deps) []*gateway.Action {
	ops := []tweetOp{
		{"x_like_tweet", "x_unlike_tweet", "Unlike to reverse.", "POST", "/2/users/:id/likes", policy.CatEngage, (*xapi.Client).Like},
		{"x_unlike_tweet", "x_like_tweet", "Like again to reverse.", "DELETE", "/2/users/:id/likes/:tweet_id", policy.CatEngage, (*xapi.Client).Unlike},
		{"x_retweet", "x_unretweet", "Unretweet to reverse.", "POST", "/2/users/:id/retweets", policy.CatEngage, (*xapi.Client).Retweet},
		{"x_unretweet", "x_retweet", "Retweet again to reverse.", "DELETE", "/2/users/:id/retweets/:source_tweet_id", policy.CatEngage, (*xapi.Client).Unretweet},
		{"x_bookmark_tweet", "x_unbookmark_tweet", "Remove the bookmark to reverse.", "POST", "/2/users/:id/bookmarks", policy.CatEngage, (*xapi.Client).Bookmark},
		{"x_unbookmark_tweet", "x_bookmark_tweet", "Bookmark again to reverse.", "DELETE", "/2/users/:id/bookmarks/:tweet_id", policy.CatEngage, (*xapi.Client).Unbookmark},
	}
	var out []*gateway.Action
	for _, op := range ops {
		op := op
		out = append(out, &gateway.Action{
			Tool: op.tool, Category: op.cat,
			Validate: func(params json.RawMessage) error {
				var p TweetIDParams
				if err := decode(params, &p); err != nil {
					return err
				}
				return CheckID("tweet_id", p.TweetID)
			},
			Cost: func(json.RawMessage) float64 { return xapi.EstimateCost(op.method, op.endpoint, 1, false) },
			Execute: func(ctx context.Context, params json.RawMessage) (gateway.Result, error) {
				var p TweetIDParams
				if err := decode(params, &p); err != nil {
					return gateway.Result{}, err
				}
				x, err := client(d)
				if err != nil {
					return gateway.Result{}, err
				}
				active, info, err := op.do(x, ctx, p.TweetID)
				if err != nil {
					return gateway.Result{RetryCount: info.RetryCount}, err
				}
				return gateway.Result{
					Data:       Engagement{Tool: op.tool, Active: active, TweetID: p.TweetID},
					Rollback:   rb(op.undo, map[string]any{"tweet_id": p.TweetID}, op.note),
					RetryCount: info.RetryCount,
				}, nil
			},
		})
	}
	validateUser := func(params json.RawMessage) error {
		var p UserIDParams
		if err := decode(params, &p); err != nil {
			return err
		}
		return CheckID("target_user_id", p.TargetUserID)
	}
	out = append(out,
		&gateway.Action{
			Tool: "x_follow_user", Category: policy.CatEngage, Validate: validateUser,
			Cost: func(json.RawMessage) float64 { return xapi.EstimateCost("POST", "/2/users/:id/following", 1, false) },
			Execute: func(ctx context.Context, params json.RawMessage) (gateway.Result, error) {
				var p UserIDParams
				if err := decode(params, &p); err != nil {
					return gateway.Result{}, err
				}
				x, err := client(d)
				if err != nil {
					return gateway.Result{}, err
				}
				fr, info, err := x.Follow(ctx, p.TargetUserID)
				if err != nil {
					return gateway.Result{RetryCount: info.RetryCount}, err
				}
				return gateway.Result{
					Data:       FollowState{Following: fr.Following, PendingFollow: fr.PendingFollow, TargetUserID: p.TargetUserID},
					Rollback:   rb("x_unfollow_user", map[string]any{"target_user_id": p.TargetUserID}, "Unfollow to reverse."),
					RetryCount: info.RetryCount,
				}, nil
			},
		},
		&gateway.Action{
			Tool: "x_unfollow_user", Category: policy.CatEngage, Validate: validateUser,
			Cost: func(json.RawMessage) float64 {
				return xapi.EstimateCost("DELETE", "/2/users/:source_user_id/following/:target_user_id", 1, false)
			},
			Execute: func(ctx context.Context, params json.RawMessage) (gateway.Result, error) {
				var p UserIDParams
				if err := decode(params, &p); err != nil {
					return gateway.Result{}, err
				}
				x, err := client(d)
				if err != nil {
					return gateway.Result{}, err
				}
				following, info, err := x.Unfollow(ctx, p.TargetUserID)
				if err != nil {
					return gateway.Result{RetryCount: info.RetryCount}, err
				}
				return gateway.Result{
					Data:       FollowState{Following: following, TargetUserID: p.TargetUserID},
					Rollback:   rb("x_follow_user", map[string]any{"target_user_id": p.TargetUserID}, "Follow again to reverse (a protected account must approve again)."),
					RetryCount: info.RetryCount,
				}, nil
			},
		},
	)
	return out
}
