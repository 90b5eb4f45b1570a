package xrules

// RuleLikesFollows: likes and follows are never automated. X's developer
// guidelines ("Automated actions: what's allowed?") say that likes must be
// directly initiated by the user (auto-liking is prohibited) and allow no
// automated following.
const RuleLikesFollows = "likes_follows_by_person"

// initiated lists the effects only a person may initiate, with what they
// make. Their undos (x_unlike_tweet, x_unfollow_user) are not among them:
// the guidelines forbid automating the engagement itself, a like or a
// follow someone receives; taking one back sends nobody anything, and the
// follow-and-unfollow churn X's automation rules also name cannot happen
// when no follow is automated in the first place.
var initiated = map[string]string{
	"x_like_tweet":  "a like",
	"x_follow_user": "a follow",
}

// webCaller is the web UI's caller: it calls the gateway only when a
// signed-in person presses a button (rolling back an unlike is a like).
const webCaller = "web"

// likesFollows sends an agent's, the autopilot's or tuitbot's LLM's like
// or follow to a person, every spelling of it alike (the call's effect is
// its typed equivalent). No policy loosens the route and no agent may
// decide it (PersonOnly): the person's approval is the initiation X asks
// for. A like or follow a person made (typed in the CLI, pressed in the
// web UI) is theirs already: no software chose it, and nothing in it was
// written by software either.
func likesFollows(call Call) *ToPerson {
	what, ok := initiated[call.Effect]
	if !ok || byPerson(call.Caller) || call.Caller == webCaller {
		return nil
	}
	return &ToPerson{Rule: RuleLikesFollows, PersonOnly: true,
		Reason: "X's developer guidelines prohibit auto-liking and automated following: a person decides " + what}
}

// PersonOnly returns the route of a call that only a person may decide,
// nil for any other: an agent allowed to approve items
// (mcp_policy.allow_agent_approval) may not approve it.
func PersonOnly(call Call) *ToPerson {
	return likesFollows(call)
}
