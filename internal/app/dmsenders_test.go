package app_test

import (
	"context"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/app"
	"github.com/tuitbot/tuitbot/internal/config"
	"github.com/tuitbot/tuitbot/internal/gateway"
	"github.com/tuitbot/tuitbot/internal/store/pgtest"
	"github.com/tuitbot/tuitbot/internal/store/storetest"
	"github.com/tuitbot/tuitbot/internal/xapi"
	"github.com/tuitbot/tuitbot/internal/xauth"
	"github.com/tuitbot/tuitbot/internal/xrules"
	"github.com/tuitbot/tuitbot/internal/xsim"
)

// TestDMSendersOutliveTheProcess: who sent the account a DM is known to
// every process of the home, not only the one that read it. One App
// reads the account's DM events with a universal GET of /2/dm_events;
// a second App on the same home and database (another process, a
// restart, another host on PostgreSQL) then sends a DM to the user who
// wrote without a person, and so does the next process after both
// stopped, while a DM to a user the account only wrote
// to itself, and to a user never seen, still goes to a person.
func TestDMSendersOutliveTheProcess(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		ctx := context.Background()
		sim := xsim.New(xsim.DefaultOptions())
		base, err := sim.Start(ctx, "127.0.0.1:0")
		if err != nil {
			t.Fatalf("start emulator: %v", err)
		}
		t.Cleanup(func() { _ = sim.Close() })
		cfg := testConfig(t, t.TempDir())
		cfg.XAPI.Access = config.AccessEnterprise
		cfg.XAPI.APIBaseURL, cfg.XAPI.UploadBaseURL, cfg.XAPI.LegacyUploadURL = base, base, base
		cfg.XAPI.ClientID = xsim.DefaultClientID
		cfg.XAPI.AuthorizeURL, cfg.XAPI.TokenURL = base+"/i/oauth2/authorize", base+"/2/oauth2/token"
		cfg.ApprovalMode = false
		cfg.MCPPolicy.RequireApprovalFor = []string{}
		cfg.MCPPolicy.Rules = []config.PolicyRule{{ID: "dms_ok", Priority: 200,
			Conditions: config.PolicyConditions{Tools: []string{"x_send_dm"}}, Action: config.PolicyAction{Type: "allow"}}}
		if storetest.BackendOf(t) == storetest.Postgres {
			cfg.Storage.DatabaseURL = pgtest.NewDatabase(t, "")
		}
		start := func() *app.App {
			t.Helper()
			a, err := app.New(ctx, cfg, app.Options{RequireDB: true})
			if err != nil {
				t.Fatalf("app.New: %v", err)
			}
			t.Cleanup(func() { a.Close() })
			return a
		}
		// As `tuitbot auth` does: the database first, then the token.
		first := start()
		access, refresh, ttl := sim.IssueToken(sim.DemoUserID(), sim.AllScopes())
		if err := xauth.SaveToken(ctx, cfg.TokenFile(), &xauth.Token{AccessToken: access, RefreshToken: refresh, TokenType: "bearer",
			ExpiresAt: time.Now().Add(ttl), Scopes: sim.AllScopes()}); err != nil {
			t.Fatal(err)
		}

		var takers []string
		for _, u := range sim.World().Users {
			if u.ID != sim.DemoUserID() && !u.DMsFromFollowedOnly && !u.Protected {
				takers = append(takers, u.ID)
			}
		}
		if len(takers) < 3 {
			t.Fatalf("the demo world has %d users who take messages, want 3", len(takers))
		}
		wrote, wroteTo, stranger := takers[0], takers[1], takers[2]
		if _, err := sim.DMAs(wrote, "Hi, a question about your tool"); err != nil {
			t.Fatal(err)
		}
		x, err := first.XClient()
		if err != nil {
			t.Fatal(err)
		}
		// The account's own message: its sender is the account.
		if _, _, err := x.SendDM(ctx, wroteTo, "Hello from the account", ""); err != nil {
			t.Fatalf("the account's own DM: %v", err)
		}
		// X names a message's sender only when asked (expansions=sender_id).
		res, err := x.Raw(ctx, xapi.RawRequest{Method: http.MethodGet, Path: "/2/dm_events",
			Query: url.Values{"expansions": {"sender_id"}}})
		if err != nil || res.Status != http.StatusOK {
			t.Fatalf("x_get /2/dm_events: %+v %v", res, err)
		}

		second := start()
		g, err := second.RequireGateway()
		if err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			name, to string
			want     gateway.Kind
		}{
			{"to the user who wrote first", wrote, gateway.Executed},
			{"to a user only the account wrote to", wroteTo, gateway.Routed},
			{"to a user never seen", stranger, gateway.Routed},
		} {
			resp, err := g.Do(ctx, gateway.Call{Tool: "x_send_dm", Caller: "mcp",
				Params: map[string]any{"participant_id": tc.to, "text": "A follow-up " + tc.name}})
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			if resp.Kind != tc.want {
				t.Fatalf("%s: %s (%+v), want %s", tc.name, resp.Kind, resp.Queued, tc.want)
			}
			if tc.want == gateway.Routed && resp.Queued.MatchedRuleID != xrules.RouteRulePrefix+xrules.RuleDMFirst {
				t.Fatalf("%s went to a person by %q, want %s", tc.name, resp.Queued.MatchedRuleID, xrules.RuleDMFirst)
			}
		}

		// Both stop; the next process to start still knows.
		for _, a := range []*app.App{first, second} {
			if err := a.Close(); err != nil {
				t.Fatal(err)
			}
		}
		g, err = start().RequireGateway()
		if err != nil {
			t.Fatal(err)
		}
		resp, err := g.Do(ctx, gateway.Call{Tool: "x_send_dm", Caller: "autopilot", Loop: "mentions",
			Params: map[string]any{"participant_id": wrote, "text": "After a restart"}})
		if err != nil || resp.Kind != gateway.Executed {
			t.Fatalf("a DM to the user who wrote first after a restart: %s %+v %v, want executed", resp.Kind, resp.Queued, err)
		}
	})
}
