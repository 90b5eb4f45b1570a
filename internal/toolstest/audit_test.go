package toolstest

import (
	"encoding/json"
	"testing"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/xapi/xsim"
)

// TestAuditRowsUseSeedNames: get_recent_mutations rows carry the seed's
// result_summary (a string) and error_message (null without an error), and
// get_mutation_detail carries rollback_action.
func TestAuditRowsUseSeedNames(t *testing.T) {
	e := newEnv(t, envOptions{permissive: true})
	ok := e.call("x_post_tweet", map[string]any{"text": "Audit rows speak the seed's names."}).ok(t, nil)
	e.Sim.SetFault("POST /2/tweets", xsim.Fault{ClientNotEnrolled: true})
	failed := e.call("x_post_tweet", map[string]any{"text": "This one X refuses."}).fails(t, apperr.XForbidden)
	e.Sim.ClearFaults()

	var list struct {
		Mutations []map[string]any `json:"mutations"`
	}
	e.call("get_recent_mutations", map[string]any{}).ok(t, &list)
	rows := map[string]map[string]any{}
	for _, m := range list.Mutations {
		rows[m["correlation_id"].(string)] = m
	}
	for _, tc := range []struct {
		name, corr string
		wantError  bool
	}{
		{"success", ok.Meta.CorrelationID, false},
		{"failure", failed.Meta.CorrelationID, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			row, found := rows[tc.corr]
			if !found {
				t.Fatalf("row %s not listed in %v", tc.corr, list.Mutations)
			}
			for _, k := range []string{"correlation_id", "tool_name", "status", "params_summary", "result_summary", "error_message", "elapsed_ms", "created_at", "completed_at"} {
				if _, has := row[k]; !has {
					t.Fatalf("row has no %q: %v", k, row)
				}
			}
			if _, isString := row["result_summary"].(string); !isString {
				t.Fatalf("result_summary is %T, want a string: %v", row["result_summary"], row)
			}
			msg, isString := row["error_message"].(string)
			switch {
			case tc.wantError && (!isString || msg == ""):
				t.Fatalf("error_message %v, want the failure's message", row["error_message"])
			case !tc.wantError && row["error_message"] != nil:
				t.Fatalf("error_message %v, want null", row["error_message"])
			}
		})
	}

	var detail map[string]json.RawMessage
	e.call("get_mutation_detail", map[string]any{"correlation_id": ok.Meta.CorrelationID}).ok(t, &detail)
	var rb struct {
		Reversible bool   `json:"reversible"`
		UndoTool   string `json:"undo_tool"`
	}
	if err := json.Unmarshal(detail["rollback_action"], &rb); err != nil || !rb.Reversible || rb.UndoTool != "x_delete_tweet" {
		t.Fatalf("rollback_action %s, want reversible via x_delete_tweet", detail["rollback_action"])
	}
	for _, k := range []string{"params_hash", "account_id"} {
		if _, has := detail[k]; !has {
			t.Fatalf("detail has no %q", k)
		}
	}
}
