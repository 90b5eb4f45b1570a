// Package autopilot runs tuitbot's loops: discovery, mentions, content,
// threads, targets, analytics, the scheduled publisher and approval
// housekeeping. Every side effect goes through the mutation gateway with
// caller "autopilot" and the loop's name, so policy, approval, idempotency
// and audit apply exactly as they do for agents. The safety caps (daily
// replies, tweets and threads, replies per author, the product-mention
// ratio, no replies to ourselves) are checked from the database before the
// gateway is called, not merely configured.
//
// All time goes through an injected clock and sleep, so a simulated day runs
// in seconds.
package autopilot

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/clock"
	"github.com/tuitbot/tuitbot/internal/config"
	"github.com/tuitbot/tuitbot/internal/content"
	"github.com/tuitbot/tuitbot/internal/discovery"
	"github.com/tuitbot/tuitbot/internal/gateway"
	"github.com/tuitbot/tuitbot/internal/optouts"
	"github.com/tuitbot/tuitbot/internal/store"
	"github.com/tuitbot/tuitbot/internal/workflow"
	"github.com/tuitbot/tuitbot/internal/xapi"
)

// Loop names, as used by `tuitbot tick --loop`, intervals.enabled_loops,
// loop_state and the audit's loop_name.
const (
	LoopDiscovery    = "discovery"
	LoopMentions     = "mentions"
	LoopContent      = "content"
	LoopThreads      = "threads"
	LoopTargets      = "targets"
	LoopAnalytics    = "analytics"
	LoopPublisher    = "publisher"
	LoopHousekeeping = "housekeeping"
)

// Caller is the gateway caller every loop uses.
const Caller = "autopilot"

// loopSpec is one autopilot loop: everything the runner needs to know about
// it lives in its row of loopTable.
type loopSpec struct {
	name string
	// seconds reads the loop's pace from [intervals].
	seconds func(config.Intervals) int
	// usesX loops stop when the X token has expired.
	usesX bool
	// posts loops sleep outside the active hours.
	posts bool
	run   func(*Runner, *iter) error
}

// loopTable lists every loop in the order a tick runs them.
func loopTable() []loopSpec {
	return []loopSpec{
		{LoopHousekeeping, func(iv config.Intervals) int { return iv.HousekeepingSeconds }, false, false, (*Runner).housekeepingLoop},
		{LoopPublisher, func(iv config.Intervals) int { return iv.PublisherSeconds }, true, true, (*Runner).publisherLoop},
		{LoopMentions, func(iv config.Intervals) int { return iv.MentionsSeconds }, true, true, (*Runner).mentionsLoop},
		{LoopDiscovery, func(iv config.Intervals) int { return iv.DiscoverySeconds }, true, true, (*Runner).discoveryLoop},
		{LoopTargets, func(iv config.Intervals) int { return iv.TargetsSeconds }, true, true, (*Runner).targetsLoop},
		{LoopContent, func(iv config.Intervals) int { return iv.ContentSeconds }, true, true, (*Runner).contentLoop},
		{LoopThreads, func(iv config.Intervals) int { return iv.ThreadSeconds }, true, true, (*Runner).threadsLoop},
		{LoopAnalytics, func(iv config.Intervals) int { return iv.AnalyticsSeconds }, true, false, (*Runner).analyticsLoop},
	}
}

// loopByName returns a loop's row; ok is false for an unknown name.
func loopByName(name string) (loopSpec, bool) {
	for _, l := range loopTable() {
		if l.name == name {
			return l, true
		}
	}
	return loopSpec{}, false
}

// LoopNames returns every loop in the order a tick runs them.
func LoopNames() []string {
	var out []string
	for _, l := range loopTable() {
		out = append(out, l.name)
	}
	return out
}

// usesX reports loops that call X; an expired token stops them.
func usesX(loop string) bool { l, _ := loopByName(loop); return l.usesX }

// posts reports loops that post to X; they sleep outside active hours.
func posts(loop string) bool { l, _ := loopByName(loop); return l.posts }

// ParseLoop checks a loop name given on the command line. An unknown name is
// invalid_input naming the field and listing the loops.
func ParseLoop(name string) (string, error) {
	n := strings.ToLower(strings.TrimSpace(name))
	if slices.Contains(LoopNames(), n) {
		return n, nil
	}
	return "", apperr.New(apperr.InvalidInput, "loop: %q is not an autopilot loop; loops: %s", name, strings.Join(LoopNames(), ", "))
}

// Deps are the services the loops use. The composition root (internal/app)
// fills them; the autopilot never reaches for services it is not given.
type Deps struct {
	Cfg       *config.Config
	DB        *store.DB
	Gateway   *gateway.Gateway
	Workflow  *workflow.Service
	Discovery *discovery.Service
	// Replier returns the reply pipeline for one loop (caller autopilot).
	Replier func(loop string) (*workflow.Replier, error)
	// Generator returns the content generator or why there is none.
	Generator func() (*content.Generator, error)
	// X returns the X client or why there is none.
	X         func() (*xapi.Client, error)
	Log       *slog.Logger
	Now       func() time.Time
	AccountID string
	// AnyHour runs the posting loops at any hour, whatever [schedule]
	// says: for the sandbox, whose emulator has no audience to keep hours
	// for. A real account keeps its active hours.
	AnyHour bool
	// OptOuts is the account's suppression list; nil keeps none.
	OptOuts OptOuts
}

// OptOuts records the users who tell the account to stop and answers
// whether one has.
type OptOuts interface {
	Record(ctx context.Context, m optouts.Message) (bool, error)
	OptedOut(ctx context.Context, user string) (bool, error)
}

// Sleep waits d of clock time, or until ctx is done (then it returns the
// context's error).
type Sleep func(ctx context.Context, d time.Duration) error

// Options tune a Runner.
type Options struct {
	// Sleep is how the runner waits; nil waits on a real timer. A test
	// passes one that advances its clock.
	Sleep Sleep
	// Rand drives jitter, action delays and topic choice; nil seeds one
	// from the clock.
	Rand *rand.Rand
	// Loops restricts the runner to these loops (tick --loop); empty means
	// every loop in intervals.enabled_loops.
	Loops []string
	// Report, when set, is given each loop's outcome as soon as that loop
	// has run (by Tick or Run), so a command shows progress as it happens
	// rather than at the end. The daemon's own outcome lines then drop to
	// debug level: the report says the same.
	Report func(LoopResult)
}

// Runner schedules and runs the loops. Run and Tick must not be called
// concurrently on one Runner.
type Runner struct {
	d     Deps
	cfg   *config.Config
	log   *slog.Logger
	now   func() time.Time
	sleep Sleep
	rng   *rand.Rand
	loops []string
	sched schedule
	state map[string]*loopState
	// guard, while RunExclusive holds the account's lock, says whether the
	// lock is still held; Run checks it before every iteration.
	guard  func(context.Context) error
	report func(LoopResult)
	// authStop is the message X loops are stopped with after an expired
	// token, empty while X is usable.
	authStop string
}

// New validates the autopilot configuration and builds a runner.
func New(d Deps, o Options) (*Runner, error) {
	if d.Cfg == nil || d.DB == nil || d.Gateway == nil || d.Workflow == nil || d.Discovery == nil ||
		d.Replier == nil || d.Generator == nil || d.X == nil {
		return nil, errors.New("autopilot: Cfg, DB, Gateway, Workflow, Discovery, Replier, Generator and X are required")
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	if d.AccountID == "" {
		d.AccountID = "default"
	}
	if o.Sleep == nil {
		o.Sleep = clock.Sleep
	}
	if o.Rand == nil {
		seed := uint64(d.Now().UnixNano())
		o.Rand = rand.New(rand.NewPCG(seed, seed>>7|1))
	}
	sched, err := newSchedule(d.Cfg.Schedule)
	if err != nil {
		return nil, err
	}
	if d.AnyHour {
		sched = sched.withoutHours()
	}
	if err := checkConfig(d.Cfg); err != nil {
		return nil, err
	}
	enabled := map[string]bool{}
	for _, n := range d.Cfg.Intervals.EnabledLoops {
		name, err := ParseLoop(n)
		if err != nil {
			return nil, apperr.New(apperr.ConfigError, "intervals.enabled_loops: %q is not an autopilot loop; loops: %s", n, strings.Join(LoopNames(), ", "))
		}
		enabled[name] = true
	}
	var loops []string
	if len(o.Loops) > 0 {
		for _, n := range o.Loops {
			name, err := ParseLoop(n)
			if err != nil {
				return nil, err
			}
			if !enabled[name] {
				return nil, apperr.New(apperr.InvalidInput, "loop: %q is disabled; add it to intervals.enabled_loops to run it", name)
			}
			if !slices.Contains(loops, name) {
				loops = append(loops, name)
			}
		}
	} else {
		for _, n := range LoopNames() {
			if enabled[n] {
				loops = append(loops, n)
			}
		}
	}
	return &Runner{d: d, cfg: d.Cfg, log: d.Log, now: d.Now, sleep: o.Sleep, rng: o.Rand, loops: loops, sched: sched,
		state: map[string]*loopState{}, report: o.Report}, nil
}

// checkConfig validates the keys config.Validate does not know about.
func checkConfig(c *config.Config) error {
	for key, v := range map[string]int{
		"intervals.publisher_seconds": c.Intervals.PublisherSeconds, "intervals.housekeeping_seconds": c.Intervals.HousekeepingSeconds,
	} {
		if v <= 0 {
			return apperr.New(apperr.ConfigError, "%s: must be greater than 0 (got %d)", key, v)
		}
	}
	return nil
}

// Loops returns the loops this runner runs.
func (r *Runner) Loops() []string { return slices.Clone(r.loops) }

// interval is a loop's configured pace.
func (r *Runner) interval(loop string) time.Duration {
	s := 0
	if l, ok := loopByName(loop); ok {
		s = l.seconds(r.cfg.Intervals)
	}
	if s <= 0 {
		s = 3600
	}
	return time.Duration(s) * time.Second
}

// jitter adds up to jitter_percent of d.
func (r *Runner) jitter(d time.Duration) time.Duration {
	p := r.cfg.Intervals.JitterPercent
	if p <= 0 || d <= 0 {
		return d
	}
	return d + time.Duration(r.rng.Int64N(int64(d)*int64(p)/100+1))
}

// actionDelay is the pause between two posts of one iteration, so the
// account never bursts.
func (r *Runner) actionDelay() time.Duration {
	lo, hi := r.cfg.Limits.MinActionDelaySeconds, r.cfg.Limits.MaxActionDelaySeconds
	if hi <= 0 {
		return 0
	}
	if hi <= lo {
		return time.Duration(lo) * time.Second
	}
	return time.Duration(lo+r.rng.IntN(hi-lo+1)) * time.Second
}

func ts(t time.Time) string { return store.FormatTime(t) }

// dayStart is the start of t's UTC day: the caps are per UTC day.
func dayStart(t time.Time) time.Time {
	t = t.UTC()
	return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}
