// Package metrics is tuitbot's Prometheus instrumentation, written in the
// text exposition format by the package itself (a few counters and
// histograms do not need a client library and its protobuf machinery in
// the binary). A Metrics value owns its own series (there is no
// package-level state), so every server or test builds one and scrapes
// only what it recorded. Counters are fed by
// observer callbacks the composition root hands to the MCP server, the
// gateway and the X and LLM clients; the approval queue, the X rate limits
// and the autopilot loops are read from their sources at scrape time, so
// they show the state every process shares.
package metrics

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Tool call outcomes.
const (
	OutcomeSuccess = "success"
	OutcomeError   = "error"
	// OutcomeUnknown is a mutation whose effect on X is not known.
	OutcomeUnknown = "unknown"
)

// Gateway decision outcomes.
const (
	DecisionAllowed   = "allowed"
	DecisionRouted    = "routed"
	DecisionDenied    = "denied"
	DecisionDryRun    = "dry_run"
	DecisionDuplicate = "duplicate"
	DecisionUnknown   = "unknown"
)

// Decisions lists every gateway decision outcome; each has a series from
// the start so a rate over it is defined before the first call.
var Decisions = []string{DecisionAllowed, DecisionRouted, DecisionDenied, DecisionDryRun, DecisionDuplicate, DecisionUnknown}

// Approvals is the approval queue as a scrape sees it.
type Approvals struct {
	Pending int
	// Oldest is when the oldest pending item was queued; zero when none.
	Oldest time.Time
}

// RateLimit is X's last rate-limit window for one endpoint.
type RateLimit struct {
	Endpoint  string // "POST /2/tweets"
	Remaining int
}

// Loop is one autopilot loop's persisted state.
type Loop struct {
	Name   string
	Runs   int
	Errors int
	// Breaker is closed, open or half-open.
	Breaker string
}

// BreakerStates are the states of an autopilot loop's circuit breaker.
var BreakerStates = []string{"closed", "open", "half-open"}

// Sources are read at scrape time. Any may be nil (a server without a
// database has no queue); one that fails is skipped for that scrape and
// logged.
type Sources struct {
	Approvals  func(ctx context.Context) (Approvals, error)
	RateLimits func() []RateLimit
	Loops      func(ctx context.Context) ([]Loop, error)
	Now        func() time.Time
	Log        *slog.Logger
}

// Metrics holds the instruments. Each value is its own registry: nothing
// is shared between two of them.
type Metrics struct {
	src          Sources
	toolCalls    *vec
	toolDuration *vec
	decisions    *vec
	xRequests    *vec
	xSpend       *vec
	llmSpend     *vec
	approvalWait *vec
	notifyDelay  *vec
}

// New builds the instruments, with the Go runtime and process series.
func New(src Sources) *Metrics {
	if src.Now == nil {
		src.Now = time.Now
	}
	if src.Log == nil {
		src.Log = slog.New(slog.DiscardHandler)
	}
	m := &Metrics{
		src: src,
		toolCalls: newCounter("tuitbot_tool_calls_total",
			"MCP tool calls by tool and outcome (success, error, unknown).", "tool", "outcome"),
		// The MCP semantic convention's mcp.server.operation.duration, in
		// Prometheus spelling, with its attribute names.
		toolDuration: newHistogram("mcp_server_operation_duration_seconds",
			"Duration of MCP server operations (mcp.server.operation.duration).",
			[]float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60},
			"mcp_method_name", "gen_ai_tool_name", "error_type"),
		decisions: newCounter("tuitbot_gateway_decisions_total",
			"Mutation gateway decisions by outcome (allowed, routed, denied, dry_run, duplicate, unknown).", "outcome"),
		xRequests: newCounter("tuitbot_x_requests_total",
			"HTTP attempts to X by endpoint family and status (0 when no response arrived).", "endpoint_family", "status"),
		xSpend: newCounter("tuitbot_x_spend_usd_total",
			"Estimated X API spend in USD by this process."),
		llmSpend: newCounter("tuitbot_llm_spend_usd_total",
			"Estimated LLM spend in USD by this process."),
		approvalWait: newHistogram("tuitbot_approval_latency_seconds",
			"How long approval items waited from queued to decided, by review channel (web, cli, link:<channel>, telegram) and account.",
			[]float64{10, 30, 60, 120, 300, 600, 1800, 3600, 7200, 21600, 86400}, "channel", "account"),
		notifyDelay: newHistogram("tuitbot_notification_delivery_seconds",
			"How long notifications took from the event to their delivery, by channel.",
			[]float64{0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600}, "channel"),
	}
	for _, d := range Decisions {
		m.decisions.with(d)
	}
	m.xSpend.with()
	m.llmSpend.with()
	return m
}

// Handler serves the metrics in the Prometheus text exposition format.
func (m *Metrics) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		w.Header().Set("Content-Type", ContentType)
		if r.Method == http.MethodHead {
			return
		}
		_ = m.Write(r.Context(), w)
	})
}

// Write writes every series once, in the text exposition format.
func (m *Metrics) Write(ctx context.Context, w io.Writer) error {
	var fams []family
	for _, v := range []*vec{m.toolCalls, m.toolDuration, m.decisions, m.xRequests, m.xSpend, m.llmSpend, m.approvalWait, m.notifyDelay} {
		fams = append(fams, v.family())
	}
	fams = append(fams, m.scrapeState(ctx)...)
	fams = append(fams, runtimeFamilies()...)
	return writeText(w, fams)
}

// ObserveTool records one tool call. code is the error code of a failed
// call, empty on success.
func (m *Metrics) ObserveTool(tool, code string, elapsed time.Duration) {
	outcome := OutcomeSuccess
	switch {
	case code == "x_outcome_unknown":
		outcome = OutcomeUnknown
	case code != "":
		outcome = OutcomeError
	}
	m.toolCalls.with(tool, outcome).add(1)
	m.toolDuration.with("tools/call", tool, code).observe(elapsed.Seconds())
}

// ObserveDecision records one gateway decision.
func (m *Metrics) ObserveDecision(outcome string) {
	m.decisions.with(outcome).add(1)
}

// ObserveApproval records how long a decided item waited.
func (m *Metrics) ObserveApproval(channel, account string, wait time.Duration) {
	m.approvalWait.with(channel, account).observe(wait.Seconds())
}

// ObserveNotification records how long a notification took to go out.
func (m *Metrics) ObserveNotification(channel string, delay time.Duration) {
	m.notifyDelay.with(channel).observe(delay.Seconds())
}

// ObserveXRequest records one HTTP attempt to X and its estimated cost.
func (m *Metrics) ObserveXRequest(endpoint string, status int, costUSD float64) {
	m.xRequests.with(EndpointFamily(endpoint), strconv.Itoa(status)).add(1)
	if costUSD > 0 {
		m.xSpend.with().add(costUSD)
	}
}

// ObserveLLMCost records the estimated cost of one LLM call.
func (m *Metrics) ObserveLLMCost(costUSD float64) {
	if costUSD > 0 {
		m.llmSpend.with().add(costUSD)
	}
}

// EndpointFamily groups X endpoints by their first path segment after the
// version: "POST /2/tweets" and "DELETE /2/tweets/:id" are "tweets",
// "GET /2/users/:id/mentions" is "users", the v1.1 media upload is "media".
// The set is small and fixed by X's API, so it is safe as a label.
func EndpointFamily(endpoint string) string {
	path := endpoint
	if _, p, ok := strings.Cut(endpoint, " "); ok {
		path = p
	}
	path, _, _ = strings.Cut(path, "?")
	segs := strings.Split(strings.Trim(path, "/"), "/")
	if len(segs) > 0 && (segs[0] == "2" || segs[0] == "1.1") {
		segs = segs[1:]
	}
	if len(segs) == 0 || segs[0] == "" {
		return "other"
	}
	return strings.TrimSuffix(segs[0], ".json")
}

// scrapeTimeout bounds the database reads of one scrape.
const scrapeTimeout = 5 * time.Second

// scrapeState reads the scrape-time series from their sources.
func (m *Metrics) scrapeState(ctx context.Context) []family {
	ctx, cancel := context.WithTimeout(ctx, scrapeTimeout)
	defer cancel()
	src := m.src
	var out []family
	if src.Approvals != nil {
		if a, err := src.Approvals(ctx); err != nil {
			src.Log.Warn("metrics: approval queue unreadable", "error", err)
		} else {
			age := 0.0
			if a.Pending > 0 && !a.Oldest.IsZero() {
				age = max(0, src.Now().Sub(a.Oldest).Seconds())
			}
			out = append(out,
				gauge("tuitbot_approvals_pending", "Calls waiting in the approval queue.", float64(a.Pending)),
				gauge("tuitbot_approvals_oldest_age_seconds", "Age of the oldest pending approval item (0 when the queue is empty).", age))
		}
	}
	if src.RateLimits != nil {
		f := family{name: "tuitbot_x_rate_limit_remaining", kind: "gauge",
			help: "Requests left in X's current 15-minute window, per endpoint, as X last reported it."}
		for _, r := range src.RateLimits() {
			f.samples = append(f.samples, sample{labels: []label{{"endpoint", r.Endpoint}}, value: float64(r.Remaining)})
		}
		out = append(out, f)
	}
	if src.Loops != nil {
		loops, err := src.Loops(ctx)
		if err != nil {
			src.Log.Warn("metrics: autopilot loop state unreadable", "error", err)
		}
		runs := family{name: "tuitbot_autopilot_loop_runs_total", kind: "counter", help: "Autopilot loop runs, from the shared loop state."}
		errs := family{name: "tuitbot_autopilot_loop_errors_total", kind: "counter", help: "Autopilot loop runs that failed, from the shared loop state."}
		breaker := family{name: "tuitbot_autopilot_breaker_state", kind: "gauge", help: "Autopilot circuit breaker state per loop: 1 for the current state, 0 for the others."}
		for _, l := range loops {
			loop := []label{{"loop", l.Name}}
			runs.samples = append(runs.samples, sample{labels: loop, value: float64(l.Runs)})
			errs.samples = append(errs.samples, sample{labels: loop, value: float64(l.Errors)})
			for _, st := range BreakerStates {
				v := 0.0
				if st == l.Breaker {
					v = 1
				}
				breaker.samples = append(breaker.samples, sample{labels: []label{{"loop", l.Name}, {"state", st}}, value: v})
			}
		}
		out = append(out, runs, errs, breaker)
	}
	return out
}
