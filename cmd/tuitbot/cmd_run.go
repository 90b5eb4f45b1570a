package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/tuitbot/tuitbot/internal/app"
	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/autopilot"
	"github.com/tuitbot/tuitbot/internal/gateway"
	"github.com/tuitbot/tuitbot/internal/llm"
	"github.com/tuitbot/tuitbot/internal/store"
)

// lockMode says how a command keeps to one autopilot per account.
type lockMode int

const (
	// lockNone reads only (status).
	lockNone lockMode = iota
	// lockOnce fails when another runner holds the account (tick, and run
	// on SQLite, where every runner shares the home).
	lockOnce
	// lockStandBy waits for the account when another host holds it (run on
	// PostgreSQL); Runner.RunExclusive takes the lock.
	lockStandBy
)

// withAutopilot opens the services, takes the account's lock as mode says,
// and builds the runner.
func (c *cli) withAutopilot(cmd *cobra.Command, mode lockMode, opts autopilot.Options, fn func(a *app.App, r *autopilot.Runner) error) error {
	a, err := c.openApp(cmd)
	if err != nil {
		return err
	}
	defer a.Close()
	r, release, err := c.accountRunner(cmd.Context(), a, mode, opts)
	if err != nil {
		return err
	}
	defer release()
	return fn(a, r)
}

// accountRunner builds account a's runner. With lockOnce it holds the
// account's lock (a per-account lock file beside the SQLite database,
// shared by every home using it; a session lock on PostgreSQL) until
// release is called; with lockStandBy on SQLite too: there a second runner
// is refused rather than kept on standby.
func (c *cli) accountRunner(ctx context.Context, a *app.App, mode lockMode, opts autopilot.Options) (*autopilot.Runner, func(), error) {
	release := func() {}
	if mode == lockStandBy && !onPostgres(a) {
		mode = lockOnce
	}
	if mode == lockOnce {
		if onPostgres(a) {
			l, err := autopilot.SessionLock(a.DB, a.Account)(ctx)
			if err != nil {
				if errors.Is(err, autopilot.ErrHeld) {
					return nil, nil, fmt.Errorf("another autopilot is already running for account %s on a host sharing the database: %w", a.Account, err)
				}
				return nil, nil, err
			}
			release = l.Release
		} else {
			l, err := autopilot.AcquireAccountRunLock(a.DB.Path, a.Cfg.Home, a.Account)
			if err != nil {
				return nil, nil, err
			}
			release = func() { _ = l.Release() }
		}
	}
	r, err := a.Autopilot(opts)
	if err != nil {
		release()
		if apperr.CodeOf(err) == apperr.InvalidInput {
			return nil, nil, usageError{err}
		}
		return nil, nil, err
	}
	return r, release, nil
}

func onPostgres(a *app.App) bool { return a.DB != nil && a.DB.Dialect == store.Postgres }

// runAccount runs account a's loops until ctx is done. On PostgreSQL it
// runs only while it holds the account's session lock and stands by while
// another host does; on SQLite the caller holds the account's lock file.
func (c *cli) runAccount(ctx context.Context, a *app.App, r *autopilot.Runner, out *syncWriter) error {
	if !onPostgres(a) {
		return r.Run(ctx)
	}
	said := false
	return r.RunExclusive(ctx, autopilot.SessionLock(a.DB, a.Account), func(error) {
		if !said {
			said = true
			out.printf("account %s: another host runs its autopilot; standing by, asking again every %s\n", a.Account, r.RetryInterval())
		}
	})
}

// syncWriter lets the runners of several accounts write to one terminal.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) printf(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fmt.Fprintf(s.w, format, args...)
}

// noteStandIn tells the person at the terminal that drafts will come from
// the sandbox stand-in, not a model (stderr, so --json output stays clean).
func (c *cli) noteStandIn(a *app.App) {
	if a.UsingStandIn() {
		fmt.Fprintln(c.stderr, "no LLM configured: drafts come from the sandbox stand-in and start with "+llm.StandInLabel)
	}
}

func (c *cli) runCmd() *cobra.Command {
	var all bool
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run the autopilot loops until interrupted",
		Long: "Run the autopilot: discovery, mentions, content, threads, targets, analytics, the scheduled\n" +
			"publisher and approval housekeeping, each paced by [intervals] and gated by [schedule]. Every\n" +
			"post goes through the mutation gateway (policy, approval, audit). One autopilot runs per account:\n" +
			"on SQLite a second one for the same account fails; on PostgreSQL it stands by and takes over\n" +
			"within one loop interval when the runner holding the account stops or its host dies.\n" +
			"--all-accounts runs every account in this process. Ctrl-C (or SIGTERM) stops scheduling and\n" +
			"lets a call in progress finish.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if all {
				return c.runAllAccounts(cmd)
			}
			out := &syncWriter{w: c.stderr}
			now := time.Now // the App's clock once it is built
			opts := autopilot.Options{Report: func(res autopilot.LoopResult) { out.printf("%s\n", runLine("", res, now())) }}
			return c.withAutopilot(cmd, lockStandBy, opts, func(a *app.App, r *autopilot.Runner) error {
				now = a.Now
				if err := a.StartNotifications(cmd.Context()); err != nil {
					return err
				}
				out.printf("autopilot running for account %s (loops: %s; mode %s, approval %s); press Ctrl-C to stop\n",
					a.Account, strings.Join(r.Loops(), ", "), a.Cfg.Mode, onOff(a.Cfg.EffectiveApprovalMode()))
				c.noteStandIn(a)
				if err := printPlan(cmd.Context(), out, "", r, a.Now()); err != nil {
					return err
				}
				return c.runAccount(cmd.Context(), a, r, out)
			})
		},
	}
	cmd.Flags().BoolVar(&all, "all-accounts", false, "run the autopilot of every account in this process, each under its own lock")
	return cmd
}

// runAllAccounts runs every account's runner in this process. Each holds
// its own lock; on SQLite every lock is taken before any loop starts, so a
// held account fails the command instead of leaving a partial fleet. The
// first runner to fail stops the others.
func (c *cli) runAllAccounts(cmd *cobra.Command) error {
	if c.account != "" {
		return usageError{errors.New("--all-accounts runs every account; leave out --account")}
	}
	top, err := c.openApp(cmd)
	if err != nil {
		return err
	}
	defer top.Close()
	if err := top.StartNotifications(cmd.Context()); err != nil {
		return err
	}
	type job struct {
		a *app.App
		r *autopilot.Runner
	}
	var jobs []job
	out := &syncWriter{w: c.stderr}
	for _, name := range top.Accounts() {
		a, err := top.ForAccount(name)
		if err != nil {
			return err
		}
		prefix := "account " + name + ": "
		report := func(res autopilot.LoopResult) { out.printf("%s\n", runLine(prefix, res, a.Now())) }
		r, release, err := c.accountRunner(cmd.Context(), a, lockStandBy, autopilot.Options{Report: report})
		if err != nil {
			return fmt.Errorf("account %s: %w", name, err)
		}
		defer release()
		jobs = append(jobs, job{a, r})
	}
	c.noteStandIn(top)
	for _, j := range jobs {
		out.printf("autopilot running for account %s (loops: %s; mode %s, approval %s)\n",
			j.a.Account, strings.Join(j.r.Loops(), ", "), j.a.Cfg.Mode, onOff(j.a.Cfg.EffectiveApprovalMode()))
		if err := printPlan(cmd.Context(), out, "account "+j.a.Account+": ", j.r, j.a.Now()); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithCancel(cmd.Context())
	defer cancel()
	errs := make([]error, len(jobs))
	var wg sync.WaitGroup
	for i, j := range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := c.runAccount(ctx, j.a, j.r, out); err != nil {
				errs[i] = fmt.Errorf("account %s: %w", j.a.Account, err)
				cancel()
			}
		}()
	}
	out.printf("press Ctrl-C to stop\n")
	wg.Wait()
	return errors.Join(errs...)
}

func (c *cli) tickCmd() *cobra.Command {
	var loop string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "tick",
		Short: "Run one iteration of each enabled autopilot loop (or --loop NAME) and exit, for cron",
		Long: "Run each enabled loop once and exit. Active hours, caps, the circuit breaker and rate-limit\n" +
			"waits apply as in `tuitbot run`. Loops: " + strings.Join(autopilot.LoopNames(), ", ") + ".",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var opts autopilot.Options
			if cmd.Flags().Changed("loop") {
				name, err := autopilot.ParseLoop(loop)
				if err != nil {
					return usageError{err}
				}
				opts.Loops = []string{name}
			}
			if !asJSON {
				// Each loop's line as soon as it has run: a tick may take a
				// while (drafting, X), and says what it is doing meanwhile.
				opts.Report = func(res autopilot.LoopResult) { fmt.Fprintln(c.stdout, loopLine(res)) }
			}
			return c.withAutopilot(cmd, lockOnce, opts, func(a *app.App, r *autopilot.Runner) error {
				c.noteStandIn(a)
				results, err := r.Tick(cmd.Context())
				if asJSON {
					if jerr := writeJSON(c.stdout, results); jerr != nil {
						return jerr
					}
				}
				if err != nil {
					return err
				}
				failed := 0
				for _, res := range results {
					if res.Error != "" {
						failed++
					}
				}
				if failed > 0 {
					return fmt.Errorf("%d of %d loops failed (see above and `tuitbot status`)", failed, len(results))
				}
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&loop, "loop", "", "run only this loop: "+strings.Join(autopilot.LoopNames(), ", "))
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the results as JSON")
	return cmd
}

func (c *cli) statusCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show the autopilot loops, today's counts against their caps, pending approvals and X spend",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return c.withAutopilot(cmd, lockNone, autopilot.Options{}, func(a *app.App, r *autopilot.Runner) error {
				st, err := r.Status(cmd.Context())
				if err != nil {
					return err
				}
				g, err := a.RequireGateway()
				if err != nil {
					return err
				}
				lat, err := g.ApprovalLatency(cmd.Context(), a.Now().Add(-30*24*time.Hour))
				if err != nil {
					return err
				}
				at := ""
				if a.Sim != nil {
					at = a.Sim.URL
				}
				if asJSON {
					return writeJSON(c.stdout, struct {
						*autopilot.Status
						ApprovalLatency []gateway.LatencyStat `json:"approval_latency"`
						// Sandbox says X is the sandbox emulator, at
						// SandboxEmulatorURL, and the spend simulated.
						Sandbox            bool   `json:"sandbox"`
						SandboxEmulatorURL string `json:"sandbox_emulator_url,omitempty"`
					}{st, lat, a.Sim != nil, at})
				}
				printStatus(c.stdout, st, at)
				printLatency(c.stdout, lat)
				return nil
			})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the status as JSON")
	return cmd
}

func (c *cli) analyticsCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "analytics",
		Short: "Account analytics",
	}
	var snapJSON *bool
	snap := &cobra.Command{
		Use:   "snapshot",
		Short: "Record the account's follower, following and post counts now",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			a, err := c.openApp(cmd)
			if err != nil {
				return err
			}
			defer a.Close()
			wf, err := a.Workflow()
			if err != nil {
				return err
			}
			sn, err := wf.TakeSnapshot(cmd.Context())
			if err != nil {
				return err
			}
			return c.answer(*snapJSON, sn, func(w io.Writer) {
				fmt.Fprintf(w, "followers %d, following %d, posts %d (taken %s)\n", sn.Followers, sn.Following, sn.Tweets, sn.TakenAt)
			})
		},
	}
	snapJSON = jsonFlag(snap, "followers_count, following_count, tweet_count, taken_at")
	cmd.AddCommand(snap)
	return cmd
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// loopLine is one loop's outcome on one line, as tick and run print it when
// the loop has run. The columns line up without waiting for the other
// loops: the first is as wide as the longest loop name.
func loopLine(r autopilot.LoopResult) string {
	width := 0
	for _, n := range autopilot.LoopNames() {
		width = max(width, len(n))
	}
	outcome, detail := "ok", fmt.Sprintf("posted %d, queued %d, blocked %d%s", r.Posted, r.Queued, r.Blocked, prefixed("; ", r.Summary))
	switch {
	case r.Skipped != "":
		outcome, detail = "skipped", r.Skipped
	case r.Error != "":
		outcome, detail = "failed", r.ErrorCode+": "+r.Error
	}
	return fmt.Sprintf("%-*s  %-7s  %s", width, r.Loop, outcome, detail)
}

// runLine is loopLine with when the loop runs next, for the daemon.
func runLine(prefix string, r autopilot.LoopResult, now time.Time) string {
	line := prefix + loopLine(r)
	if !r.NextRun.IsZero() {
		line += "; next run " + when(r.NextRun, now)
	}
	return line
}

// when renders a time the daemon waits for, with how far away it is.
func when(t, now time.Time) string {
	if !t.After(now) {
		return "now"
	}
	return fmt.Sprintf("%s (in %s)", t.UTC().Format(time.RFC3339), t.Sub(now).Round(time.Second))
}

// printPlan says when each loop runs first, before the daemon starts: a
// loop that ran recently (a tick, an earlier run) waits for its turn, and
// the daemon is silent until then.
func printPlan(ctx context.Context, out *syncWriter, prefix string, r *autopilot.Runner, now time.Time) error {
	plan, err := r.Plan(ctx)
	if err != nil {
		return err
	}
	parts := make([]string, 0, len(plan))
	for _, p := range plan {
		parts = append(parts, p.Loop+" "+when(p.At, now))
	}
	out.printf("%snext runs: %s\n", prefix, strings.Join(parts, ", "))
	return nil
}

func prefixed(p, s string) string {
	if s == "" {
		return ""
	}
	return p + s
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// printLatency prints how long decided items waited for a person.
func printLatency(w io.Writer, lat []gateway.LatencyStat) {
	if len(lat) == 0 {
		fmt.Fprintln(w, "\napproval latency (30 days): no item decided")
		return
	}
	fmt.Fprintln(w, "\napproval latency, queued to decided (30 days):")
	for _, l := range lat {
		fmt.Fprintf(w, "  %-14s p50 %-8s p90 %-8s (%d items)\n", l.Channel, gateway.FormatLatency(l.P50), gateway.FormatLatency(l.P90), l.Count)
	}
}

// printStatus prints st; sandbox is the emulator's address when the
// sandbox is on, whose spend is only simulated.
func printStatus(w io.Writer, st *autopilot.Status, sandbox string) {
	active := "outside active hours"
	if st.ActiveNow {
		active = "active now"
	}
	fmt.Fprintf(w, "autopilot status at %s\n", st.Now)
	fmt.Fprintf(w, "mode %s, approval %s; active hours %s (%s)\n\n", st.Mode, onOff(st.ApprovalMode), st.ActiveHours, active)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "LOOP\tENABLED\tSTATE\tBREAKER\tRUNS\tERRORS\tLAST RUN\tNEXT RUN")
	for _, l := range st.Loops {
		breaker := l.Breaker
		if l.Breaker == "open" {
			breaker = "open until " + l.PausedUntil
		}
		errs := fmt.Sprintf("%d", l.Errors)
		if l.ConsecutiveErrors > 0 {
			errs = fmt.Sprintf("%d (%d in a row)", l.Errors, l.ConsecutiveErrors)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\n", l.Name, yesNo(l.Enabled), l.State, breaker, l.Runs, errs, orDash(l.LastRun), orDash(l.NextRun))
	}
	_ = tw.Flush()
	for _, l := range st.Loops {
		if l.LastError != "" && l.LastError != l.LastResult {
			fmt.Fprintf(w, "  %s: last error: %s\n", l.Name, l.LastError)
		}
		if l.LastResult != "" {
			fmt.Fprintf(w, "  %s: last run: %s\n", l.Name, l.LastResult)
		}
	}
	t, caps := st.Today, st.Caps
	fmt.Fprintf(w, "\ntoday (UTC %s):\n", t.Day)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "  replies\t%d / %d\n", t.Replies, caps.RepliesPerDay)
	fmt.Fprintf(tw, "  tweets\t%d / %d\n", t.Tweets, caps.TweetsPerDay)
	fmt.Fprintf(tw, "  threads (7 days)\t%d / %d\n", t.ThreadsWeek, caps.ThreadsPerWeek)
	fmt.Fprintf(tw, "  target replies\t%d / %d\n", t.TargetReplies, caps.TargetRepliesPerDay)
	fmt.Fprintf(tw, "  product mentions\t%d of %d replies (limit %.0f%%)\n", t.ProductMentions, t.Replies, caps.ProductMentionRatio*100)
	_ = tw.Flush()
	fmt.Fprintf(w, "pending approvals: %d\n", st.PendingApprovals)
	if sandbox != "" {
		fmt.Fprintf(w, "simulated X spend today: $%.4f over %d calls to the sandbox emulator at %s (nothing reached x.com)\n",
			st.XSpendTodayUSD, st.XCallsToday, sandbox)
		return
	}
	fmt.Fprintf(w, "X spend today: $%.4f over %d calls\n", st.XSpendTodayUSD, st.XCallsToday)
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
