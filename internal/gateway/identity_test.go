package gateway

import (
	"testing"

	"github.com/tuitbot/tuitbot/internal/store/storetest"
)

// An approved call's audit row names who asked for it (the queued call's
// caller and loop) and who decided it; a call no person decided names no
// decider. Read back through Recent (full and brief rows) and Detail.
func TestAuditNamesWhoAskedAndWhoDecided(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		for _, tt := range []struct {
			caller, loop, reviewer string
		}{
			{"mcp", "", "link:phone"},
			{"autopilot", "content", "telegram:42"},
			{"cli", "", "web"},
		} {
			t.Run(tt.caller, func(t *testing.T) {
				e := newEnv(t)
				e.pol.set(approvalThenAllow)
				r, err := e.g.Do(e.ctx, Call{Tool: fakeTool, Params: map[string]string{"text": "asked by " + tt.caller}, Caller: tt.caller, Loop: tt.loop})
				if err != nil || r.ApprovalID == 0 {
					t.Fatalf("queue: %+v %v", r, err)
				}
				_, resp, err := e.g.Approve(e.ctx, r.ApprovalID, tt.reviewer, "")
				if err != nil {
					t.Fatal(err)
				}
				d, err := e.g.Detail(e.ctx, resp.CorrelationID)
				if err != nil {
					t.Fatal(err)
				}
				if d.Caller != tt.caller || d.Loop != tt.loop || d.DecidedBy != tt.reviewer || d.ApprovalID != r.ApprovalID {
					t.Errorf("detail: asked by %q (loop %q), decided by %q; want %q (%q), %q", d.Caller, d.Loop, d.DecidedBy, tt.caller, tt.loop, tt.reviewer)
				}
				for _, brief := range []bool{false, true} {
					rows, err := e.g.Recent(e.ctx, AuditFilter{Brief: brief, Caller: tt.caller})
					if err != nil || len(rows) != 1 || rows[0].DecidedBy != tt.reviewer || rows[0].Caller != tt.caller {
						t.Errorf("recent (brief %t) by caller %q: %+v %v", brief, tt.caller, rows, err)
					}
				}
			})
		}
		e := newEnv(t)
		r := e.mustDo(map[string]string{"text": "allowed"}, "")
		if d, err := e.g.Detail(e.ctx, r.CorrelationID); err != nil || d.DecidedBy != "" || d.Caller != "mcp" {
			t.Fatalf("a call no person decided: %+v %v", d, err)
		}
	})
}
