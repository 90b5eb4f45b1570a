// Package describe says in words what a mutation does and reads from X the
// post or the account it touches, for the people who decide on it: the
// CLI's `approve show` and the review page both show a queued delete, like
// or follow through it, rather than as its raw parameters.
package describe

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/tuitbot/tuitbot/internal/xrequest"
)

// Kind is what a mutation acts on.
type Kind string

// The kinds of target.
const (
	KindNone Kind = ""
	KindPost Kind = "post"
	KindUser Kind = "user"
)

// Target is the post or the account a mutation acts on.
type Target struct {
	Kind Kind
	ID   string
}

// Action is one mutation in words.
type Action struct {
	// Tool is the tool name, for those who want it.
	Tool string
	// Name is the action as a card title when its target is not known
	// ("Delete post", "Like", "Follow").
	Name string
	// Effect is what approving does, in a sentence.
	Effect string
	// Verb says what the action does to its target, for a one-line
	// listing ("deletes", "likes", "answers").
	Verb string
	// Plural names such actions in a rule's sentence ("Deletes need your
	// approval").
	Plural string
	Target Target

	// titled is Name with the target's name in it ("Follow %s").
	titled string
}

// Title is the card title: the name with who the target belongs to, when
// known (an "@handle"), as in "Reply to @gabe" or "Follow @gabe".
func (a Action) Title(who string) string {
	if who == "" || a.titled == "" {
		return a.Name
	}
	return fmt.Sprintf(a.titled, who)
}

// targetLabels name the target of the verbs whose words differ from
// "The post this <verb>".
var targetLabels = map[string]string{
	"answers": "The post this answers", "quotes": "The post this quotes", "deletes": "The post this deletes",
	"edits": "The post as it stands, which this edits",
}

// TargetLabel names the target for a reader ("The post this deletes", "The
// account this follows"); "" when the action has none. The review page
// and the notifications both label it so.
func (a Action) TargetLabel() string {
	switch a.Target.Kind {
	case KindNone:
		return ""
	case KindUser:
		return "The account this " + a.Verb
	}
	if l := targetLabels[a.Verb]; l != "" {
		return l
	}
	return "The " + string(a.Target.Kind) + " this " + a.Verb
}

// wording is a tool's row of the table below; param names the parameter
// holding the target's id.
type wording struct {
	name, titled, verb, plural, effect string
	kind                               Kind
	param                              string
}

// words are every mutation tool in words. TestEveryMutationHasWords keeps
// the table complete.
var words = map[string]wording{
	"x_post_tweet": {name: "Post", plural: "Posts", verb: "posts",
		effect: "Posts this text from your account."},
	"x_reply_to_tweet": {name: "Reply", titled: "Reply to %s", plural: "Replies", verb: "answers", kind: KindPost, param: "in_reply_to_id",
		effect: "Posts this text as a reply to the post shown."},
	"x_quote_tweet": {name: "Quote", titled: "Quote %s", plural: "Quotes", verb: "quotes", kind: KindPost, param: "quoted_tweet_id",
		effect: "Posts this text with the post shown quoted under it."},
	"x_post_thread": {name: "Thread", plural: "Threads", verb: "posts",
		effect: "Posts these posts as a thread, each one replying to the one before."},
	"x_edit_tweet": {name: "Edit post", titled: "Edit %s's post", plural: "Edits", verb: "edits", kind: KindPost, param: "tweet_id",
		effect: "Replaces the text of the post shown with this text: X makes a new version with a new id and keeps the earlier one in the post's edit history."},
	"x_delete_tweet": {name: "Delete post", plural: "Deletes", verb: "deletes", kind: KindPost, param: "tweet_id",
		effect: "Removes this post from X for good: a deleted post cannot be brought back."},
	"x_like_tweet": {name: "Like", titled: "Like %s's post", plural: "Likes", verb: "likes", kind: KindPost, param: "tweet_id",
		effect: "Likes this post; its author may be told."},
	"x_unlike_tweet": {name: "Unlike", titled: "Unlike %s's post", plural: "Unlikes", verb: "unlikes", kind: KindPost, param: "tweet_id",
		effect: "Takes your like off this post."},
	"x_retweet": {name: "Repost", titled: "Repost %s's post", plural: "Reposts", verb: "reposts", kind: KindPost, param: "tweet_id",
		effect: "Reposts this post to your followers."},
	"x_unretweet": {name: "Undo repost", titled: "Undo repost of %s's post", plural: "Undone reposts", verb: "un-reposts", kind: KindPost, param: "tweet_id",
		effect: "Takes your repost of this post away."},
	"x_bookmark_tweet": {name: "Bookmark", titled: "Bookmark %s's post", plural: "Bookmarks", verb: "bookmarks", kind: KindPost, param: "tweet_id",
		effect: "Bookmarks this post; only you see your bookmarks."},
	"x_unbookmark_tweet": {name: "Remove bookmark", titled: "Remove bookmark of %s's post", plural: "Removed bookmarks", verb: "unbookmarks", kind: KindPost, param: "tweet_id",
		effect: "Takes this post out of your bookmarks."},
	"x_follow_user": {name: "Follow", titled: "Follow %s", plural: "Follows", verb: "follows", kind: KindUser, param: "target_user_id",
		effect: "Follows this account; it is told."},
	"x_unfollow_user": {name: "Unfollow", titled: "Unfollow %s", plural: "Unfollows", verb: "unfollows", kind: KindUser, param: "target_user_id",
		effect: "Stops following this account."},
	"x_mute_user": {name: "Mute", titled: "Mute %s", plural: "Mutes", verb: "mutes", kind: KindUser, param: "target_user_id",
		effect: "Mutes this account: its posts leave your timelines; it is not told."},
	"x_unmute_user": {name: "Unmute", titled: "Unmute %s", plural: "Unmutes", verb: "unmutes", kind: KindUser, param: "target_user_id",
		effect: "Unmutes this account: its posts come back to your timelines."},
	"x_list_create": {name: "Create list", plural: "New lists", verb: "creates",
		effect: "Creates this List on your account; a private List is seen by you alone."},
	"x_list_delete": {name: "Delete list", plural: "List deletes", verb: "deletes",
		effect: "Deletes this List for good: its members and followers are not kept, and it cannot be brought back."},
	"x_list_add_member": {name: "Add to list", titled: "Add %s to a list", plural: "List additions", verb: "adds to a list", kind: KindUser, param: "user_id",
		effect: "Adds this account to your List; it may be told."},
	"x_list_remove_member": {name: "Remove from list", titled: "Remove %s from a list", plural: "List removals", verb: "removes from a list", kind: KindUser, param: "user_id",
		effect: "Takes this account off your List."},
	"x_send_dm": {name: "Direct message", titled: "Message %s", plural: "Direct messages", verb: "messages", kind: KindUser, param: "participant_id",
		effect: "Sends this text as a private direct message to the account shown; it may be read at once, so deleting it later cannot take it back from someone who has read it."},
	"x_delete_dm": {name: "Delete message", plural: "Deleted messages", verb: "deletes",
		effect: "Deletes this direct message you sent; the recipient may already have read it."},
	"x_upload_media": {name: "Upload media", plural: "Uploads", verb: "uploads",
		effect: "Uploads this file to X; it expires after 24 hours unless a post uses it."},
	"x_upload_media_from_url": {name: "Upload media from a link", plural: "Uploads from links", verb: "uploads",
		effect: "Downloads the file at this link and uploads it to X; it expires after 24 hours unless a post uses it."},
	"x_post": {name: "API request (POST)", plural: "Raw API requests", verb: "sends",
		effect: "Sends this request to X's API exactly as written."},
	"x_put": {name: "API request (PUT)", plural: "Raw API requests", verb: "sends",
		effect: "Sends this request to X's API exactly as written."},
	"x_delete": {name: "API request (DELETE)", plural: "Raw API requests", verb: "sends",
		effect: "Sends this request to X's API exactly as written."},
}

// Of describes a call of tool with params. equivalent is the typed tool a
// universal request does the work of (as the gateway recorded it), whose
// words and target it then takes: a raw DELETE of a post reads as a
// delete of that post.
func Of(tool, equivalent string, params json.RawMessage) Action {
	w, ok := words[tool]
	if !ok {
		return Action{Tool: tool, Name: tool, Verb: "changes", Plural: "Calls of " + tool, Effect: "Calls " + tool + " with the parameters shown."}
	}
	a := Action{Tool: tool, Name: w.name, titled: w.titled, Effect: w.effect, Verb: w.verb, Plural: w.plural}
	if e, ok := words[equivalent]; ok && equivalent != tool {
		a.Name, a.titled, a.Verb, a.Plural = e.name, e.titled, e.verb, e.plural
		a.Effect = e.effect + " It goes to X as the raw request shown."
		a.Target = rawTarget(e, params)
		return a
	}
	if w.kind != KindNone {
		// Only the one field is decoded: a page lists many rows.
		var m map[string]json.RawMessage
		var id string
		if json.Unmarshal(params, &m) == nil && json.Unmarshal(m[w.param], &id) == nil && id != "" {
			a.Target = Target{Kind: w.kind, ID: id}
		}
	}
	return a
}

// IsRaw reports a universal request tool, whose parameters are the
// request itself.
func IsRaw(tool string) bool { return tool == "x_post" || tool == "x_put" || tool == "x_delete" }

// rawTarget finds the target of a universal request where X's write
// endpoints name the post or account they change: in the path, or for an
// edit in the body.
func rawTarget(w wording, params json.RawMessage) Target {
	var p struct {
		Method string `json:"method"`
		Path   string `json:"path"`
		Body   string `json:"body"`
	}
	if w.kind == KindNone || json.Unmarshal(params, &p) != nil {
		return Target{}
	}
	e := xrequest.Classify(p.Method, p.Path)
	if c, err := xrequest.Check(xrequest.Request{Method: p.Method, Path: p.Path, Body: p.Body}); err == nil {
		e = xrequest.ClassifyChecked(c)
	}
	id := e.TweetID
	if w.kind == KindUser {
		id = e.TargetUserID
	}
	if id == "" {
		return Target{}
	}
	return Target{Kind: w.kind, ID: id}
}

// EditOf reads an edit, typed or universal, as the post it edits and its
// new text; ok is false for any other call.
func EditOf(tool, equivalent string, params json.RawMessage) (postID, newText string, ok bool) {
	if tool != "x_edit_tweet" && equivalent != "x_edit_tweet" {
		return "", "", false
	}
	var p struct {
		TweetID string `json:"tweet_id"`
		Text    string `json:"text"`
		Body    string `json:"body"`
	}
	if json.Unmarshal(params, &p) != nil {
		return "", "", false
	}
	if tool != "x_edit_tweet" {
		var b struct {
			Text        string `json:"text"`
			EditOptions struct {
				PreviousPostID string `json:"previous_post_id"`
			} `json:"edit_options"`
		}
		if json.Unmarshal([]byte(p.Body), &b) != nil {
			return "", "", false
		}
		p.TweetID, p.Text = b.EditOptions.PreviousPostID, b.Text
	}
	return p.TweetID, p.Text, p.TweetID != ""
}

// EditLine says what an edit changes, in one line for a terminal:
// `Edits post N: "old" -> "new"`. old is empty when the post could not be
// read.
func EditLine(postID, oldText, newText string) string {
	was := fmt.Sprintf("%q", oldText)
	if oldText == "" {
		was = "(its text could not be read)"
	}
	return fmt.Sprintf("Edits post %s: %s -> %q", postID, was, newText)
}

// Tools lists the tools the table describes, for tests.
func Tools() []string {
	out := make([]string, 0, len(words))
	for t := range words {
		out = append(out, t)
	}
	return out
}

// Handle is "@username", or "" for none.
func Handle(username string) string {
	username = strings.TrimPrefix(username, "@")
	if username == "" {
		return ""
	}
	return "@" + username
}
