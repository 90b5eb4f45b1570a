package toolstest

import (
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// readXTools are the typed X reads (issue "Direct X API tools").
var readXTools = []string{
	"get_tweet_by_id", "x_get_user_by_username", "x_get_user_by_id", "x_get_users_by_ids", "x_search_tweets",
	"x_get_user_mentions", "x_get_user_tweets", "x_get_home_timeline", "x_get_followers", "x_get_following",
	"x_get_liked_tweets", "x_get_bookmarks", "x_get_tweet_liking_users", "x_get_me",
}

// TestAnnotations checks the hints clients see on the wire: reads are
// read-only; like, bookmark and follow are idempotent and not destructive;
// deletes and unfollows (and every undo) are destructive; creating posts is
// neither idempotent nor destructive.
func TestAnnotations(t *testing.T) {
	e := newEnv(t, envOptions{agentApproval: true})
	byName := map[string]*mcp.Tool{}
	for _, tool := range e.tools() {
		byName[tool.Name] = tool
	}
	hints := func(name string) *mcp.ToolAnnotations {
		t.Helper()
		tool, ok := byName[name]
		if !ok {
			t.Fatalf("tool %s is not registered in the workflow profile", name)
		}
		if tool.Annotations == nil || tool.Annotations.DestructiveHint == nil || tool.Annotations.OpenWorldHint == nil {
			t.Fatalf("%s: annotations %+v do not set every hint", name, tool.Annotations)
		}
		return tool.Annotations
	}
	for _, name := range readXTools {
		a := hints(name)
		if !a.ReadOnlyHint || *a.DestructiveHint || !a.IdempotentHint || !*a.OpenWorldHint {
			t.Errorf("%s: %+v, want read-only, idempotent, open-world, not destructive", name, a)
		}
	}
	for _, name := range []string{"x_like_tweet", "x_bookmark_tweet", "x_follow_user", "x_retweet", "x_upload_media"} {
		a := hints(name)
		if a.ReadOnlyHint || *a.DestructiveHint || !a.IdempotentHint || !*a.OpenWorldHint {
			t.Errorf("%s: %+v, want idempotent, not destructive, not read-only", name, a)
		}
	}
	for _, name := range []string{"x_delete_tweet", "x_unfollow_user", "x_unlike_tweet", "x_unretweet", "x_unbookmark_tweet"} {
		a := hints(name)
		if a.ReadOnlyHint || !*a.DestructiveHint || !*a.OpenWorldHint {
			t.Errorf("%s: %+v, want destructive, not read-only", name, a)
		}
	}
	for _, name := range []string{"x_post_tweet", "x_reply_to_tweet", "x_quote_tweet", "x_post_thread", "propose_and_queue_replies"} {
		a := hints(name)
		if a.ReadOnlyHint || *a.DestructiveHint || a.IdempotentHint || !*a.OpenWorldHint {
			t.Errorf("%s: %+v, want not read-only, not destructive, not idempotent", name, a)
		}
	}
	for _, name := range []string{"x_post_tweet_dry_run", "x_post_thread_dry_run", "get_stats", "get_x_usage", "get_recent_replies",
		"get_action_log", "get_discovery_feed", "list_unreplied_tweets", "list_drafts", "score_tweet"} {
		a := hints(name)
		if !a.ReadOnlyHint || *a.DestructiveHint || *a.OpenWorldHint {
			t.Errorf("%s: %+v, want read-only and closed-world", name, a)
		}
	}
	// Every X mutation says so in its description: an agent must know a
	// call may be queued rather than run.
	for name, tool := range byName {
		if strings.HasPrefix(name, "x_") && !tool.Annotations.ReadOnlyHint && !strings.Contains(tool.Description, "gateway") &&
			!strings.HasSuffix(name, "_dry_run") {
			t.Errorf("%s: description %q does not mention the gateway", name, tool.Description)
		}
	}
}
