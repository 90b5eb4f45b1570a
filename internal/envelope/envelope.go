// Package envelope is the v1.0 response envelope every tool returns
// (seed 001): {success, data, error, meta}.
package envelope

import (
	"encoding/json"
	"fmt"
	"maps"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/redact"
	"github.com/tuitbot/tuitbot/internal/rollback"
)

// ToolVersion is the envelope schema version.
const ToolVersion = "1.0"

// Envelope is one tool result.
type Envelope struct {
	Success bool       `json:"success"`
	Data    any        `json:"data"`
	Error   *ErrorBody `json:"error,omitempty"`
	Meta    *Meta      `json:"meta,omitempty"`
}

// ErrorBody is the error object. Extra holds code-specific fields
// (retry_after_ms, rate_limit_reset, tweet_index, ...) flattened beside the
// fixed ones.
type ErrorBody struct {
	Code      apperr.Code
	Message   string
	Retryable bool
	Extra     map[string]any
}

// MarshalJSON flattens Extra next to code, message and retryable; the fixed
// fields always win.
func (e ErrorBody) MarshalJSON() ([]byte, error) {
	m := make(map[string]any, len(e.Extra)+3)
	maps.Copy(m, e.Extra)
	m["code"] = e.Code
	m["message"] = e.Message
	m["retryable"] = e.Retryable
	return json.Marshal(m)
}

// UnmarshalJSON is the inverse, so tests and clients can read envelopes. A
// fixed field of the wrong type is an error naming it rather than a silent
// zero value.
func (e *ErrorBody) UnmarshalJSON(b []byte) error {
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	if m == nil {
		return nil // null leaves the value alone, as encoding/json does
	}
	var out ErrorBody
	if v, ok := m["code"]; ok {
		s, isStr := v.(string)
		if !isStr {
			return fmt.Errorf("envelope error.code: want a string, got %T", v)
		}
		out.Code = apperr.Code(s)
	}
	if v, ok := m["message"]; ok {
		s, isStr := v.(string)
		if !isStr {
			return fmt.Errorf("envelope error.message: want a string, got %T", v)
		}
		out.Message = s
	}
	if v, ok := m["retryable"]; ok {
		r, isBool := v.(bool)
		if !isBool {
			return fmt.Errorf("envelope error.retryable: want a boolean, got %T", v)
		}
		out.Retryable = r
	}
	delete(m, "code")
	delete(m, "message")
	delete(m, "retryable")
	if len(m) > 0 {
		out.Extra = m
	}
	*e = out
	return nil
}

// Pagination describes list results.
type Pagination struct {
	NextToken   string `json:"next_token,omitempty"`
	ResultCount int    `json:"result_count"`
	HasMore     bool   `json:"has_more"`
}

// Rollback is advisory undo guidance for a mutation. It is the gateway's
// type under the envelope's name: the audit trail and the envelope carry
// the same JSON object.
type Rollback = rollback.Guidance

// Meta is execution metadata.
type Meta struct {
	ToolVersion  string `json:"tool_version"`
	ElapsedMS    int64  `json:"elapsed_ms"`
	Mode         string `json:"mode,omitempty"`
	ApprovalMode *bool  `json:"approval_mode,omitempty"`
	// ApprovalOverriddenBy names the rules that decide calls before
	// approval mode does (allow rules run calls without a human, dry-run
	// rules answer without queueing), so approval_mode: true is never read
	// as "everything waits for a human" when it does not.
	ApprovalOverriddenBy []string `json:"approval_overridden_by,omitempty"`
	// DryRunMutations is set when dry_run_mutations is on: no mutation
	// reaches X or the approval queue.
	DryRunMutations bool        `json:"dry_run_mutations,omitempty"`
	CorrelationID   string      `json:"correlation_id,omitempty"`
	Rollback        *Rollback   `json:"rollback,omitempty"`
	Pagination      *Pagination `json:"pagination,omitempty"`
	RetryCount      *int        `json:"retry_count,omitempty"`
	// Notes tell the caller about adjustments made to its input, such as a
	// clamped max_results.
	Notes []string `json:"notes,omitempty"`
	// AuditIncomplete says the mutation ran but its audit record could not
	// be completed yet (a full disk).
	AuditIncomplete bool `json:"audit_incomplete,omitempty"`
	// Warnings are conditions the caller must act on even though the call
	// itself went through.
	Warnings []string `json:"warnings,omitempty"`
}

// OK builds a success envelope.
func OK(data any, meta *Meta) Envelope {
	return Envelope{Success: true, Data: data, Meta: meta}
}

// Fail builds a failure envelope from err. Partial data attached to an
// *apperr.Error (a broken thread's posted ids) is kept. Credentials in any
// URL the message quotes (a transport error naming its endpoint) are masked:
// the message goes to the agent.
func Fail(err error, meta *Meta) Envelope {
	e := apperr.As(err)
	return Envelope{
		Success: false,
		Data:    e.Data,
		Error:   &ErrorBody{Code: e.Code, Message: redact.URLCredentials(e.Detail()), Retryable: e.Retryable(), Extra: e.Extra},
		Meta:    meta,
	}
}
