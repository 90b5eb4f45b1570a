package toolstest

import (
	"bytes"
	"encoding/json"
	"math"
	"net/http"
	"testing"

	"github.com/tuitbot/tuitbot/internal/actions"
	"github.com/tuitbot/tuitbot/internal/config"
	"github.com/tuitbot/tuitbot/internal/workflow"
	"github.com/tuitbot/tuitbot/internal/xsim"
)

// simCall makes one request to the sandbox emulator as the account a
// token stands for, arranging a scenario the way the account would on X.
func simCall(t *testing.T, e *env, token, method, path string, body any) map[string]any {
	t.Helper()
	raw, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequestWithContext(e.ctx, method, e.Sim.URL()+path, bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil || res.StatusCode >= 300 {
		t.Fatalf("%s %s: %d %v %v", method, path, res.StatusCode, out, err)
	}
	return out
}

// TestOwnedReadsViaXGet: on a pay-per-use account, x_get reaches each of
// the five owned reads no typed tool makes (blocking, muting, pinned,
// followed and member Lists), and both tuitbot's usage ledger and the
// emulator's bill every resource of the account's own at $0.001, while a
// List read of another user's keeps the ordinary List read price.
func TestOwnedReadsViaXGet(t *testing.T) {
	e := newEnv(t, envOptions{permissive: true, access: config.AccessPayPerUse})
	// The sandbox emulator models the access level the App is told of
	// only when started so; this one is told here.
	if err := e.Sim.SetAccess(xsim.AccessPayPerUse); err != nil {
		t.Fatal(err)
	}
	me := e.Sim.DemoUserID()
	brand := e.Sim.DemoAccounts()["brand_b"]
	myTok, _, _ := e.Sim.IssueToken(me, e.Sim.AllScopes())
	brandTok, _, _ := e.Sim.IssueToken(brand, e.Sim.AllScopes())
	newList := func(tok, name string) string {
		t.Helper()
		return simCall(t, e, tok, "POST", "/2/lists", map[string]any{"name": name})["data"].(map[string]any)["id"].(string)
	}
	// Two of each, none read twice (X bills a resource once a day): two
	// blocks (made on x.com) and two mutes; two Lists of the account's own
	// it pinned, two of the brand's it follows and two it is a member of.
	var users []string
	for range 4 {
		users = append(users, e.otherUser(users...).ID)
	}
	for _, u := range users[:2] {
		if err := e.Sim.Block(me, u); err != nil {
			t.Fatal(err)
		}
	}
	for _, u := range users[2:] {
		simCall(t, e, myTok, "POST", "/2/users/"+me+"/muting", map[string]any{"target_user_id": u})
	}
	for _, name := range []string{"mine one", "mine two"} {
		simCall(t, e, myTok, "POST", "/2/users/"+me+"/pinned_lists", map[string]any{"list_id": newList(myTok, name)})
	}
	for _, name := range []string{"followed one", "followed two"} {
		simCall(t, e, myTok, "POST", "/2/users/"+me+"/followed_lists", map[string]any{"list_id": newList(brandTok, name)})
	}
	for _, name := range []string{"with me one", "with me two"} {
		simCall(t, e, brandTok, "POST", "/2/lists/"+newList(brandTok, name)+"/members", map[string]any{"user_id": me})
	}
	// Someone else's Lists: the demo world's person who keeps a public one.
	var keeper string
	for _, l := range e.Sim.World().Lists {
		if !l.Private && l.OwnerID != me && l.OwnerID != brand {
			keeper = l.OwnerID
		}
	}
	// The account's id, which the ledger needs to know a read is its own.
	e.call("x_get_me", map[string]any{}).ok(t, nil)

	cases := []struct {
		path     string
		endpoint string
		n        int
		unit     float64 // the price per resource
		kind     string  // the emulator's billing kind
	}{
		{"/2/users/" + me + "/blocking", "GET /2/users/:id/blocking", 2, 0.001, xsim.BillOwnedRead},
		{"/2/users/" + me + "/muting", "GET /2/users/:id/muting", 2, 0.001, xsim.BillOwnedRead},
		{"/2/users/" + me + "/pinned_lists", "GET /2/users/:id/pinned_lists", 2, 0.001, xsim.BillOwnedRead},
		{"/2/users/" + me + "/followed_lists", "GET /2/users/:id/followed_lists", 2, 0.001, xsim.BillOwnedRead},
		{"/2/users/" + me + "/list_memberships", "GET /2/users/:id/list_memberships", 2, 0.001, xsim.BillOwnedRead},
		{"/2/users/" + keeper + "/owned_lists", "GET /2/users/:id/owned_lists", 1, 0.010, xsim.BillListRead},
	}
	for _, tc := range cases {
		t.Run(tc.endpoint, func(t *testing.T) {
			before := e.Sim.Billing()
			var raw actions.RawData
			e.call("x_get", map[string]any{"path": tc.path}).ok(t, &raw)
			var body struct {
				Data []json.RawMessage `json:"data"`
			}
			if raw.Status != http.StatusOK || json.Unmarshal(raw.JSON, &body) != nil || len(body.Data) != tc.n {
				t.Fatalf("x_get %s: %d %s, want 200 with %d resources", tc.path, raw.Status, raw.JSON, tc.n)
			}
			var u workflow.XUsage
			e.call("get_x_usage", map[string]any{"days": 1}).ok(t, &u)
			var row *workflow.UsageRow
			for i := range u.Rows {
				if u.Rows[i].Endpoint == tc.endpoint {
					row = &u.Rows[i]
				}
			}
			if row == nil || row.Calls != 1 || row.Items != tc.n || math.Abs(row.CostUSD-float64(tc.n)*tc.unit) > 1e-9 {
				t.Fatalf("ledger row %+v, want one call, %d items, $%.3f", row, tc.n, float64(tc.n)*tc.unit)
			}
			after := e.Sim.Billing()
			if got, want := after.Units[tc.kind]-before.Units[tc.kind], int64(tc.n); got != want {
				t.Errorf("emulator billed %d units of %s, want %d", got, tc.kind, want)
			}
			if got, want := after.Micros-before.Micros, int64(math.Round(float64(tc.n)*tc.unit*1e6)); got != want {
				t.Errorf("emulator billed %d micro-dollars, want %d, as the ledger did", got, want)
			}
		})
	}
}
