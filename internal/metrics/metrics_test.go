package metrics_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/metrics"
)

func TestEndpointFamily(t *testing.T) {
	tests := []struct{ endpoint, want string }{
		{"POST /2/tweets", "tweets"},
		{"DELETE /2/tweets/:id", "tweets"},
		{"GET /2/users/:id/mentions", "users"},
		{"POST /1.1/media/upload.json", "media"},
		{"POST /2/media/upload", "media"},
		{"GET /2/tweets/search/recent?query=x", "tweets"},
		{"GET /", "other"},
		{"", "other"},
	}
	for _, tc := range tests {
		if got := metrics.EndpointFamily(tc.endpoint); got != tc.want {
			t.Errorf("EndpointFamily(%q) = %q, want %q", tc.endpoint, got, tc.want)
		}
	}
}

func exposition(t *testing.T, m *metrics.Metrics) string {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != 200 {
		t.Fatalf("scrape: %d", rec.Code)
	}
	return rec.Body.String()
}

func TestToolOutcomesAndScrapeTimeSources(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	m := metrics.New(metrics.Sources{
		Now: func() time.Time { return now },
		Approvals: func(context.Context) (metrics.Approvals, error) {
			return metrics.Approvals{Pending: 2, Oldest: now.Add(-90 * time.Second)}, nil
		},
		RateLimits: func() []metrics.RateLimit { return []metrics.RateLimit{{Endpoint: "POST /2/tweets", Remaining: 7}} },
		Loops: func(context.Context) ([]metrics.Loop, error) {
			return []metrics.Loop{{Name: "mentions", Runs: 4, Errors: 3, Breaker: "open"}}, nil
		},
	})
	m.ObserveTool("x_post_tweet", "", time.Millisecond)
	m.ObserveTool("x_post_tweet", "x_outcome_unknown", time.Millisecond)
	m.ObserveTool("x_post_tweet", "policy_denied_blocked", time.Millisecond)
	m.ObserveLLMCost(0.25)
	m.ObserveXRequest("POST /2/tweets", 201, 0.01)
	m.ObserveXRequest("GET /2/users/me", 0, 0)
	out := exposition(t, m)
	for _, want := range []string{
		`tuitbot_tool_calls_total{outcome="success",tool="x_post_tweet"} 1`,
		`tuitbot_tool_calls_total{outcome="unknown",tool="x_post_tweet"} 1`,
		`tuitbot_tool_calls_total{outcome="error",tool="x_post_tweet"} 1`,
		`mcp_server_operation_duration_seconds_count{error_type="policy_denied_blocked",gen_ai_tool_name="x_post_tweet",mcp_method_name="tools/call"} 1`,
		`tuitbot_gateway_decisions_total{outcome="routed"} 0`,
		`tuitbot_approvals_pending 2`,
		`tuitbot_approvals_oldest_age_seconds 90`,
		`tuitbot_x_rate_limit_remaining{endpoint="POST /2/tweets"} 7`,
		`tuitbot_x_requests_total{endpoint_family="tweets",status="201"} 1`,
		`tuitbot_x_requests_total{endpoint_family="users",status="0"} 1`,
		`tuitbot_x_spend_usd_total 0.01`,
		`tuitbot_llm_spend_usd_total 0.25`,
		`tuitbot_autopilot_loop_runs_total{loop="mentions"} 4`,
		`tuitbot_autopilot_loop_errors_total{loop="mentions"} 3`,
		`tuitbot_autopilot_breaker_state{loop="mentions",state="open"} 1`,
		`tuitbot_autopilot_breaker_state{loop="mentions",state="closed"} 0`,
	} {
		if !strings.Contains(out, want+"\n") {
			t.Errorf("exposition lacks %q", want)
		}
	}
}

// A source that fails leaves its series out of that scrape; the scrape
// itself still succeeds.
func TestFailingSourceIsSkipped(t *testing.T) {
	m := metrics.New(metrics.Sources{
		Approvals: func(context.Context) (metrics.Approvals, error) { return metrics.Approvals{}, errors.New("db gone") },
	})
	out := exposition(t, m)
	if strings.Contains(out, "tuitbot_approvals_pending ") {
		t.Errorf("a failed source still produced a value:\n%s", out)
	}
	if !strings.Contains(out, "tuitbot_gateway_decisions_total") {
		t.Error("the scrape lost the other metrics")
	}
}

// Two Metrics values never share state: each server scrapes only its own.
func TestRegistriesAreIndependent(t *testing.T) {
	a, b := metrics.New(metrics.Sources{}), metrics.New(metrics.Sources{})
	a.ObserveDecision(metrics.DecisionDenied)
	if !strings.Contains(exposition(t, a), `tuitbot_gateway_decisions_total{outcome="denied"} 1`) {
		t.Error("a lost its decision")
	}
	if !strings.Contains(exposition(t, b), `tuitbot_gateway_decisions_total{outcome="denied"} 0`) {
		t.Error("b saw a's decision")
	}
}

// The exposition is what a Prometheus server parses: HELP and TYPE once
// per family, histogram buckets cumulative with le last and +Inf equal to
// the count, label values escaped, and the runtime and process series a
// dashboard expects.
func TestExpositionFormat(t *testing.T) {
	m := metrics.New(metrics.Sources{})
	m.ObserveApproval("web", "a\"b\\c\nd", 45*time.Second)
	m.ObserveApproval("web", "a\"b\\c\nd", 2*time.Hour)
	m.ObserveNotification("ntfy", 200*time.Millisecond)
	out := exposition(t, m)
	for _, want := range []string{
		"# HELP tuitbot_approval_latency_seconds How long approval items waited",
		"# TYPE tuitbot_approval_latency_seconds histogram\n",
		`tuitbot_approval_latency_seconds_bucket{account="a\"b\\c\nd",channel="web",le="30"} 0`,
		`tuitbot_approval_latency_seconds_bucket{account="a\"b\\c\nd",channel="web",le="60"} 1`,
		`tuitbot_approval_latency_seconds_bucket{account="a\"b\\c\nd",channel="web",le="7200"} 2`,
		`tuitbot_approval_latency_seconds_bucket{account="a\"b\\c\nd",channel="web",le="+Inf"} 2`,
		`tuitbot_approval_latency_seconds_sum{account="a\"b\\c\nd",channel="web"} 7245`,
		`tuitbot_approval_latency_seconds_count{account="a\"b\\c\nd",channel="web"} 2`,
		`tuitbot_notification_delivery_seconds_bucket{channel="ntfy",le="0.1"} 0`,
		`tuitbot_notification_delivery_seconds_bucket{channel="ntfy",le="0.25"} 1`,
		"# TYPE tuitbot_tool_calls_total counter\n",
		"# TYPE go_goroutines gauge\n",
		"go_memstats_alloc_bytes ",
		"process_resident_memory_bytes ",
		"tuitbot_x_spend_usd_total 0\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("exposition lacks %q", want)
		}
	}
	if n := strings.Count(out, "# TYPE tuitbot_approval_latency_seconds "); n != 1 {
		t.Errorf("TYPE line written %d times", n)
	}
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/plain; version=0.0.4") {
		t.Errorf("Content-Type %q", ct)
	}
}
