package actions

import (
	"context"

	"github.com/tuitbot/tuitbot/internal/envelope"
	"github.com/tuitbot/tuitbot/internal/gateway"
	"github.com/tuitbot/tuitbot/internal/policy"
	"github.com/tuitbot/tuitbot/internal/xapi"
)

// UserIDParams are the stored parameters of follow and unfollow.
type UserIDParams struct {
	TargetUserID string `json:"target_user_id"`
}

// LikeState is the data of like and unlike (seed 002): liked is false
// after an unlike.
type LikeState struct {
	Liked   bool   `json:"liked"`
	TweetID string `json:"tweet_id"`
}

// RetweetState is the data of retweet and unretweet.
type RetweetState struct {
	Retweeted bool   `json:"retweeted"`
	TweetID   string `json:"tweet_id"`
}

// BookmarkState is the data of bookmark and unbookmark.
type BookmarkState struct {
	Bookmarked bool   `json:"bookmarked"`
	TweetID    string `json:"tweet_id"`
}

// EngagementData shapes the result of an engagement tool: each pair of
// tools reports its own state field, as the seed's examples do.
func EngagementData(tool string, active bool, tweetID string) any {
	switch tool {
	case "x_like_tweet", "x_unlike_tweet":
		return LikeState{Liked: active, TweetID: tweetID}
	case "x_retweet", "x_unretweet":
		return RetweetState{Retweeted: active, TweetID: tweetID}
	case "x_bookmark_tweet", "x_unbookmark_tweet":
		return BookmarkState{Bookmarked: active, TweetID: tweetID}
	}
	panic("actions: no engagement shape for " + tool)
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
		out = append(out, tweetAction(d, op.tool, op.cat, op.method, op.endpoint,
			func(ctx context.Context, x *xapi.Client, id string) (any, *envelope.Rollback, xapi.CallInfo, error) {
				active, info, err := op.do(x, ctx, id)
				return EngagementData(op.tool, active, id), rb(op.undo, map[string]any{"tweet_id": id}, op.note), info, err
			}))
	}
	out = append(out,
		idAction[UserIDParams](d, "x_follow_user", policy.CatEngage, "POST", "/2/users/:id/following",
			func(ctx context.Context, x *xapi.Client, id string) (any, *envelope.Rollback, xapi.CallInfo, error) {
				fr, info, err := x.Follow(ctx, id)
				return FollowState{Following: fr.Following, PendingFollow: fr.PendingFollow, TargetUserID: id},
					rb("x_unfollow_user", map[string]any{"target_user_id": id}, "Unfollow to reverse."), info, err
			}),
		idAction[UserIDParams](d, "x_unfollow_user", policy.CatEngage, "DELETE", "/2/users/:source_user_id/following/:target_user_id",
			func(ctx context.Context, x *xapi.Client, id string) (any, *envelope.Rollback, xapi.CallInfo, error) {
				following, info, err := x.Unfollow(ctx, id)
				return FollowState{Following: following, TargetUserID: id},
					rb("x_follow_user", map[string]any{"target_user_id": id}, "Follow again to reverse (a protected account must approve again)."), info, err
			}),
	)
	return out
}
