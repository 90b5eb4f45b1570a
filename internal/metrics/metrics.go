// Package metrics is tuitbot's Prometheus instrumentation. A Metrics value
// owns its own registry (there is no package-level state), so every server
// or test builds one and scrapes only what it recorded. Counters are fed by
// observer callbacks the composition root hands to the MCP server, the
// gateway and the X and LLM clients; the approval queue, the X rate limits
// and the autopilot loops are read from their sources at scrape time, so
// they show the state every process shares.
package metrics

import (
	"context"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
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

// Metrics holds the registry and the instruments.
type Metrics struct {
	reg          *prometheus.Registry
	toolCalls    *prometheus.CounterVec
	toolDuration *prometheus.HistogramVec
	decisions    *prometheus.CounterVec
	xRequests    *prometheus.CounterVec
	xSpend       prometheus.Counter
	llmSpend     prometheus.Counter
	approvalWait *prometheus.HistogramVec
	notifyDelay  *prometheus.HistogramVec
}

// New builds the instruments on a fresh registry, with the Go runtime and
// process collectors.
func New(src Sources) *Metrics {
	if src.Now == nil {
		src.Now = time.Now
	}
	if src.Log == nil {
		src.Log = slog.New(slog.DiscardHandler)
	}
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		toolCalls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tuitbot_tool_calls_total",
			Help: "MCP tool calls by tool and outcome (success, error, unknown).",
		}, []string{"tool", "outcome"}),
		// The MCP semantic convention's mcp.server.operation.duration, in
		// Prometheus spelling, with its attribute names.
		toolDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "mcp_server_operation_duration_seconds",
			Help:    "Duration of MCP server operations (mcp.server.operation.duration).",
			Buckets: []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60},
		}, []string{"mcp_method_name", "gen_ai_tool_name", "error_type"}),
		decisions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tuitbot_gateway_decisions_total",
			Help: "Mutation gateway decisions by outcome (allowed, routed, denied, dry_run, duplicate, unknown).",
		}, []string{"outcome"}),
		xRequests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tuitbot_x_requests_total",
			Help: "HTTP attempts to X by endpoint family and status (0 when no response arrived).",
		}, []string{"endpoint_family", "status"}),
		xSpend: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "tuitbot_x_spend_usd_total",
			Help: "Estimated X API spend in USD by this process.",
		}),
		llmSpend: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "tuitbot_llm_spend_usd_total",
			Help: "Estimated LLM spend in USD by this process.",
		}),
		approvalWait: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "tuitbot_approval_latency_seconds",
			Help:    "How long approval items waited from queued to decided, by review channel (web, cli, link:<channel>, telegram) and account.",
			Buckets: []float64{10, 30, 60, 120, 300, 600, 1800, 3600, 7200, 21600, 86400},
		}, []string{"channel", "account"}),
		notifyDelay: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "tuitbot_notification_delivery_seconds",
			Help:    "How long notifications took from the event to their delivery, by channel.",
			Buckets: []float64{0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600},
		}, []string{"channel"}),
	}
	for _, d := range Decisions {
		m.decisions.WithLabelValues(d)
	}
	m.reg.MustRegister(m.toolCalls, m.toolDuration, m.decisions, m.xRequests, m.xSpend, m.llmSpend, m.approvalWait, m.notifyDelay,
		&state{src: src},
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	return m
}

// Registry is the registry the instruments live in (for tests and for
// gathering without HTTP).
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves the registry in the Prometheus exposition format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
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
	m.toolCalls.WithLabelValues(tool, outcome).Inc()
	m.toolDuration.WithLabelValues("tools/call", tool, code).Observe(elapsed.Seconds())
}

// ObserveDecision records one gateway decision.
func (m *Metrics) ObserveDecision(outcome string) {
	m.decisions.WithLabelValues(outcome).Inc()
}

// ObserveApproval records how long a decided item waited.
func (m *Metrics) ObserveApproval(channel, account string, wait time.Duration) {
	m.approvalWait.WithLabelValues(channel, account).Observe(wait.Seconds())
}

// ObserveNotification records how long a notification took to go out.
func (m *Metrics) ObserveNotification(channel string, delay time.Duration) {
	m.notifyDelay.WithLabelValues(channel).Observe(delay.Seconds())
}

// ObserveXRequest records one HTTP attempt to X and its estimated cost.
func (m *Metrics) ObserveXRequest(endpoint string, status int, costUSD float64) {
	m.xRequests.WithLabelValues(EndpointFamily(endpoint), strconv.Itoa(status)).Inc()
	if costUSD > 0 {
		m.xSpend.Add(costUSD)
	}
}

// ObserveLLMCost records the estimated cost of one LLM call.
func (m *Metrics) ObserveLLMCost(costUSD float64) {
	if costUSD > 0 {
		m.llmSpend.Add(costUSD)
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

// state collects the scrape-time gauges.
type state struct{ src Sources }

var (
	pendingDesc = prometheus.NewDesc("tuitbot_approvals_pending",
		"Calls waiting in the approval queue.", nil, nil)
	oldestDesc = prometheus.NewDesc("tuitbot_approvals_oldest_age_seconds",
		"Age of the oldest pending approval item (0 when the queue is empty).", nil, nil)
	remainingDesc = prometheus.NewDesc("tuitbot_x_rate_limit_remaining",
		"Requests left in X's current 15-minute window, per endpoint, as X last reported it.", []string{"endpoint"}, nil)
	loopRunsDesc = prometheus.NewDesc("tuitbot_autopilot_loop_runs_total",
		"Autopilot loop runs, from the shared loop state.", []string{"loop"}, nil)
	loopErrorsDesc = prometheus.NewDesc("tuitbot_autopilot_loop_errors_total",
		"Autopilot loop runs that failed, from the shared loop state.", []string{"loop"}, nil)
	breakerDesc = prometheus.NewDesc("tuitbot_autopilot_breaker_state",
		"Autopilot circuit breaker state per loop: 1 for the current state, 0 for the others.", []string{"loop", "state"}, nil)
)

func (s *state) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{pendingDesc, oldestDesc, remainingDesc, loopRunsDesc, loopErrorsDesc, breakerDesc} {
		ch <- d
	}
}

// scrapeTimeout bounds the database reads of one scrape.
const scrapeTimeout = 5 * time.Second

func (s *state) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
	defer cancel()
	if s.src.Approvals != nil {
		if a, err := s.src.Approvals(ctx); err != nil {
			s.src.Log.Warn("metrics: approval queue unreadable", "error", err)
		} else {
			ch <- prometheus.MustNewConstMetric(pendingDesc, prometheus.GaugeValue, float64(a.Pending))
			age := 0.0
			if a.Pending > 0 && !a.Oldest.IsZero() {
				age = max(0, s.src.Now().Sub(a.Oldest).Seconds())
			}
			ch <- prometheus.MustNewConstMetric(oldestDesc, prometheus.GaugeValue, age)
		}
	}
	if s.src.RateLimits != nil {
		for _, r := range s.src.RateLimits() {
			ch <- prometheus.MustNewConstMetric(remainingDesc, prometheus.GaugeValue, float64(r.Remaining), r.Endpoint)
		}
	}
	if s.src.Loops != nil {
		loops, err := s.src.Loops(ctx)
		if err != nil {
			s.src.Log.Warn("metrics: autopilot loop state unreadable", "error", err)
		}
		for _, l := range loops {
			ch <- prometheus.MustNewConstMetric(loopRunsDesc, prometheus.CounterValue, float64(l.Runs), l.Name)
			ch <- prometheus.MustNewConstMetric(loopErrorsDesc, prometheus.CounterValue, float64(l.Errors), l.Name)
			for _, st := range BreakerStates {
				v := 0.0
				if st == l.Breaker {
					v = 1
				}
				ch <- prometheus.MustNewConstMetric(breakerDesc, prometheus.GaugeValue, v, l.Name, st)
			}
		}
	}
}
