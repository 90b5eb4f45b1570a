package mcpserver

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Toolset is a named group of tools a person picks as a whole ("compose",
// "engage"). Toolsets narrow what a server lists inside its profile; the
// profile alone says which tools may exist at all.
type Toolset struct {
	Name        string
	Description string
	Tools       []string
}

// The selections that are not toolsets of their own.
const (
	// DefaultToolset names the default selection: the job most users
	// start with, small enough for every client (see defaultTools).
	DefaultToolset = "default"
	// AllToolsets names the whole profile.
	AllToolsets = "all"
	// dynamicToolset holds the tools that find and enable toolsets; it is
	// served only when toolsets are found on demand.
	dynamicToolset = "dynamic"
)

// Toolsets is the one table of toolsets: every registry row belongs to
// exactly one (TestEveryToolHasOneToolset). The CLI, the docs, the
// dynamic tools and mcp install all read it.
func Toolsets() []Toolset {
	return []Toolset{
		{Name: "meta", Description: "health, capabilities, mode, config, policy, rate limits and usage", Tools: []string{
			"health_check", "get_capabilities", "get_mode", "get_config", "validate_config", "get_policy_status",
			"get_rate_limits", "get_x_usage", "get_llm_usage"}},
		{Name: "compose", Description: "post, quote, thread, edit and delete tweets; upload media; drafts", Tools: []string{
			"x_post_tweet", "x_quote_tweet", "x_post_thread", "x_post_tweet_dry_run", "x_post_thread_dry_run",
			"x_edit_tweet", "x_delete_tweet", "x_upload_media", "x_upload_media_from_url", "compose_tweet",
			"list_drafts", "update_draft", "delete_draft"}},
		{Name: "approvals", Description: "the human approval queue: list, inspect and (when allowed) decide items", Tools: []string{
			"list_pending_approvals", "get_approval_item", "get_pending_count", "get_notification_status",
			"approve_item", "reject_item", "approve_all", "resolve_mutation"}},
		{Name: "read", Description: "read X: tweets, users, timelines, mentions, search, followers, likes, bookmarks", Tools: []string{
			"get_tweet_by_id", "x_get_me", "x_get_user_by_id", "x_get_user_by_username", "x_get_users_by_ids",
			"x_get_user_tweets", "x_get_user_mentions", "x_get_home_timeline", "x_search_tweets",
			"x_search_communities", "x_get_followers", "x_get_following", "x_get_liked_tweets",
			"x_get_tweet_liking_users", "x_get_bookmarks"}},
		{Name: "engage", Description: "reply, like, repost, follow, mute and bookmark; hand-offs of what the API may not do", Tools: []string{
			"x_reply_to_tweet", "x_like_tweet", "x_unlike_tweet", "x_retweet", "x_unretweet", "x_follow_user",
			"x_unfollow_user", "x_mute_user", "x_unmute_user", "x_bookmark_tweet", "x_unbookmark_tweet", "get_handoff"}},
		{Name: "dm", Description: "direct messages: send, read, delete", Tools: []string{
			"x_send_dm", "x_get_dm_events", "x_delete_dm"}},
		{Name: "lists", Description: "X Lists: create, delete, members, tweets", Tools: []string{
			"x_list_create", "x_list_delete", "x_list_add_member", "x_list_remove_member", "x_get_owned_lists",
			"x_get_list_members", "x_get_list_tweets"}},
		{Name: "content", Description: "LLM drafting and scoring: tweets, threads, replies, topics", Tools: []string{
			"generate_tweet", "generate_thread", "generate_thread_plan", "generate_reply", "suggest_topics", "score_tweet"}},
		{Name: "schedule", Description: "the posting queue, recurring and evergreen posts, best times", Tools: []string{
			"schedule_in_queue", "get_queue_slots", "get_next_free_slot", "suggest_queue_slots",
			"get_best_posting_times", "create_recurring_post", "list_recurring_posts", "update_recurring_post",
			"delete_recurring_post", "mark_evergreen", "unmark_evergreen", "list_evergreen"}},
		{Name: "discovery", Description: "reply opportunities, candidates and target accounts", Tools: []string{
			"find_reply_opportunities", "draft_replies_for_candidates", "get_discovery_feed",
			"list_unreplied_tweets", "propose_and_queue_replies", "add_target_account", "list_target_accounts",
			"remove_target_account", "get_author_context"}},
		{Name: "analytics", Description: "stats, follower trend, replies, mutations, the action log and exports", Tools: []string{
			"get_stats", "get_follower_trend", "get_recent_replies", "get_reply_count_today",
			"get_recent_mutations", "get_mutation_detail", "get_action_counts", "get_action_log", "export_data"}},
		{Name: "raw", Description: "universal X API requests: x_get, x_post, x_put, x_delete", Tools: []string{
			"x_get", "x_post", "x_put", "x_delete"}},
		{Name: dynamicToolset, Description: "find and enable toolsets on demand (served with dynamic toolsets)", Tools: []string{
			"list_toolsets", "find_tools", "enable_toolset"}},
	}
}

// defaultTools is the default selection: compose, approvals, a few reads
// and meta. It fits every client's tool limit and a small share of a
// model's context (TestDefaultSelectionBudget).
func defaultTools() []string {
	return []string{
		// get_capabilities reports the mode and approval mode too, so
		// get_mode is left to the meta toolset.
		"health_check", "get_capabilities",
		"x_post_tweet", "x_post_thread", "x_reply_to_tweet", "x_upload_media", "list_drafts",
		"list_pending_approvals", "get_approval_item",
		"approve_item", "reject_item", "approve_all", "resolve_mutation",
		"x_get_me", "get_tweet_by_id", "x_search_tweets", "x_get_user_mentions",
	}
}

// ToolsetNames lists the names --toolsets accepts, in table order, then
// default and all. The finding tools come with dynamic toolsets, never
// by name.
func ToolsetNames() []string {
	var out []string
	for _, ts := range Toolsets() {
		if ts.Name != dynamicToolset {
			out = append(out, ts.Name)
		}
	}
	return append(out, DefaultToolset, AllToolsets)
}

// ToolsetOf names the toolset tool belongs to ("" for none).
func ToolsetOf(tool string) string {
	for _, ts := range Toolsets() {
		if slices.Contains(ts.Tools, tool) {
			return ts.Name
		}
	}
	return ""
}

// toolsetTools returns the tools a toolset name selects; all selects the
// whole registry (the profile then narrows it).
func toolsetTools(name string) ([]string, bool) {
	switch name {
	case DefaultToolset:
		return defaultTools(), true
	case AllToolsets:
		var out []string
		for _, ts := range Toolsets() {
			if ts.Name != dynamicToolset {
				out = append(out, ts.Tools...)
			}
		}
		return out, true
	}
	for _, ts := range Toolsets() {
		if ts.Name == name {
			return ts.Tools, true
		}
	}
	return nil, false
}

// CheckToolsets refuses unknown toolset names, naming every one of them.
func CheckToolsets(from string, names []string) error {
	var unknown []string
	for _, n := range names {
		if _, ok := toolsetTools(n); !ok || n == dynamicToolset {
			unknown = append(unknown, n)
		}
	}
	if len(unknown) > 0 {
		return fmt.Errorf("%s: unknown toolset %s; allowed values: %s", from, quoteList(unknown), strings.Join(ToolsetNames(), ", "))
	}
	return nil
}

// CheckTools refuses unknown tool names, naming every one of them. The
// toolset table names every registry row and nothing else
// (TestEveryToolHasOneToolset), so it answers without building the
// registry, which a start would otherwise do once per list checked.
func CheckTools(from string, names []string) error {
	var unknown []string
	for _, n := range names {
		if ToolsetOf(n) == "" {
			unknown = append(unknown, n)
		}
	}
	if len(unknown) > 0 {
		return fmt.Errorf("%s: unknown tool %s; `tuitbot mcp manifest` lists every tool", from, quoteList(unknown))
	}
	return nil
}

func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}

// Selection narrows a profile to the tools a client holds. Empty means
// the whole profile.
type Selection struct {
	Toolsets     []string
	Tools        []string
	ExcludeTools []string
}

// Empty reports a selection that names nothing to include.
func (s Selection) Empty() bool { return len(s.Toolsets) == 0 && len(s.Tools) == 0 }

// names returns the tool names s includes (nil when it names none, which
// means the whole profile), after checking every name.
func (s Selection) names() (map[string]bool, error) {
	if err := CheckToolsets("toolsets", s.Toolsets); err != nil {
		return nil, err
	}
	if err := CheckTools("tools", append(slices.Clone(s.Tools), s.ExcludeTools...)); err != nil {
		return nil, err
	}
	if s.Empty() {
		return nil, nil
	}
	in := map[string]bool{}
	for _, n := range s.Toolsets {
		tools, _ := toolsetTools(n)
		for _, t := range tools {
			in[t] = true
		}
	}
	for _, t := range s.Tools {
		in[t] = true
	}
	return in, nil
}

// ListBytes is the size of the tools/list answer that lists tools: what a
// client reads, and about four bytes per token of a model's context.
func ListBytes(tools []*Tool) (int, error) {
	listed := make([]*mcp.Tool, 0, len(tools))
	for _, t := range tools {
		schema, err := t.deriveInputSchemaJSON()
		if err != nil {
			return 0, err
		}
		listed = append(listed, &mcp.Tool{Name: t.Name, Title: t.Title, Description: t.Description,
			InputSchema: schema, Annotations: t.Annotations()})
	}
	// The SDK lists in name order.
	slices.SortFunc(listed, func(a, b *mcp.Tool) int { return strings.Compare(a.Name, b.Name) })
	b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "result": &mcp.ListToolsResult{Tools: listed}})
	if err != nil {
		return 0, err
	}
	return len(b) + 1, nil // the newline that ends the message
}

// SelectionTools returns the rows a selection lists in profile p with
// every config-gated tool on: the most it can list.
func SelectionTools(p Profile, sel Selection, dynamic bool) ([]*Tool, error) {
	var all []*Tool
	for _, t := range Registry() {
		t.Enabled = nil
		all = append(all, t)
	}
	var out []*Tool
	if !sel.Empty() || len(sel.ExcludeTools) > 0 || !dynamic {
		var err error
		if out, err = Select(all, Options{Profile: p, Toolsets: sel.Toolsets, Tools: sel.Tools, ExcludeTools: sel.ExcludeTools}); err != nil {
			return nil, err
		}
	}
	if dynamic {
		for _, t := range all {
			if t.OnDemand && t.In(p) {
				out = append(out, t)
			}
		}
	}
	return out, nil
}

// toolsetsDoc is docs/tools.md's toolset table.
func toolsetsDoc(b *strings.Builder) error {
	b.WriteString("## Toolsets\n\n")
	b.WriteString("A profile says which tools may exist at all; toolsets choose which of them a client lists (`mcp serve --toolsets`, `--tools`, `--exclude-tools`, the `[mcp]` keys of the same names, or per HTTP session the headers `" + HeaderToolsets + "`, `" + HeaderTools + "` and `" + HeaderExcludeTools + "`). Without a selection the whole profile is listed. `default` is the selection `mcp install` writes. With dynamic toolsets (`--dynamic-toolsets`, or `mcp.dynamic_toolsets = \"auto\"` for a client that subscribes to `notifications/tools/list_changed`) a session starts at the selection (`default` when none) plus `list_toolsets`, `find_tools` and `enable_toolset`; enabling a toolset lists its tools and sends `notifications/tools/list_changed`, and never widens the profile, the policy or approval.\n\n")
	b.WriteString("Bytes are those of the `tools/list` answer in the workflow profile with every config-gated tool on; tokens are bytes ÷ 4.\n\n")
	b.WriteString("| Toolset | Tools | tools/list bytes | ≈ tokens | Its tools |\n|---|---|---|---|---|\n")
	row := func(name string, tools []*Tool) error {
		n, err := ListBytes(tools)
		if err != nil {
			return err
		}
		names := make([]string, len(tools))
		for i, t := range tools {
			names[i] = "`" + t.Name + "`"
		}
		fmt.Fprintf(b, "| %s | %d | %d | %d | %s |\n", name, len(tools), n, n/4, strings.Join(names, ", "))
		return nil
	}
	for _, ts := range Toolsets() {
		var tools []*Tool
		var err error
		if ts.Name == dynamicToolset {
			tools, err = SelectionTools(Workflow, Selection{}, true)
		} else {
			tools, err = SelectionTools(Workflow, Selection{Toolsets: []string{ts.Name}}, false)
		}
		if err != nil {
			return err
		}
		if err := row("`"+ts.Name+"`", tools); err != nil {
			return err
		}
	}
	def, err := SelectionTools(Workflow, Selection{Toolsets: []string{DefaultToolset}}, false)
	if err != nil {
		return err
	}
	if err := row("**`default` selection**", def); err != nil {
		return err
	}
	if def, err = SelectionTools(Workflow, Selection{Toolsets: []string{DefaultToolset}}, true); err != nil {
		return err
	}
	if err := row("**`default` + finding tools** (dynamic)", def); err != nil {
		return err
	}
	b.WriteString("\n| Profile (whole) | Tools | tools/list bytes | ≈ tokens |\n|---|---|---|---|\n")
	for _, p := range allProfiles {
		tools, err := SelectionTools(p, Selection{}, false)
		if err != nil {
			return err
		}
		n, err := ListBytes(tools)
		if err != nil {
			return err
		}
		fmt.Fprintf(b, "| `%s` | %d | %d | %d |\n", p, len(tools), n, n/4)
	}
	b.WriteString("\n")
	return nil
}
