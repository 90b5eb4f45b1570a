package envelope_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/envelope"
)

func ptr[T any](v T) *T { return &v }

// decode marshals v and reads it back as a generic JSON object, so tests
// assert the wire shape rather than Go values.
func decode(t *testing.T, v any) map[string]any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("unmarshal %s: %v", b, err)
	}
	return m
}

func keys(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func TestOKShape(t *testing.T) {
	tests := []struct {
		name     string
		env      envelope.Envelope
		wantKeys []string
		check    func(t *testing.T, m map[string]any)
	}{
		{
			name:     "data and full meta",
			env:      envelope.OK(map[string]any{"tier": "Basic"}, &envelope.Meta{ToolVersion: envelope.ToolVersion, ElapsedMS: 12, Mode: "autopilot", ApprovalMode: ptr(false), CorrelationID: "c-1", RetryCount: ptr(0), Pagination: &envelope.Pagination{ResultCount: 3, HasMore: true, NextToken: "n"}, Rollback: &envelope.Rollback{Reversible: true, UndoTool: "x_unlike_tweet", UndoParams: map[string]any{"tweet_id": "1"}}, Notes: []string{"clamped"}}),
			wantKeys: []string{"data", "meta", "success"},
			check: func(t *testing.T, m map[string]any) {
				meta := m["meta"].(map[string]any)
				want := map[string]any{
					"tool_version": "1.0", "elapsed_ms": 12.0, "mode": "autopilot", "approval_mode": false,
					"correlation_id": "c-1", "retry_count": 0.0, "notes": []any{"clamped"},
					"pagination": map[string]any{"next_token": "n", "result_count": 3.0, "has_more": true},
					"rollback":   map[string]any{"reversible": true, "undo_tool": "x_unlike_tweet", "undo_params": map[string]any{"tweet_id": "1"}},
				}
				if !reflect.DeepEqual(meta, want) {
					t.Errorf("meta = %v\nwant %v", meta, want)
				}
				if d := m["data"].(map[string]any); d["tier"] != "Basic" {
					t.Errorf("data = %v", d)
				}
			},
		},
		{
			name:     "nil data and nil meta",
			env:      envelope.OK(nil, nil),
			wantKeys: []string{"data", "success"},
			check: func(t *testing.T, m map[string]any) {
				if v, ok := m["data"]; !ok || v != nil {
					t.Errorf("data = %v (present %t), want explicit null", v, ok)
				}
			},
		},
		{
			name:     "minimal meta omits optional fields but keeps version and elapsed",
			env:      envelope.OK([]int{1}, &envelope.Meta{ToolVersion: envelope.ToolVersion}),
			wantKeys: []string{"data", "meta", "success"},
			check: func(t *testing.T, m map[string]any) {
				meta := m["meta"].(map[string]any)
				if got := keys(meta); !reflect.DeepEqual(got, []string{"elapsed_ms", "tool_version"}) {
					t.Errorf("meta keys = %v, want only elapsed_ms and tool_version", got)
				}
			},
		},
		{
			name:     "approval_mode true and zero retry_count are kept",
			env:      envelope.OK(true, &envelope.Meta{ToolVersion: "1.0", ApprovalMode: ptr(true), RetryCount: ptr(0)}),
			wantKeys: []string{"data", "meta", "success"},
			check: func(t *testing.T, m map[string]any) {
				meta := m["meta"].(map[string]any)
				if meta["approval_mode"] != true || meta["retry_count"] != 0.0 {
					t.Errorf("meta = %v", meta)
				}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := decode(t, tc.env)
			if got := keys(m); !reflect.DeepEqual(got, tc.wantKeys) {
				t.Errorf("top-level keys = %v, want %v", got, tc.wantKeys)
			}
			if m["success"] != true {
				t.Errorf("success = %v", m["success"])
			}
			if _, ok := m["error"]; ok {
				t.Error("a success envelope carries an error key")
			}
			tc.check(t, m)
		})
	}
}

func TestFailShape(t *testing.T) {
	meta := &envelope.Meta{ToolVersion: "1.0", ElapsedMS: 3}
	tests := []struct {
		name      string
		err       error
		wantError map[string]any
		wantData  any
	}{
		{
			name:      "coded error with extras",
			err:       apperr.New(apperr.XRateLimited, "slow down").With("retry_after_ms", 1500).With("rate_limit_reset", "2026-01-01T00:00:00Z"),
			wantError: map[string]any{"code": "x_rate_limited", "message": "slow down", "retryable": true, "retry_after_ms": 1500.0, "rate_limit_reset": "2026-01-01T00:00:00Z"},
		},
		{
			name:      "plain error becomes internal_error",
			err:       errors.New("kaput"),
			wantError: map[string]any{"code": "internal_error", "message": "kaput", "retryable": false},
		},
		{
			name:      "wrapped coded error keeps its code",
			err:       fmt.Errorf("context: %w", apperr.New(apperr.DBError, "disk full")),
			wantError: map[string]any{"code": "db_error", "message": "disk full", "retryable": true},
		},
		{
			name:      "cause is not shown",
			err:       apperr.Wrap(apperr.InvalidInput, errors.New("secret internal detail"), "field %q is bad", "text"),
			wantError: map[string]any{"code": "invalid_input", "message": `field "text" is bad`, "retryable": false},
		},
		{
			name: "extras cannot override fixed fields",
			err: &apperr.Error{Code: apperr.TweetTooLong, Message: "too long",
				Extra: map[string]any{"code": "spoofed", "message": "spoofed", "retryable": true, "tweet_index": 2}},
			wantError: map[string]any{"code": "tweet_too_long", "message": "too long", "retryable": false, "tweet_index": 2.0},
		},
		{
			name:      "partial data is kept",
			err:       &apperr.Error{Code: apperr.ThreadPartial, Message: "broke at 2", Data: map[string]any{"posted_ids": []string{"1", "2"}}},
			wantError: map[string]any{"code": "thread_partial_failure", "message": "broke at 2", "retryable": false},
			wantData:  map[string]any{"posted_ids": []any{"1", "2"}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := envelope.Fail(tc.err, meta)
			if env.Success {
				t.Fatal("Fail built a success envelope")
			}
			m := decode(t, env)
			if got := keys(m); !reflect.DeepEqual(got, []string{"data", "error", "meta", "success"}) {
				t.Errorf("keys = %v", got)
			}
			if m["success"] != false {
				t.Errorf("success = %v", m["success"])
			}
			if !reflect.DeepEqual(m["error"], tc.wantError) {
				t.Errorf("error = %v\nwant %v", m["error"], tc.wantError)
			}
			if !reflect.DeepEqual(m["data"], tc.wantData) {
				t.Errorf("data = %v, want %v", m["data"], tc.wantData)
			}
			if mm := m["meta"].(map[string]any); mm["tool_version"] != "1.0" || mm["elapsed_ms"] != 3.0 {
				t.Errorf("meta = %v", mm)
			}
		})
	}
}

func TestFailRetryableComesFromTable(t *testing.T) {
	for _, info := range apperr.All() {
		env := envelope.Fail(apperr.New(info.Code, "m"), nil)
		if env.Error.Retryable != info.Retryable {
			t.Errorf("%s: retryable %t, table says %t", info.Code, env.Error.Retryable, info.Retryable)
		}
		m := decode(t, env)
		if got := m["error"].(map[string]any)["retryable"]; got != info.Retryable {
			t.Errorf("%s: wire retryable %v, table says %t", info.Code, got, info.Retryable)
		}
		if _, ok := m["meta"]; ok {
			t.Errorf("%s: nil meta serialised", info.Code)
		}
	}
	// A code missing from the table must never look retryable.
	if envelope.Fail(apperr.New("no_such_code", "m"), nil).Error.Retryable {
		t.Error("an unknown code is reported retryable")
	}
}

func TestRoundTrip(t *testing.T) {
	envs := []envelope.Envelope{
		envelope.OK(map[string]any{"a": 1.0, "b": []any{"x"}}, &envelope.Meta{ToolVersion: "1.0", ElapsedMS: 7, Mode: "composer", ApprovalMode: ptr(true), CorrelationID: "id", RetryCount: ptr(2)}),
		envelope.OK(nil, nil),
		envelope.Fail(apperr.New(apperr.PolicyRateLimited, "limit").With("rate_limit_reset", "soon").With("n", 3), &envelope.Meta{ToolVersion: "1.0"}),
		envelope.Fail(apperr.New(apperr.NotFound, "none"), nil),
	}
	for i, env := range envs {
		b1, err := json.Marshal(env)
		if err != nil {
			t.Fatal(err)
		}
		var back envelope.Envelope
		if err := json.Unmarshal(b1, &back); err != nil {
			t.Fatalf("%d: unmarshal: %v", i, err)
		}
		b2, err := json.Marshal(back)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(b1, b2) {
			t.Errorf("%d: round trip changed the JSON:\n%s\n%s", i, b1, b2)
		}
		if back.Success != env.Success {
			t.Errorf("%d: success %t, want %t", i, back.Success, env.Success)
		}
		if env.Error != nil {
			if back.Error == nil || back.Error.Code != env.Error.Code || back.Error.Message != env.Error.Message || back.Error.Retryable != env.Error.Retryable {
				t.Errorf("%d: error %+v, want %+v", i, back.Error, env.Error)
			}
			if len(env.Error.Extra) == 0 && back.Error.Extra != nil {
				t.Errorf("%d: Extra = %v, want nil when there are no extras", i, back.Error.Extra)
			}
		}
	}
}

func TestErrorBodyUnmarshalRejectsWrongTypes(t *testing.T) {
	tests := []struct {
		in, field string
	}{
		{`{"code": 5, "message": "m", "retryable": false}`, "code"},
		{`{"code": "c", "message": ["m"], "retryable": false}`, "message"},
		{`{"code": "c", "message": "m", "retryable": "yes"}`, "retryable"},
	}
	for _, tc := range tests {
		var e envelope.ErrorBody
		err := json.Unmarshal([]byte(tc.in), &e)
		if err == nil {
			t.Errorf("%s: accepted", tc.in)
			continue
		}
		if !strings.Contains(err.Error(), tc.field) {
			t.Errorf("%s: error %q does not name %s", tc.in, err, tc.field)
		}
	}
	for _, bad := range []string{`[1]`, `"x"`, `{`} {
		var e envelope.ErrorBody
		if err := json.Unmarshal([]byte(bad), &e); err == nil {
			t.Errorf("%s: accepted", bad)
		}
	}
	var env envelope.Envelope
	if err := json.Unmarshal([]byte(`{"success": false, "data": null, "error": null}`), &env); err != nil || env.Error != nil {
		t.Errorf("null error: %v, %+v", err, env.Error)
	}
}

func TestFailMasksURLCredentials(t *testing.T) {
	tests := []struct {
		name string
		err  error
	}{
		{"plain error", fmt.Errorf(`Post "http://user:s3cr3t@127.0.0.1:9/v1/chat/completions": connection refused`)},
		{"app error", apperr.New(apperr.LLMError, "proxy https://p:s3cr3t@proxy.example:3128 refused the request")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := envelope.Fail(tc.err, nil)
			if strings.Contains(env.Error.Message, "s3cr3t") {
				t.Errorf("error message shows URL credentials: %s", env.Error.Message)
			}
			if !strings.Contains(env.Error.Message, "******@") {
				t.Errorf("error message lost the masked URL: %s", env.Error.Message)
			}
		})
	}
}
