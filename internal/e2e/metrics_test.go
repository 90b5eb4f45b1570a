//go:build e2e

package e2e

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tuitbot/tuitbot/internal/app"
	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/mcpserver"
)

const metricsToken = "metrics-test-token-0123456789abcdef"

type bearerRT struct{ base http.RoundTripper }

func (b bearerRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+metricsToken)
	return b.base.RoundTrip(r)
}

// scrape reads /metrics (with or without the token) and returns every
// sample by its series as printed ("name{label=\"v\",...}").
func scrape(t *testing.T, url string, withToken bool) (int, map[string]float64) {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, url+mcpserver.MetricsPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	if withToken {
		req.Header.Set("Authorization", "Bearer "+metricsToken)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		io.Copy(io.Discard, res.Body)
		return res.StatusCode, nil
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			t.Fatalf("metrics line %q: %v", line, err)
		}
		out[line[:i]] = v
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, out
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// TestMetricsAfterSandboxWorkload drives a sandbox server over the HTTP
// transport (posts, a duplicate, a bookmark routed by the policy, a denied retweet), then
// scrapes /metrics and checks the counts each instrument must show.
func TestMetricsAfterSandboxWorkload(t *testing.T) {
	cfg := permissive(t.TempDir())
	cfg.MCPPolicy.RequireApprovalFor = []string{"x_bookmark_tweet"}
	cfg.MCPPolicy.RequireApprovalForSet = true
	cfg.MCPPolicy.BlockedTools = []string{"x_retweet"}
	h := newHarness(t, &cfg, app.Options{Sandbox: true})
	ts := httptest.NewServer(mcpserver.HTTPHandler(h.srv, mcpserver.HTTPOptions{
		Token: metricsToken, Healthy: h.a.Healthy, Metrics: h.a.Metrics.Handler(),
	}))
	t.Cleanup(ts.Close)

	// /metrics is behind the token; /healthz is not, and says only ok.
	if code, _ := scrape(t, ts.URL, false); code != http.StatusUnauthorized {
		t.Errorf("/metrics without the token: %d, want 401", code)
	}
	if code, body := get(t, ts.URL+mcpserver.HealthPath); code != http.StatusOK || body != "ok\n" {
		t.Errorf("/healthz: %d %q, want 200 \"ok\\n\"", code, body)
	}

	ctx, cancel := context.WithTimeout(h.ctx, time.Minute)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "metrics", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: ts.URL + "/",
		HTTPClient: &http.Client{Transport: bearerRT{http.DefaultTransport}}, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer cs.Close()

	for _, text := range []string{"metrics post one", "metrics post two", "metrics post one"} {
		if e := mustCall(t, ctx, cs, "x_post_tweet", map[string]any{"text": text}); !e.Success {
			t.Fatalf("x_post_tweet %q: %s", text, e.raw)
		}
	}
	tweet := (&sim{Server: h.a.Sim.Server}).foreignTweets(t, 1)[0]
	if e := mustCall(t, ctx, cs, "x_bookmark_tweet", map[string]any{"tweet_id": tweet}); !e.Success || e.data(t)["routed_to_approval"] != true {
		t.Fatalf("bookmark was not routed: %s", e.raw)
	}
	if e := mustCall(t, ctx, cs, "x_retweet", map[string]any{"tweet_id": tweet}); e.Success || e.Error.Code == apperr.InternalError {
		t.Fatalf("retweet was not denied: %s", e.raw)
	}

	code, m := scrape(t, ts.URL, true)
	if code != http.StatusOK {
		t.Fatalf("/metrics with the token: %d", code)
	}
	want := map[string]float64{
		`tuitbot_tool_calls_total{outcome="success",tool="x_post_tweet"}`:                                                         3,
		`tuitbot_tool_calls_total{outcome="success",tool="x_bookmark_tweet"}`:                                                     1,
		`tuitbot_tool_calls_total{outcome="error",tool="x_retweet"}`:                                                              1,
		`mcp_server_operation_duration_seconds_count{error_type="",gen_ai_tool_name="x_post_tweet",mcp_method_name="tools/call"}`: 3,
		`tuitbot_gateway_decisions_total{outcome="allowed"}`:                                                                      2,
		`tuitbot_gateway_decisions_total{outcome="duplicate"}`:                                                                    1,
		`tuitbot_gateway_decisions_total{outcome="routed"}`:                                                                       1,
		`tuitbot_gateway_decisions_total{outcome="denied"}`:                                                                       1,
		`tuitbot_gateway_decisions_total{outcome="dry_run"}`:                                                                      0,
		`tuitbot_gateway_decisions_total{outcome="unknown"}`:                                                                      0,
		`tuitbot_approvals_pending`:                                                                                               1,
		`tuitbot_autopilot_breaker_state{loop="mentions",state="closed"}`:                                                         1,
		`tuitbot_autopilot_breaker_state{loop="mentions",state="open"}`:                                                           0,
		`tuitbot_autopilot_loop_runs_total{loop="mentions"}`:                                                                      0,
		`tuitbot_llm_spend_usd_total`:                                                                                             0,
	}
	for series, v := range want {
		got, ok := m[series]
		if !ok {
			t.Errorf("%s: missing", series)
			continue
		}
		if got != v {
			t.Errorf("%s = %v, want %v", series, got, v)
		}
	}
	// Two posts reached X; the duplicate and the routed and denied calls
	// did not.
	var posts float64
	for series, v := range m {
		if strings.HasPrefix(series, `tuitbot_x_requests_total{endpoint_family="tweets",status="2`) {
			posts += v
		}
	}
	if posts != 2 {
		t.Errorf("successful X requests to the tweets family = %v, want 2\n%v", posts, m)
	}
	if age, ok := m[`tuitbot_approvals_oldest_age_seconds`]; !ok || age < 0 {
		t.Errorf("oldest approval age %v (present %v), want >= 0", age, ok)
	}
	if v, ok := m[`tuitbot_x_rate_limit_remaining{endpoint="POST /2/tweets"}`]; !ok || v <= 0 {
		t.Errorf("remaining rate limit of POST /2/tweets: %v (present %v), want > 0", v, ok)
	}
	if v := m[`tuitbot_x_spend_usd_total`]; v <= 0 {
		t.Errorf("X spend %v, want > 0 after two posts", v)
	}
}
