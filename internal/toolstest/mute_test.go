package toolstest

import (
	"testing"

	"github.com/tuitbot/tuitbot/internal/actions"
)

// TestMuteAndUnmute: x_mute_user and x_unmute_user run through the gateway
// against the emulator, each with the other as its undo, refuse bad ids,
// and go to approval under the default policy like every mutation.
func TestMuteAndUnmute(t *testing.T) {
	e := newEnv(t, envOptions{permissive: true})
	demo := e.Sim.DemoUserID()
	u := e.otherUser()
	var ms actions.MuteState
	r := executed(t, e.call("x_mute_user", map[string]any{"target_user_id": u.ID}), &ms)
	if !ms.Muting || ms.TargetUserID != u.ID || !e.Sim.Related("muting", demo, u.ID) {
		t.Fatalf("mute data %+v; the emulator shows muting: %v", ms, e.Sim.Related("muting", demo, u.ID))
	}
	requireUndo(t, r.Meta.Rollback, "x_unmute_user", map[string]any{"target_user_id": u.ID})

	ru := executed(t, e.call("x_unmute_user", map[string]any{"target_user_id": u.ID}), &ms)
	if ms.Muting || e.Sim.Related("muting", demo, u.ID) {
		t.Fatalf("unmute data %+v; the emulator still shows muting: %v", ms, e.Sim.Related("muting", demo, u.ID))
	}
	requireUndo(t, ru.Meta.Rollback, "x_mute_user", map[string]any{"target_user_id": u.ID})

	for _, tool := range []string{"x_mute_user", "x_unmute_user"} {
		requireRejectsIDs(t, e, tool, "target_user_id", func(id string) map[string]any { return map[string]any{"target_user_id": id} })
	}

	gated := newEnv(t, envOptions{})
	var q routed
	gated.call("x_mute_user", map[string]any{"target_user_id": u.ID}).ok(t, &q)
	if !q.Routed || q.ApprovalID == 0 || gated.Sim.Related("muting", gated.Sim.DemoUserID(), u.ID) {
		t.Fatalf("with the default policy x_mute_user answered %+v, want it routed to approval and nothing sent", q)
	}
}
