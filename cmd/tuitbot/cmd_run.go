package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/tuitbot/tuitbot/internal/app"
	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/autopilot"
	"github.com/tuitbot/tuitbot/internal/llm"
)

// withAutopilot opens the services, optionally takes the single-instance
// lock, and builds the runner.
func (c *cli) withAutopilot(cmd *cobra.Command, lock bool, opts autopilot.Options, fn func(a *app.App, r *autopilot.Runner) error) error {
	a, err := c.openApp(cmd)
	if err != nil {
		return err
	}
	defer a.Close()
	if lock {
		l, err := autopilot.AcquireRunLock(a.Cfg.Home)
		if err != nil {
			return err
		}
		defer l.Release()
	}
	r, err := a.Autopilot(opts)
	if err != nil {
		if apperr.CodeOf(err) == apperr.InvalidInput {
			return usageError{err}
		}
		return err
	}
	return fn(a, r)
}

// noteStandIn tells the person at the terminal that drafts will come from
// the sandbox stand-in, not a model (stderr, so --json output stays clean).
func (c *cli) noteStandIn(a *app.App) {
	if a.UsingStandIn() {
		fmt.Fprintln(c.stderr, "no LLM configured: drafts come from the sandbox stand-in and start with "+llm.StandInLabel)
	}
}

func (c *cli) runCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run the autopilot loops until interrupted",
		Long: "Run the autopilot: discovery, mentions, content, threads, targets, analytics, the scheduled\n" +
			"publisher and approval housekeeping, each paced by [intervals] and gated by [schedule]. Every\n" +
			"post goes through the mutation gateway (policy, approval, audit). One autopilot runs per home\n" +
			"directory; Ctrl-C (or SIGTERM) stops scheduling and lets a call in progress finish.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return c.withAutopilot(cmd, true, autopilot.Options{}, func(a *app.App, r *autopilot.Runner) error {
				fmt.Fprintf(c.stderr, "autopilot running (loops: %s; mode %s, approval %s); press Ctrl-C to stop\n",
					strings.Join(r.Loops(), ", "), a.Cfg.Mode, onOff(a.Cfg.EffectiveApprovalMode()))
				c.noteStandIn(a)
				return r.Run(cmd.Context())
			})
		},
	}
	return cmd
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
			return c.withAutopilot(cmd, true, opts, func(a *app.App, r *autopilot.Runner) error {
				c.noteStandIn(a)
				results, err := r.Tick(cmd.Context())
				if asJSON {
					if jerr := writeJSON(c.stdout, results); jerr != nil {
						return jerr
					}
				} else {
					printTick(c.stdout, results)
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
			return c.withAutopilot(cmd, false, autopilot.Options{}, func(_ *app.App, r *autopilot.Runner) error {
				st, err := r.Status(cmd.Context())
				if err != nil {
					return err
				}
				if asJSON {
					return writeJSON(c.stdout, st)
				}
				printStatus(c.stdout, st)
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
			fmt.Fprintf(c.stdout, "followers %d, following %d, posts %d (taken %s)\n", sn.Followers, sn.Following, sn.Tweets, sn.TakenAt)
			return nil
		},
	}
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

func printTick(w io.Writer, results []autopilot.LoopResult) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, r := range results {
		switch {
		case r.Skipped != "":
			fmt.Fprintf(tw, "%s\tskipped\t%s\n", r.Loop, r.Skipped)
		case r.Error != "":
			fmt.Fprintf(tw, "%s\tfailed\t%s: %s\n", r.Loop, r.ErrorCode, r.Error)
		default:
			fmt.Fprintf(tw, "%s\tok\tposted %d, queued %d, blocked %d%s\n", r.Loop, r.Posted, r.Queued, r.Blocked, prefixed("; ", r.Summary))
		}
	}
	_ = tw.Flush()
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

func printStatus(w io.Writer, st *autopilot.Status) {
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
	fmt.Fprintf(w, "X spend today: $%.4f over %d calls\n", st.XSpendTodayUSD, st.XCallsToday)
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
