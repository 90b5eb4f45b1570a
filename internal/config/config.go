// Package config loads tuitbot's TOML configuration: built-in defaults, then
// the file, then TUITBOT_* environment overrides. Every key has a default so
// the binary runs with no file at all.
package config

import (
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/tuitbot/tuitbot/internal/redact"
)

// Config is the whole configuration. Top-level keys come first; sections
// follow. The toml tags are the file's key names and, upper-cased, the
// environment override names (TUITBOT_<SECTION>__<KEY>).
type Config struct {
	Mode            string `toml:"mode" doc:"Operating mode: autopilot or composer. Composer sends every mutation to approval."`
	ApprovalMode    bool   `toml:"approval_mode" doc:"Route every mutation that no policy rule explicitly allows to the human approval queue."`
	MaxBatchApprove int    `toml:"max_batch_approve" doc:"Most items one approve_all may approve."`
	DefaultAccount  string `toml:"default_account" doc:"Account a tool call or command acts for when it names none (empty = default, the account the top-level settings describe). Other accounts are [accounts.NAME] sections."`

	XAPI      XAPI      `toml:"x_api"`
	LLM       LLM       `toml:"llm"`
	Business  Business  `toml:"business"`
	Scoring   Scoring   `toml:"scoring"`
	Limits    Limits    `toml:"limits"`
	Storage   Storage   `toml:"storage"`
	MCP       MCP       `toml:"mcp"`
	MCPPolicy MCPPolicy `toml:"mcp_policy"`
	Gateway   Gateway   `toml:"gateway"`
	Media     Media     `toml:"media"`
	Schedule  Schedule  `toml:"schedule"`
	Queue     Queue     `toml:"queue"`
	Evergreen Evergreen `toml:"evergreen"`
	Intervals Intervals `toml:"intervals"`
	Targets   Targets   `toml:"targets"`
	Breaker   Breaker   `toml:"circuit_breaker"`
	Sandbox   Sandbox   `toml:"sandbox"`
	Logging   Logging   `toml:"logging"`
	Notify    Notify    `toml:"notify"`
	// ApprovalLinks configures the signed one-time links notifications carry.
	ApprovalLinks ApprovalLinks `toml:"approval_links"`
	// Accounts are the [accounts.NAME] sections: further X accounts, each
	// overriding some of the settings above (see AccountKeys) and
	// inheriting the rest. They are kept as decoded TOML and applied by
	// ForAccount, so a key an account leaves out always follows the
	// top-level value, environment overrides included.
	Accounts   map[string]map[string]any `toml:"accounts"`
	ConfigPath string                    `toml:"-"`
	Home       string                    `toml:"-"`
}

// XAPI configures access to X.
type XAPI struct {
	ClientID          string     `toml:"client_id" doc:"OAuth 2.0 client id of your X app."`
	ClientSecret      string     `toml:"client_secret" secret:"true" doc:"OAuth 2.0 client secret (confidential clients only)."`
	APIBaseURL        string     `toml:"api_base_url" doc:"Where the logical host api.x.com points. Operator setting; tool input cannot change it."`
	UploadBaseURL     string     `toml:"upload_base_url" doc:"Where the logical host upload.x.com points."`
	LegacyUploadURL   string     `toml:"legacy_upload_base_url" doc:"Where the logical host upload.twitter.com points."`
	AuthorizeURL      string     `toml:"authorize_url" doc:"OAuth 2.0 authorize endpoint."`
	TokenURL          string     `toml:"token_url" doc:"OAuth 2.0 token endpoint."`
	CallbackAddr      string     `toml:"callback_addr" doc:"Loopback address for the login callback listener."`
	TimeoutSeconds    int        `toml:"timeout_seconds" doc:"Timeout of every X request."`
	MaxBodyBytes      int64      `toml:"max_body_bytes" doc:"Largest X response body accepted."`
	MaxAttempts       int        `toml:"max_attempts" doc:"Attempts for requests that are safe to retry."`
	MaxRateLimitWaitS int        `toml:"max_rate_limit_wait_seconds" doc:"Longest wait for an X rate-limit reset before giving up with x_rate_limited."`
	MaxPostLength     PostLength `toml:"max_post_length" doc:"Longest post, in weighted characters: auto (ask X for the account's subscription_type once a day: Basic, Premium and PremiumPlus get 25000, others 280), 280 or 25000. An account section may set it."`
	Access            Access     `toml:"access" doc:"The API access level of the account's X app: pay_per_use (X's self-serve access: no likes, follows or quote posts, replies only to posts that summoned the account) or enterprise (a contract with X: all of them). Calls the level does not allow are refused before X is called. An account section may set it."`
	OwnRepliesSummon  bool       `toml:"own_replies_summon" doc:"Whether a post that replies to one of the account's posts counts as summoning the account, so that on pay_per_use the account may answer replies to its posts that do not name it (X counts them as mentions but has not said whether they summon). X's automation rules name replying to a post from your account as the user's opt-in. An account section may set it."`
	AIRepliesApproved bool       `toml:"ai_replies_approved" doc:"Declares that X approved this app's AI-generated replies (X requires its prior approval for them). An account section may set it."`
	OptOutPhrases     []string   `toml:"opt_out_phrases" doc:"Phrases by which a user tells the account to stop (X's guidelines: \"If a user says 'stop,' stop\"): a mention, reply or DM saying one, as whole words in any case or width, puts its author on the account's suppression list, and no automated reply, @mention or DM reaches them until a person runs tuitbot optouts clear. Empty means stop, unsubscribe, opt out, opt-out, optout, leave me alone, go away, do not contact me, don't contact me."`
	IntentBaseURL     string     `toml:"intent_base_url" doc:"Where X's Web Intents live (the x.com pages where a person, logged in, presses Post, Like or Follow): the links of hand-offs and of refusals' hints. In the sandbox the emulator serves them."`
	HandOffWindowH    int        `toml:"handoff_window_hours" doc:"How long tuitbot keeps looking (with owned reads of the account's posts, likes and follows) for a hand-off a person was asked to do on x.com before recording it not_done."`
	CrossAccountDupH  int        `toml:"cross_account_duplicate_hours" doc:"How far back a post's text is compared with what the home's other accounts posted (X's automation rules forbid the same or substantially similar posts across the accounts one operates): a post, reply, quote or thread part that is the same or nearly the same (links, case, whitespace, punctuation and emoji aside, at least 90% alike) as another account's post within this many hours is refused before X with cross_account_duplicate. 1 to 720. An account section may set it."`
	HandOffCheckS     int        `toml:"handoff_check_seconds" doc:"How often a long-running process (mcp serve, run, web; one process per account at a time) looks on X, with owned reads, whether a person did the open hand-offs; each open hand-off is looked for at most this often."`
}

// Access is x_api.access: the API access level of the account's X app.
type Access string

// The values x_api.access takes.
const (
	AccessPayPerUse  Access = "pay_per_use"
	AccessEnterprise Access = "enterprise"
)

// PostLength is x_api.max_post_length: "auto", "280" or "25000". It is
// written as a string or a number.
type PostLength string

// The values x_api.max_post_length takes.
const (
	PostLengthAuto  PostLength = "auto"
	PostLengthShort PostLength = "280"
	PostLengthLong  PostLength = "25000"
)

// UnmarshalTOML takes a string or an integer; Validate judges the value,
// so an error names the key.
func (p *PostLength) UnmarshalTOML(v any) error {
	switch x := v.(type) {
	case string:
		*p = PostLength(strings.TrimSpace(x))
	case int64:
		*p = PostLength(strconv.FormatInt(x, 10))
	default:
		*p = PostLength(fmt.Sprint(x))
	}
	return nil
}

// LLM configures the language model provider.
type LLM struct {
	Provider       string  `toml:"provider" doc:"openai (and any OpenAI-compatible server) or anthropic; empty disables LLM tools (with --sandbox the labelled stand-in drafts instead, see sandbox.llm_stand_in)."`
	Model          string  `toml:"model" doc:"Model name, e.g. gpt-4o-mini, claude-sonnet-4-5, llama3.1."`
	BaseURL        string  `toml:"base_url" doc:"Provider base URL, e.g. http://127.0.0.1:11434/v1 for Ollama."`
	APIKey         string  `toml:"api_key" secret:"true" doc:"Provider API key. Prefer api_key_env."`
	APIKeyEnv      string  `toml:"api_key_env" secret:"env" doc:"Name of the environment variable holding the API key."`
	TimeoutSeconds int     `toml:"timeout_seconds" doc:"Timeout of every LLM call."`
	MaxTokens      int     `toml:"max_tokens" doc:"Most tokens one completion may produce."`
	Temperature    float64 `toml:"temperature" doc:"Sampling temperature, 0 to 2."`
}

// Business is the profile that prompts and scoring draw on.
type Business struct {
	ProductName        string   `toml:"product_name" doc:"Your product's name."`
	ProductDescription string   `toml:"product_description" doc:"One or two sentences about the product."`
	ProductURL         string   `toml:"product_url" doc:"Product URL."`
	TargetAudience     string   `toml:"target_audience" doc:"Who the product is for."`
	BrandVoice         string   `toml:"brand_voice" doc:"How posts should sound."`
	ReplyStyle         string   `toml:"reply_style" doc:"How replies should sound."`
	ContentStyle       string   `toml:"content_style" doc:"How original posts should sound."`
	PersonaOpinions    []string `toml:"persona_opinions" doc:"Opinions the persona holds."`
	PersonaExperiences []string `toml:"persona_experiences" doc:"Experiences the persona can draw on."`
	ContentPillars     []string `toml:"content_pillars" doc:"Topics original content rotates through."`
	ProductKeywords    []string `toml:"product_keywords" doc:"Keywords discovery searches for."`
	CompetitorKeywords []string `toml:"competitor_keywords" doc:"Competitor keywords discovery searches for."`
	IndustryTopics     []string `toml:"industry_topics" doc:"Broader industry topics."`
}

// Scoring configures the 6-signal tweet score.
type Scoring struct {
	Threshold   float64 `toml:"threshold" doc:"Score (0-100) a tweet needs to be a reply opportunity."`
	Keyword     float64 `toml:"keyword_relevance_max" doc:"Weight of keyword relevance."`
	Follower    float64 `toml:"follower_count_max" doc:"Weight of the author follower sweet spot."`
	Recency     float64 `toml:"recency_max" doc:"Weight of recency."`
	Engagement  float64 `toml:"engagement_rate_max" doc:"Weight of engagement rate."`
	ReplyCount  float64 `toml:"reply_count_max" doc:"Weight of the reply count signal."`
	ContentType float64 `toml:"content_type_max" doc:"Weight of the content type signal."`
}

// Limits are the autopilot's safety caps.
type Limits struct {
	MaxRepliesPerDay          int      `toml:"max_replies_per_day" doc:"Daily cap on replies."`
	MaxTweetsPerDay           int      `toml:"max_tweets_per_day" doc:"Daily cap on original tweets."`
	MaxThreadsPerWeek         int      `toml:"max_threads_per_week" doc:"Weekly cap on threads."`
	MaxRepliesPerAuthorPerDay int      `toml:"max_replies_per_author_per_day" doc:"Most replies to one author per day."`
	MaxReplySuggestionsPerDay int      `toml:"max_reply_suggestions_per_day" doc:"Daily cap on reply suggestions: on pay_per_use, where the API may not reply to a post that did not summon the account, the discovery and targets loops hand their best drafts to a person (a hand-off with a Do it on X link) instead of replying; 0 suggests none."`
	MaxDMsPerDay              int      `toml:"max_dms_per_day" doc:"Most direct messages sent per 24 hours (x_send_dm, counted like every policy limit; 0 sends none). Each one also needs approval unless a policy rule names x_send_dm."`
	BannedPhrases             []string `toml:"banned_phrases" doc:"Phrases generated text must never contain."`
	ProductMentionRatio       float64  `toml:"product_mention_ratio" doc:"Largest share of replies that may mention the product."`
	MinActionDelaySeconds     int      `toml:"min_action_delay_seconds" doc:"Shortest pause between two autopilot posts that reach X (one that only enters the approval queue does not wait)."`
	MaxActionDelaySeconds     int      `toml:"max_action_delay_seconds" doc:"Longest pause between two autopilot posts that reach X."`
}

// Storage configures the database: a SQLite file by default, or a shared
// PostgreSQL database.
type Storage struct {
	DBPath string `toml:"db_path" doc:"SQLite file; empty means tuitbot.db in the home directory."`
	// DatabaseURL is secret because the URL may carry the password.
	DatabaseURL        string `toml:"database_url" secret:"true" doc:"PostgreSQL URL (postgres://user:password@host:5432/db); when set, tuitbot uses that database instead of the SQLite file, so several processes and hosts can share it."`
	AuditRetentionDays int    `toml:"audit_retention_days" doc:"Days mutation audit rows are kept."`
	RetentionDays      int    `toml:"retention_days" doc:"Days discovery and analytics rows are kept."`
}

// MCP configures the MCP server.
type MCP struct {
	Profile      string   `toml:"profile" doc:"Default profile: workflow (alias full), readonly or api-readonly."`
	Toolsets     []string `toml:"toolsets" doc:"Only list these toolsets (default, all, or the names in docs/tools.md), inside the profile; empty with empty tools = all of the profile."`
	Tools        []string `toml:"tools" doc:"Only register these tools, besides those of toolsets (empty = all of the profile)."`
	ExcludeTools []string `toml:"exclude_tools" doc:"Never register these tools; exclusions win."`
	// DynamicToolsets decides when a session finds toolsets on demand.
	DynamicToolsets string `toml:"dynamic_toolsets" doc:"auto: a client that declares it handles notifications/tools/list_changed starts at the selection (default when none) and enables toolsets with enable_toolset; on: every client; off: never."`
	// The HTTP transport serves anything on the machine that can reach the
	// port; these bound what one client can hold.
	HTTPMaxConnections        int   `toml:"http_max_connections" doc:"Most open connections the HTTP transport keeps; past it the longest-idle connection is closed (lowered to half the open-file limit when that is smaller)."`
	SessionIdleTimeoutSeconds int   `toml:"session_idle_timeout_seconds" doc:"An HTTP session that receives no request for this long is closed; its client gets 404 and initializes again."`
	MaxSessions               int   `toml:"max_sessions" doc:"Most HTTP sessions kept at once; past it the least recently used session is closed."`
	MaxMessageBytes           int64 `toml:"max_message_bytes" doc:"Largest single JSON-RPC message accepted on stdio and HTTP; larger ones get a JSON-RPC error stating the limit."`
}

// MCPPolicy configures the mutation policy (seed 003).
type MCPPolicy struct {
	EnforceForMutations bool     `toml:"enforce_for_mutations" doc:"Master switch for template, user and compat rules and limits. Hard rules always apply."`
	RequireApprovalFor  []string `toml:"require_approval_for" doc:"Tools routed to approval (compat key; unprefixed aliases accepted)."`
	// RequireApprovalForSet records that the file or the environment set
	// require_approval_for to something other than the default list. Only
	// such a list conflicts with blocked_tools; the default list simply
	// loses the tools that are blocked.
	RequireApprovalForSet bool         `toml:"-"`
	BlockedTools          []string     `toml:"blocked_tools" doc:"Tools always denied (compat key). Blocking a tool the default require_approval_for names is fine; blocked wins."`
	DryRunMutations       bool         `toml:"dry_run_mutations" doc:"Every mutation returns a dry-run envelope instead of executing."`
	MaxMutationsPerHour   int          `toml:"max_mutations_per_hour" doc:"Global hourly cap on executed mutations."`
	Template              string       `toml:"template" doc:"Baseline rule set: safe_default, growth_aggressive or agency_mode (empty = none)."`
	DailyBudgetUSD        float64      `toml:"daily_budget_usd" doc:"Daily cap on estimated X spend in USD (0 = no cap)."`
	AllowAgentApproval    bool         `toml:"allow_agent_approval" doc:"Let agents decide for a human (approve_item, reject_item, approve_all, resolve_mutation). Each account's own value decides for its items, whichever account the server runs for; off: an agent must not approve its own requests."`
	MaxPendingApprovals   int          `toml:"max_pending_approvals" doc:"Most items waiting for approval at once; past it a call routed to approval fails with approval_queue_full."`
	Rules                 []PolicyRule `toml:"rules" doc:"User rules ([[mcp_policy.rules]])."`
	RateLimits            []PolicyRate `toml:"rate_limits" doc:"User limits ([[mcp_policy.rate_limits]])."`
}

// PolicyRule is one user rule.
type PolicyRule struct {
	ID         string           `toml:"id"`
	Priority   int              `toml:"priority"`
	Label      string           `toml:"label"`
	Enabled    *bool            `toml:"enabled"` // nil means enabled: a rule someone wrote should apply
	Conditions PolicyConditions `toml:"conditions"`
	Action     PolicyAction     `toml:"action"`
}

// PolicyConditions are AND across fields, OR within a list.
type PolicyConditions struct {
	Tools          []string        `toml:"tools"`
	Categories     []string        `toml:"categories"`
	Modes          []string        `toml:"modes"`
	ScheduleWindow *ScheduleWindow `toml:"schedule_window"`
}

// ScheduleWindow is an hour range in a timezone on some days.
type ScheduleWindow struct {
	StartHour int      `toml:"start_hour"`
	EndHour   int      `toml:"end_hour"`
	Timezone  string   `toml:"timezone"`
	Days      []string `toml:"days"`
}

// PolicyAction is what a matching rule does.
type PolicyAction struct {
	Type   string `toml:"type"`
	Reason string `toml:"reason"`
}

// PolicyRate is one windowed limit.
type PolicyRate struct {
	Key           string  `toml:"key"`
	Dimension     string  `toml:"dimension"`
	MatchValue    string  `toml:"match_value"`
	MaxCount      float64 `toml:"max_count"`
	PeriodSeconds int64   `toml:"period_seconds"`
}

// Gateway configures idempotency and audit.
type Gateway struct {
	MemoryWindowSeconds int `toml:"memory_window_seconds" doc:"In-process duplicate window."`
	DBWindowSeconds     int `toml:"db_window_seconds" doc:"Database duplicate window."`
	ApprovalExpiryHours int `toml:"approval_expiry_hours" doc:"Pending approval items expire after this many hours."`
}

// Media configures x_upload_media and x_upload_media_from_url.
type Media struct {
	AllowedDirs []string `toml:"allowed_dirs" doc:"Directories x_upload_media may read from; empty means the media folder in the home directory."`
	// The URL keys keep x_upload_media_from_url off this host's network.
	URLAllowHTTP    bool     `toml:"url_allow_http" doc:"Let x_upload_media_from_url download over plain http as well as https."`
	URLAllowHosts   []string `toml:"url_allow_hosts" doc:"Hosts x_upload_media_from_url may download from (exact names, or *.example.com for subdomains); empty means any public host."`
	URLAllowPrivate []string `toml:"url_allow_private" doc:"Networks (CIDRs) x_upload_media_from_url may reach although they are not public, for a self-hosted media server; empty refuses loopback, private, link-local and other non-public addresses."`
	MaxURLBytes     int64    `toml:"max_url_bytes" doc:"Largest video x_upload_media_from_url downloads, in bytes (images stop at 5 MB and GIFs at 15 MB)."`
}

// Schedule configures autopilot active hours.
type Schedule struct {
	Timezone         string   `toml:"timezone" doc:"IANA timezone of the active hours."`
	ActiveHoursStart int      `toml:"active_hours_start" doc:"First active hour (0-23)."`
	ActiveHoursEnd   int      `toml:"active_hours_end" doc:"Hour activity stops (0-24, 24 being midnight; may wrap past midnight). All day: start = end, or 0 and 24."`
	ActiveDays       []string `toml:"active_days" doc:"Active days: mon..sun."`
	PreferredTimes   []string `toml:"preferred_times" doc:"HH:MM slots for original tweets; empty = use content_interval_seconds."`
}

// Queue configures the posting queue: the slots schedule_in_queue fills,
// read in schedule.timezone.
type Queue struct {
	Slots            []string `toml:"slots" doc:"Posting slots as days and an HH:MM time in schedule.timezone, e.g. [\"mon-fri 09:00\", \"sat,sun 11:00\"]; days are mon..sun, ranges (mon-fri) or daily. Empty = no queue."`
	MinGapMinutes    int      `toml:"min_gap_minutes" doc:"A free slot is at least this many minutes from any other scheduled post (0 = only the slot itself must be free)."`
	MaxPerDay        int      `toml:"max_per_day" doc:"Most scheduled posts on one day in schedule.timezone before its slots count as full (0 = no cap)."`
	LateGraceMinutes int      `toml:"late_grace_minutes" doc:"How late a queued item or a recurring post's occurrence may still publish when its time passed while nothing ran; past it the item moves to the next free slot (an occurrence with none goes back to the drafts) and publish.rescheduled is sent."`
}

// Evergreen configures recycling the account's best posts into queue
// slots nobody filled.
type Evergreen struct {
	Enabled         bool   `toml:"enabled" doc:"Recycle the posts marked with mark_evergreen; off, they are kept but never recycled."`
	MinIntervalDays int    `toml:"min_interval_days" doc:"Days before one evergreen post may be recycled again."`
	MaxRecycles     int    `toml:"max_recycles" doc:"Times one evergreen post is recycled at most."`
	FillEmptySlots  bool   `toml:"fill_empty_slots" doc:"A queue slot still empty 2 hours before its time gets the best eligible evergreen post (highest engagement when marked or last read), published through the gateway when the slot comes."`
	Mode            string `toml:"mode" doc:"How a post is recycled: repost (x_retweet; a post the account still reposts stays as it is on X), requote (x_quote_tweet with the post's next stored variant as the comment) or variant (a new post with the next stored variant). requote and variant pick only posts marked with variants."`
}

// Intervals pace the autopilot loops.
type Intervals struct {
	MentionsSeconds  int `toml:"mentions_check_seconds" doc:"Mentions loop interval."`
	DiscoverySeconds int `toml:"discovery_search_seconds" doc:"Discovery loop interval."`
	ContentSeconds   int `toml:"content_post_window_seconds" doc:"Content loop interval."`
	ThreadSeconds    int `toml:"thread_interval_seconds" doc:"Thread loop interval."`
	TargetsSeconds   int `toml:"targets_check_seconds" doc:"Targets loop interval."`
	AnalyticsSeconds int `toml:"analytics_seconds" doc:"Analytics loop interval."`
	JitterPercent    int `toml:"jitter_percent" doc:"Random jitter added to every interval, in percent."`
	// The publisher and housekeeping loops have no product-level pacing of
	// their own; these keep them paced by config like every other loop.
	PublisherSeconds    int      `toml:"publisher_seconds" doc:"How often the scheduled publisher looks for due drafts."`
	HousekeepingSeconds int      `toml:"housekeeping_seconds" doc:"How often expired approval items are cleaned up."`
	EnabledLoops        []string `toml:"enabled_loops" doc:"Autopilot loops that run: discovery, mentions, content, threads, targets, analytics, publisher, housekeeping."`
}

// Targets are accounts the targets loop watches.
type Targets struct {
	Accounts               []string `toml:"accounts" doc:"Usernames to monitor."`
	MaxTargetRepliesPerDay int      `toml:"max_target_replies_per_day" doc:"Daily cap on replies to target accounts."`
}

// Breaker configures the autopilot circuit breaker.
type Breaker struct {
	ErrorThreshold  int `toml:"error_threshold" doc:"Consecutive errors that open the breaker."`
	CooldownSeconds int `toml:"cooldown_seconds" doc:"How long an open breaker pauses a loop."`
}

// Sandbox configures --sandbox.
type Sandbox struct {
	StateFile string `toml:"state_file" doc:"The file that holds the sandbox world, shared by every --sandbox process (empty = world.json in the sandbox home)."`
	Seed      int64  `toml:"seed" doc:"Seed of the generated demo world."`
	// LLMStandIn lets the sandbox show the content tools and drafting loops
	// working without an API key; a configured llm.provider always wins.
	LLMStandIn bool `toml:"llm_stand_in" doc:"With no llm.provider, --sandbox drafts with a deterministic local stand-in whose every text starts with [sandbox stand-in] and costs nothing; false makes the content tools answer llm_not_configured as outside the sandbox."`
	// AllDay lets the sandbox demo work whenever it is tried: the
	// emulator has no audience whose hours the autopilot must keep.
	AllDay bool `toml:"all_day" doc:"With --sandbox the autopilot works all day, every day, whatever [schedule] says (the emulator has no audience to keep hours for); false keeps the active hours, to try a schedule. A real account always keeps them."`
}

// Logging configures slog output on stderr.
type Logging struct {
	Level string `toml:"level" doc:"debug, info, warn or error."`
}

// Default returns the built-in defaults.
func Default() Config {
	return Config{
		Mode:            "autopilot",
		ApprovalMode:    true,
		MaxBatchApprove: 25,
		XAPI: XAPI{
			APIBaseURL:        "https://api.x.com",
			UploadBaseURL:     "https://upload.x.com",
			LegacyUploadURL:   "https://upload.twitter.com",
			AuthorizeURL:      "https://x.com/i/oauth2/authorize",
			TokenURL:          "https://api.x.com/2/oauth2/token",
			CallbackAddr:      "127.0.0.1:8080",
			TimeoutSeconds:    30,
			MaxBodyBytes:      16 << 20,
			MaxAttempts:       3,
			MaxRateLimitWaitS: 60,
			MaxPostLength:     PostLengthAuto,
			Access:            AccessPayPerUse,
			OwnRepliesSummon:  true,
			IntentBaseURL:     "https://x.com",
			HandOffWindowH:    24,
			CrossAccountDupH:  24,
			HandOffCheckS:     300,
		},
		LLM: LLM{TimeoutSeconds: 60, MaxTokens: 1024, Temperature: 0.7},
		Scoring: Scoring{
			Threshold: 60, Keyword: 25, Follower: 15, Recency: 15,
			Engagement: 15, ReplyCount: 15, ContentType: 15,
		},
		Limits: Limits{
			MaxRepliesPerDay: 5, MaxTweetsPerDay: 6, MaxThreadsPerWeek: 1,
			MaxRepliesPerAuthorPerDay: 1, MaxDMsPerDay: 10, MaxReplySuggestionsPerDay: 5,
			BannedPhrases:         []string{"check out", "you should try", "I recommend", "link in bio"},
			ProductMentionRatio:   0.2,
			MinActionDelaySeconds: 45, MaxActionDelaySeconds: 180,
		},
		Storage: Storage{AuditRetentionDays: 90, RetentionDays: 90},
		MCP: MCP{
			Profile: "workflow", DynamicToolsets: "auto", HTTPMaxConnections: 128,
			SessionIdleTimeoutSeconds: 1800, MaxSessions: 128, MaxMessageBytes: 1 << 20,
		},
		MCPPolicy: MCPPolicy{
			EnforceForMutations: true,
			RequireApprovalFor: []string{
				"x_post_tweet", "x_reply_to_tweet", "x_quote_tweet",
				"x_post_thread", "x_follow_user", "x_like_tweet", "x_edit_tweet",
			},
			MaxMutationsPerHour: 20,
			MaxPendingApprovals: 500,
		},
		Gateway:   Gateway{MemoryWindowSeconds: 30, DBWindowSeconds: 300, ApprovalExpiryHours: 24},
		Media:     Media{MaxURLBytes: 64 << 20},
		Schedule:  Schedule{Timezone: "UTC", ActiveHoursStart: 8, ActiveHoursEnd: 22, ActiveDays: []string{"mon", "tue", "wed", "thu", "fri", "sat", "sun"}},
		Queue:     Queue{MinGapMinutes: 60, LateGraceMinutes: 15},
		Evergreen: Evergreen{MinIntervalDays: 30, MaxRecycles: 3, Mode: "repost"},
		Intervals: Intervals{
			MentionsSeconds: 300, DiscoverySeconds: 900, ContentSeconds: 10800,
			ThreadSeconds: 604800, TargetsSeconds: 1800, AnalyticsSeconds: 3600, JitterPercent: 20,
			PublisherSeconds: 60, HousekeepingSeconds: 900,
			EnabledLoops: []string{"discovery", "mentions", "content", "threads", "targets", "analytics", "publisher", "housekeeping"},
		},
		Targets:       Targets{MaxTargetRepliesPerDay: 3},
		Breaker:       Breaker{ErrorThreshold: 5, CooldownSeconds: 600},
		Sandbox:       Sandbox{Seed: 1, LLMStandIn: true, AllDay: true},
		Logging:       Logging{Level: "info"},
		Notify:        Notify{Events: DefaultNotifyEvents(), BatchWindowSeconds: 60, MaxPerHour: 30, ExpiringMinutes: 30},
		ApprovalLinks: ApprovalLinks{TTLMinutes: 60},
	}
}

// HomeDir returns $TUITBOT_HOME or ~/.tuitbot.
func HomeDir(getenv func(string) string) (string, error) {
	if h := getenv("TUITBOT_HOME"); h != "" {
		return h, nil
	}
	u, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("cannot find the home directory (set TUITBOT_HOME): %w", err)
	}
	return filepath.Join(u, ".tuitbot"), nil
}

// DatabaseTarget is what store.Open opens: the PostgreSQL URL when
// storage.database_url is set, else the SQLite file.
func (c *Config) DatabaseTarget() string {
	if u := strings.TrimSpace(c.Storage.DatabaseURL); u != "" {
		return u
	}
	return c.DBFile()
}

// DBFile is the effective database path.
func (c *Config) DBFile() string {
	if c.Storage.DBPath != "" {
		return expandHome(c.Storage.DBPath)
	}
	return filepath.Join(c.Home, "tuitbot.db")
}

// HomeIDFile is the file that names this home with a random id; the
// database records it, so a database copied in from another home is
// noticed.
func (c *Config) HomeIDFile() string { return filepath.Join(c.Home, "home.id") }

// TokenFile is where OAuth tokens live.
func (c *Config) TokenFile() string { return filepath.Join(c.Home, "tokens.json") }

// MediaURLPrivate are media.url_allow_private's networks; Validate refuses
// a malformed one, so none is dropped here silently after validation.
func (c *Config) MediaURLPrivate() []netip.Prefix {
	var out []netip.Prefix
	for _, s := range c.Media.URLAllowPrivate {
		if p, err := netip.ParsePrefix(strings.TrimSpace(s)); err == nil {
			out = append(out, p.Masked())
		}
	}
	return out
}

// MediaDirs are the directories x_upload_media may read.
func (c *Config) MediaDirs() []string {
	if len(c.Media.AllowedDirs) == 0 {
		return []string{filepath.Join(c.Home, "media")}
	}
	out := make([]string, len(c.Media.AllowedDirs))
	for i, d := range c.Media.AllowedDirs {
		out[i] = expandHome(d)
	}
	return out
}

// EffectiveApprovalMode is approval_mode, forced on in composer mode.
func (c *Config) EffectiveApprovalMode() bool {
	return c.ApprovalMode || c.Mode == "composer"
}

func expandHome(p string) string {
	if strings.HasPrefix(p, "~/") {
		if u, err := os.UserHomeDir(); err == nil {
			return filepath.Join(u, p[2:])
		}
	}
	return p
}

// FieldError is a validation failure naming the key.
type FieldError struct {
	Key     string
	Message string
}

// Error masks credentials in any URL the message quotes, so a rejected
// value never prints the key written into it.
func (e *FieldError) Error() string { return e.Key + ": " + redact.URLCredentials(e.Message) }

// Errors is a list of validation failures.
type Errors []*FieldError

func (es Errors) Error() string {
	parts := make([]string, len(es))
	for i, e := range es {
		parts[i] = e.Error()
	}
	return "invalid configuration:\n  " + strings.Join(parts, "\n  ")
}

// AsErrors extracts validation failures from err.
func AsErrors(err error) (Errors, bool) {
	var es Errors
	if errors.As(err, &es) {
		return es, true
	}
	return nil, false
}
