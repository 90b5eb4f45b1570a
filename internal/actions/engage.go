package actions

import (
	"context"

	"github.com/tuitbot/tuitbot/internal/argcheck"
	"github.com/tuitbot/tuitbot/internal/envelope"
	"github.com/tuitbot/tuitbot/internal/gateway"
	"github.com/tuitbot/tuitbot/internal/policy"
	"github.com/tuitbot/tuitbot/internal/xapi"
)

// UserIDParams are the arguments and stored parameters of follow and
// unfollow.
type UserIDParams struct {
	TargetUserID string `json:"target_user_id" jsonschema:"the user's id (a decimal string)"`
}

// Limits declares the arguments' limits.
func (UserIDParams) Limits() argcheck.Limits { return argcheck.Limits{"target_user_id": {ID: true}} }

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

// FollowState is the data of follow and unfollow.
type FollowState struct {
	Following     bool   `json:"following"`
	PendingFollow bool   `json:"pending_follow,omitempty"`
	TargetUserID  string `json:"target_user_id"`
}

// engageMutations lists the tools that toggle a relation to a tweet or a
// user: each is a row here, with the client call that makes it in
// engagements or userRelations.
func engageMutations() []Mutation {
	tweet := func(name, title, desc string, removes bool, out func(string) Mutation) Mutation {
		m := out(name)
		m.Title, m.Description, m.Category = title, desc, policy.CatEngage
		m.Destructive, m.Idempotent = removes, true
		return m
	}
	like := func(name string) Mutation {
		return define[TweetIDParams, LikeState](Mutation{Name: name}, same[TweetIDParams], engageAction)
	}
	retweet := func(name string) Mutation {
		return define[TweetIDParams, RetweetState](Mutation{Name: name}, same[TweetIDParams], engageAction)
	}
	bookmark := func(name string) Mutation {
		return define[TweetIDParams, BookmarkState](Mutation{Name: name}, same[TweetIDParams], engageAction)
	}
	follow := func(name string) Mutation {
		return define[UserIDParams, FollowState](Mutation{Name: name}, same[UserIDParams], followAction)
	}
	mute := func(name string) Mutation {
		return define[UserIDParams, MuteState](Mutation{Name: name}, same[UserIDParams], muteAction)
	}
	return []Mutation{
		tweet("x_like_tweet", "Like tweet", "Like a tweet.", false, like),
		tweet("x_unlike_tweet", "Unlike tweet", "Remove your like from a tweet.", true, like),
		tweet("x_retweet", "Retweet", "Retweet a tweet.", false, retweet),
		tweet("x_unretweet", "Undo retweet", "Undo your retweet of a tweet.", true, retweet),
		tweet("x_bookmark_tweet", "Bookmark tweet", "Bookmark a tweet.", false, bookmark),
		tweet("x_unbookmark_tweet", "Remove bookmark", "Remove a tweet from your bookmarks.", true, bookmark),
		tweet("x_follow_user", "Follow user", "Follow a user.", false, follow),
		tweet("x_unfollow_user", "Unfollow user", "Unfollow a user.", true, follow),
		tweet("x_mute_user", "Mute user", "Mute a user: their posts leave your timelines; they are not told.", false, mute),
		tweet("x_unmute_user", "Unmute user", "Unmute a user.", true, mute),
	}
}

// MuteState is the data of mute and unmute.
type MuteState struct {
	Muting       bool   `json:"muting"`
	TargetUserID string `json:"target_user_id"`
}

func muteAction(d Deps, m Mutation) *gateway.Action {
	do := (*xapi.Client).Mute
	if m.Name == "x_unmute_user" {
		do = (*xapi.Client).Unmute
	}
	return idAction[UserIDParams](d, m,
		func(ctx context.Context, x *xapi.Client, id string) (any, *envelope.Rollback, xapi.CallInfo, error) {
			on, info, err := do(x, ctx, id)
			return MuteState{Muting: on, TargetUserID: id}, undoOf(m, id), info, err
		})
}

// engagement is how one engagement tool calls X and reports its state.
type engagement struct {
	do    func(*xapi.Client, context.Context, string) (bool, xapi.CallInfo, error)
	shape func(active bool, id string) any
}

// engagements lists the tweet engagement tools; each pair reports its own
// state field, as the seed's examples do.
func engagements() map[string]engagement {
	like := func(on bool, id string) any { return LikeState{Liked: on, TweetID: id} }
	retweet := func(on bool, id string) any { return RetweetState{Retweeted: on, TweetID: id} }
	bookmark := func(on bool, id string) any { return BookmarkState{Bookmarked: on, TweetID: id} }
	return map[string]engagement{
		"x_like_tweet":       {(*xapi.Client).Like, like},
		"x_unlike_tweet":     {(*xapi.Client).Unlike, like},
		"x_retweet":          {(*xapi.Client).Retweet, retweet},
		"x_unretweet":        {(*xapi.Client).Unretweet, retweet},
		"x_bookmark_tweet":   {(*xapi.Client).Bookmark, bookmark},
		"x_unbookmark_tweet": {(*xapi.Client).Unbookmark, bookmark},
	}
}

// EngagementData shapes the result of an engagement tool.
func EngagementData(tool string, active bool, tweetID string) any {
	e, ok := engagements()[tool]
	if !ok {
		panic("actions: no engagement shape for " + tool)
	}
	return e.shape(active, tweetID)
}

func engageAction(d Deps, m Mutation) *gateway.Action {
	e := engagements()[m.Name]
	return idAction[TweetIDParams](d, m,
		func(ctx context.Context, x *xapi.Client, id string) (any, *envelope.Rollback, xapi.CallInfo, error) {
			active, info, err := e.do(x, ctx, id)
			return e.shape(active, id), undoOf(m, id), info, err
		})
}

func followAction(d Deps, m Mutation) *gateway.Action {
	return idAction[UserIDParams](d, m,
		func(ctx context.Context, x *xapi.Client, id string) (any, *envelope.Rollback, xapi.CallInfo, error) {
			var st FollowState
			var info xapi.CallInfo
			var err error
			if m.Name == "x_follow_user" {
				var fr xapi.FollowResult
				fr, info, err = x.Follow(ctx, id)
				st = FollowState{Following: fr.Following, PendingFollow: fr.PendingFollow}
			} else {
				st.Following, info, err = x.Unfollow(ctx, id)
			}
			st.TargetUserID = id
			return st, undoOf(m, id), info, err
		})
}

// undoOf is the rollback guidance the endpoint table gives m's effect on
// the object id (the tweet or user it named, or the post it created).
func undoOf(m Mutation, id string) *envelope.Rollback {
	for _, ep := range m.Endpoints(xapi.Known()) {
		if ep.Undo != nil {
			return rb(ep.Undo.Tool, map[string]any{ep.Undo.Param: id}, ep.Undo.Note)
		}
	}
	return irreversible("No undo is known for " + m.Name + ".")
}

// costOf is the X price of one call of m, from the endpoint table.
func costOf(m Mutation) float64 {
	// Every typed mutation has a row (a completeness test holds it to
	// that), so an unknown tool costs nothing rather than failing a call.
	for _, ep := range m.Endpoints(xapi.Known()) {
		return xapi.EstimateCost(ep.Method, ep.Path, 1, false)
	}
	return 0
}
