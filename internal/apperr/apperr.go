// Package apperr holds the product's error codes. Each code has one fixed
// retryable flag, so agents can decide whether to retry from the code alone.
package apperr

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// Code is a machine-readable error code carried in the envelope.
type Code string

// The codes. Keep this list and the table below in step; docs/errors.md is
// generated from the table.
const (
	XRateLimited        Code = "x_rate_limited"
	XAuthExpired        Code = "x_auth_expired"
	XForbidden          Code = "x_forbidden"
	XAccountRestricted  Code = "x_account_restricted"
	XDuplicateContent   Code = "x_duplicate_content"
	XNetworkError       Code = "x_network_error"
	XNotConfigured      Code = "x_not_configured"
	XAPIError           Code = "x_api_error"
	XOutcomeUnknown     Code = "x_outcome_unknown"
	XNotFound           Code = "x_not_found"
	XRequestBlocked     Code = "x_request_blocked"
	XFeatureUnavailable Code = "x_feature_unavailable"
	ReplyNotSummoned    Code = "reply_not_summoned"
	ReplyAlreadySent    Code = "reply_already_sent"
	UserOptedOut        Code = "user_opted_out"
	CrossAccountDup     Code = "cross_account_duplicate"
	DBError             Code = "db_error"
	ValidationError     Code = "validation_error"
	InvalidInput        Code = "invalid_input"
	TweetTooLong        Code = "tweet_too_long"
	EditWindowClosed    Code = "edit_window_closed"
	LLMError            Code = "llm_error"
	LLMNotConfigured    Code = "llm_not_configured"
	UnsupportedMedia    Code = "unsupported_media_type"
	FileReadError       Code = "file_read_error"
	MediaUploadError    Code = "media_upload_error"
	MediaPathBlocked    Code = "media_path_blocked"
	MediaURLBlocked     Code = "media_url_blocked"
	MediaTooLarge       Code = "media_too_large"
	MediaDownloadError  Code = "media_download_error"
	ThreadPartial       Code = "thread_partial_failure"
	PolicyError         Code = "policy_error"
	PolicyBlocked       Code = "policy_denied_blocked"
	PolicyRateLimited   Code = "policy_denied_rate_limited"
	PolicyHardRule      Code = "policy_denied_hard_rule"
	PolicyUserRule      Code = "policy_denied_user_rule"
	PolicyBudget        Code = "policy_denied_budget"
	IdempotencyConflict Code = "idempotency_key_conflict"
	MutationInFlight    Code = "mutation_in_flight"
	OutcomeUnverified   Code = "previous_outcome_unknown"
	ApprovalNotPending  Code = "approval_not_pending"
	ApprovalQueueFull   Code = "approval_queue_full"
	ApprovalChanged     Code = "approval_changed"
	ContextError        Code = "context_error"
	TopicError          Code = "topic_error"
	NotFound            Code = "not_found"
	ConfigError         Code = "config_error"
	QueueNotConfigured  Code = "queue_not_configured"
	QueueFull           Code = "queue_full"
	DuplicateRisk       Code = "duplicate_content_risk"
	ExportWriteError    Code = "export_write_error"
	InsufficientData    Code = "insufficient_data"
	SerializationError  Code = "serialization_error"
	InternalError       Code = "internal_error"
)

// Info describes one code.
type Info struct {
	Code      Code
	Retryable bool
	Meaning   string
}

var table = map[Code]Info{
	XRateLimited:        {XRateLimited, true, "X answered 429; retry after retry_after_ms."},
	XAuthExpired:        {XAuthExpired, false, "The X token is expired or was revoked; run `tuitbot auth`."},
	XForbidden:          {XForbidden, false, "X answered 403 (tier, scope or permission)."},
	XAccountRestricted:  {XAccountRestricted, false, "X says the account is suspended or locked."},
	XDuplicateContent:   {XDuplicateContent, false, "X refused the post as a duplicate of a recent post."},
	XNetworkError:       {XNetworkError, true, "The request did not reach X or the answer was cut off."},
	XNotConfigured:      {XNotConfigured, false, "No X credentials; run `tuitbot auth` or use --sandbox."},
	XAPIError:           {XAPIError, false, "X answered with another error status."},
	XOutcomeUnknown:     {XOutcomeUnknown, false, "A create request may or may not have been applied by X; verify before acting again."},
	XNotFound:           {XNotFound, false, "X answered 404: the resource does not exist or is not visible."},
	XRequestBlocked:     {XRequestBlocked, false, "A universal request failed host, path, header or query validation."},
	XFeatureUnavailable: {XFeatureUnavailable, false, "The feature (a like, follow or quote post, or their undo) is not open to the account's API access level: refused before X was called (x_api.access = \"pay_per_use\"), or X answered 403 for it. Nothing was sent or billed; retrying does not help. The hint links to x.com, where a person can do it by hand."},
	ReplyAlreadySent:    {ReplyAlreadySent, false, "The account already replied to that post by the API: X's automation rules allow one automated reply per user interaction. Refused before X was called, nothing sent or billed; no setting overrides it. A person can reply again on x.com by hand."},
	UserOptedOut:        {UserOptedOut, false, "The user told the account to stop (an opt-out phrase such as \"stop\" or \"unsubscribe\" in a mention, reply or DM) and is on its suppression list: X's guidelines say \"If a user says 'stop,' stop\", so no automated reply, @mention or DM reaches them. Refused before X was called, nothing sent or billed. A person can lift it with `tuitbot optouts clear USER`."},
	CrossAccountDup:     {CrossAccountDup, false, "Another of the home's accounts posted the same or nearly the same text within x_api.cross_account_duplicate_hours: X's automation rules forbid identical or substantially similar posts across the accounts one operates. Refused before X was called, nothing sent or billed; no setting turns it off. Write this account its own text, or repost the other account's post (x_retweet)."},
	ReplyNotSummoned:    {ReplyNotSummoned, false, "The post replied to did not summon the account (it neither @mentions the account nor quotes one of its posts), and X lets a pay-per-use app reply only when summoned: refused before X was called, nothing sent or billed. The hint links to x.com, where a person can reply by hand."},
	DBError:             {DBError, true, "The local database failed."},
	ValidationError:     {ValidationError, false, "The request is not valid in the current state."},
	InvalidInput:        {InvalidInput, false, "A parameter is malformed; the message names it."},
	TweetTooLong:        {TweetTooLong, false, "The text exceeds the account's post limit in weighted characters: 280, or 25,000 for an account with an X subscription (x_api.max_post_length); limit_reason says which applies. Split the text into a thread with x_post_thread."},
	EditWindowClosed:    {EditWindowClosed, false, "X takes no edit of this post now: it is not the account's own, not its latest version, has a poll (or is otherwise not edit eligible), has no edits left (5 at most), or its 30-minute window ends within a minute; the message says which and names the field. Nothing was sent: post anew or reply with the correction."},
	LLMError:            {LLMError, true, "The LLM provider failed."},
	LLMNotConfigured:    {LLMNotConfigured, false, "No LLM provider is configured."},
	UnsupportedMedia:    {UnsupportedMedia, false, "The file type is not jpg, png, webp, gif or mp4, or the declared type disagrees with the bytes."},
	FileReadError:       {FileReadError, false, "The media file cannot be read."},
	MediaUploadError:    {MediaUploadError, false, "The media upload failed or the file is too large."},
	MediaPathBlocked:    {MediaPathBlocked, false, "The file is outside the configured media directories."},
	MediaURLBlocked:     {MediaURLBlocked, false, "The media URL, or an address or redirect it leads to, is not allowed (scheme, credentials, port, host, or a loopback, private, link-local or other non-public address); reason names which."},
	MediaTooLarge:       {MediaTooLarge, false, "The download is larger than the limit for its type (image 5 MB, GIF 15 MB, video media.max_url_bytes)."},
	MediaDownloadError:  {MediaDownloadError, false, "The media URL could not be downloaded (connection, timeout or an error status); the message says which."},
	ThreadPartial:       {ThreadPartial, false, "A thread broke partway; the posted ids are in data."},
	PolicyError:         {PolicyError, true, "The policy gateway could not evaluate the call."},
	PolicyBlocked:       {PolicyBlocked, false, "The tool is in blocked_tools."},
	PolicyRateLimited:   {PolicyRateLimited, false, "A mutation limit is exhausted; see rate_limit_reset."},
	PolicyHardRule:      {PolicyHardRule, false, "A built-in hard rule denied the call."},
	PolicyUserRule:      {PolicyUserRule, false, "A template or user rule denied the call."},
	PolicyBudget:        {PolicyBudget, false, "The X spend budget for the window is exhausted."},
	IdempotencyConflict: {IdempotencyConflict, false, "The idempotency_key was used before with different parameters."},
	MutationInFlight:    {MutationInFlight, false, "An identical mutation is still pending; wait for it."},
	OutcomeUnverified:   {OutcomeUnverified, false, "An identical earlier attempt has an unknown outcome; verify it (for example read the timeline) before retrying."},
	ApprovalNotPending:  {ApprovalNotPending, false, "The approval item is not pending (already decided or expired)."},
	ApprovalQueueFull:   {ApprovalQueueFull, false, "The approval queue holds mcp_policy.max_pending_approvals items; a human must review some before more can be queued."},
	ApprovalChanged:     {ApprovalChanged, false, "The approval item was edited after the reviewer was shown it; nothing was decided. Review the item as it is now."},
	ContextError:        {ContextError, false, "Author context could not be assembled."},
	TopicError:          {TopicError, false, "Topic suggestions could not be produced."},
	NotFound:            {NotFound, false, "The requested local record does not exist."},
	ConfigError:         {ConfigError, false, "The configuration is invalid; the message names the key."},
	QueueNotConfigured:  {QueueNotConfigured, false, "The account has no posting queue: [queue] slots is empty."},
	QueueFull:           {QueueFull, false, "No queue slot is free within the search horizon (every slot is taken, too close to a scheduled post, or on a full day)."},
	DuplicateRisk:       {DuplicateRisk, false, "A recurring rule would post the same text again within X's duplicate window, which X refuses; give vary.variants (texts used in rotation) or post less often."},
	ExportWriteError:    {ExportWriteError, false, "The export file could not be written (disk full, no permission); nothing partial is left behind."},
	InsufficientData:    {InsufficientData, false, "Too few measured posts to answer; the error carries the count (posts) and what is needed (min_posts). Post more, or refresh the metrics."},
	SerializationError:  {SerializationError, false, "The result could not be encoded."},
	InternalError:       {InternalError, false, "An unexpected internal failure."},
}

// Lookup returns the table entry for c. Unknown codes are reported as
// internal errors so that a typo can never look retryable.
func Lookup(c Code) Info {
	if i, ok := table[c]; ok {
		return i
	}
	return Info{Code: c, Retryable: false, Meaning: "unknown code"}
}

// All returns every code sorted by name.
func All() []Info {
	out := make([]Info, 0, len(table))
	for _, i := range table {
		out = append(out, i)
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Code < out[b].Code })
	return out
}

// Error is an error with a code. Extra carries code-specific fields that are
// copied into the envelope's error object (retry_after_ms, rate_limit_reset,
// tweet_index, ...).
type Error struct {
	Code    Code
	Message string
	Extra   map[string]any
	// Data is partial data to return alongside the error (for example the
	// ids a broken thread did post).
	Data any
	Err  error
	// Hints are the ways out, kept apart from Message so that a caller
	// that knows how it was invoked (the CLI) can leave out those that do
	// not apply there.
	Hints []Hint
}

// Hint is one thing the reader of an error can do about it.
type Hint struct {
	// Do says what to do: "run `tuitbot auth` to sign in".
	Do string
	// Unless names a command-line flag ("--sandbox") that makes the hint
	// moot: it asks for that flag, or does not apply with it. A command
	// that was given the flag leaves the hint out.
	Unless string
}

// SignIn is the way out of x_not_configured: sign in to X, or try the
// emulator instead. Neither applies to a command that already runs against
// the emulator.
func SignIn() []Hint {
	return []Hint{
		{Do: "run `tuitbot auth` to sign in", Unless: "--sandbox"},
		{Do: "use --sandbox to work against the built-in emulator", Unless: "--sandbox"},
	}
}

// Applicable returns the hints that still apply when given reports which
// flags the caller was given.
func Applicable(hints []Hint, given func(flag string) bool) []Hint {
	var out []Hint
	for _, h := range hints {
		if h.Unless != "" && given(h.Unless) {
			continue
		}
		out = append(out, h)
	}
	return out
}

// JoinHints reads hints as one clause: "run `tuitbot auth` to sign in, or
// use --sandbox ...". Repeats are dropped.
func JoinHints(hints []Hint) string {
	var parts []string
	seen := map[string]bool{}
	for _, h := range hints {
		if h.Do == "" || seen[h.Do] {
			continue
		}
		seen[h.Do] = true
		parts = append(parts, h.Do)
	}
	return strings.Join(parts, ", or ")
}

// WithHints returns e with hints added.
func (e *Error) WithHints(hints ...Hint) *Error {
	e.Hints = append(e.Hints, hints...)
	return e
}

// Error is the code, the message, the cause and then every hint, so that a
// log line or an agent reading only the text still learns the way out.
func (e *Error) Error() string {
	s := e.Unhinted()
	if h := JoinHints(e.Hints); h != "" {
		s += "; " + h
	}
	return s
}

// Unhinted is Error without this error's own hints, for a caller that shows
// the hints apart.
func (e *Error) Unhinted() string {
	if e.Err != nil {
		return fmt.Sprintf("%s: %s: %v", e.Code, e.Message, e.Err)
	}
	return fmt.Sprintf("%s: %s", e.Code, e.Message)
}

// Detail is Message followed by every hint: what a reader that sees only
// the message (an MCP envelope) needs.
func (e *Error) Detail() string {
	if h := JoinHints(e.Hints); h != "" {
		return e.Message + "; " + h
	}
	return e.Message
}

func (e *Error) Unwrap() error { return e.Err }

// Retryable reports the fixed flag for the error's code.
func (e *Error) Retryable() bool { return Lookup(e.Code).Retryable }

// With returns e with an extra field set.
func (e *Error) With(key string, v any) *Error {
	if e.Extra == nil {
		e.Extra = map[string]any{}
	}
	e.Extra[key] = v
	return e
}

// New builds an Error.
func New(c Code, format string, args ...any) *Error {
	return &Error{Code: c, Message: fmt.Sprintf(format, args...)}
}

// Wrap builds an Error around a cause. The cause is kept for logs and
// errors.Is; only Message is shown to callers.
func Wrap(c Code, err error, format string, args ...any) *Error {
	return &Error{Code: c, Message: fmt.Sprintf(format, args...), Err: err}
}

// As extracts an *Error from err, or wraps err as internal_error.
func As(err error) *Error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Code: InternalError, Message: err.Error(), Err: err}
}

// CodeOf returns the code of err, or "" when err is nil.
func CodeOf(err error) Code {
	if err == nil {
		return ""
	}
	return As(err).Code
}
