package gateway

// Queued is the answer to a call routed to human approval.
type Queued struct {
	RoutedToApproval bool  `json:"routed_to_approval"`
	ApprovalQueueID  int64 `json:"approval_queue_id"`
	// Duplicate marks an identical call that was already waiting.
	Duplicate     bool   `json:"duplicate,omitempty"`
	Reason        string `json:"reason"`
	MatchedRuleID string `json:"matched_rule_id,omitempty"`
}

// DryRunPreview is the answer to a call that policy answered with a dry
// run: what would have been sent, and nothing was.
type DryRunPreview struct {
	DryRun        bool   `json:"dry_run"`
	WouldExecute  string `json:"would_execute"`
	Params        string `json:"params"`
	MatchedRuleID string `json:"matched_rule_id"`
}

// DuplicateOf is the answer to a repeat of a call that already succeeded:
// its first result, not a second effect.
type DuplicateOf struct {
	Duplicate             bool   `json:"duplicate"`
	OriginalCorrelationID string `json:"original_correlation_id"`
	CachedResult          any    `json:"cached_result"`
	Message               string `json:"message"`
}

// Answer is what the caller is told as data, whatever the kind of
// response: the action's result, or the routed, dry-run or duplicate
// answer.
func (r Response) Answer() any {
	switch {
	case r.Queued != nil:
		return r.Queued
	case r.Preview != nil:
		return r.Preview
	case r.Duplicate != nil:
		return r.Duplicate
	}
	return r.Result
}
