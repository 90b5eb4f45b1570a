package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/tuitbot/tuitbot/internal/queue"
	"github.com/tuitbot/tuitbot/internal/workflow"
)

// parseFlagTime reads an optional RFC 3339 flag; empty is now.
func parseFlagTime(flag, s string, now time.Time) (time.Time, error) {
	if s == "" {
		return now, nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return t, usageError{fmt.Errorf("--%s %q is not an RFC 3339 time (e.g. 2026-03-02T09:00:00Z)", flag, s)}
	}
	return t, nil
}

func (c *cli) queueCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "queue",
		Short: "Read the posting queue: its slots and the next free ones; apply suggested slots",
		Long: "The posting queue is [queue] slots (e.g. \"mon-fri 09:00\") in schedule.timezone. Agents place\n" +
			"drafts in it with schedule_in_queue; show and next read it (local records only), and\n" +
			"apply-suggestion writes the slots suggest_queue_slots proposes into the config file.",
	}
	var from string
	var days int
	var showJSON bool
	show := &cobra.Command{
		Use:   "show",
		Short: "List the queue's slots and what holds each",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if days < 1 || days > 60 {
				return usageError{fmt.Errorf("--days %d: allowed values are 1 to 60", days)}
			}
			return c.withQueue(cmd, "from", from, func(ctx context.Context, s *workflow.Service, p queue.Policy, at time.Time) error {
				slots, err := s.QueueSlots(ctx, p, at, days)
				if err != nil {
					return err
				}
				if showJSON {
					return writeJSON(c.stdout, map[string]any{"slots": slots, "count": len(slots), "timezone": p.Loc.String()})
				}
				if len(slots) == 0 {
					fmt.Fprintf(c.stdout, "no slots in the %d days from %s\n", days, at.In(p.Loc).Format(time.RFC3339))
				}
				for _, sl := range slots {
					line := fmt.Sprintf("%s  %-9s  %s", sl.At, sl.Weekday, sl.Status)
					if sl.DraftID != 0 {
						line += fmt.Sprintf(" (draft %d)", sl.DraftID)
					}
					fmt.Fprintln(c.stdout, line)
				}
				return nil
			})
		},
	}
	show.Flags().StringVar(&from, "from", "", "RFC 3339 time to list from (default now)")
	show.Flags().IntVar(&days, "days", 7, "days to list (1-60)")
	show.Flags().BoolVar(&showJSON, "json", false, "print JSON: get_queue_slots' fields (slots, count, timezone)")

	var after string
	var count int
	var nextJSON bool
	next := &cobra.Command{
		Use:   "next",
		Short: "Print the next free slots",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if count < 1 || count > 20 {
				return usageError{fmt.Errorf("--count %d: allowed values are 1 to 20", count)}
			}
			return c.withQueue(cmd, "after", after, func(ctx context.Context, s *workflow.Service, p queue.Policy, at time.Time) error {
				ts, err := s.NextFreeSlots(ctx, p, at, count)
				if err != nil {
					return err
				}
				out := make([]string, len(ts))
				for i, t := range ts {
					out[i] = t.In(p.Loc).Format(time.RFC3339)
				}
				if nextJSON {
					return writeJSON(c.stdout, map[string]any{"slots": out, "count": len(out), "timezone": p.Loc.String()})
				}
				for _, o := range out {
					fmt.Fprintln(c.stdout, o)
				}
				return nil
			})
		},
	}
	next.Flags().StringVar(&after, "after", "", "RFC 3339 time the slots must come after (default now)")
	next.Flags().IntVar(&count, "count", 1, "free slots to print (1-20)")
	next.Flags().BoolVar(&nextJSON, "json", false, "print JSON: get_next_free_slot's fields (slots, count, timezone)")
	cmd.AddCommand(show, next, c.applySuggestionCmd())
	return cmd
}

// withQueue opens the home and runs fn with its workflow service, the
// account's queue policy and the time the --flag (value) names.
func (c *cli) withQueue(cmd *cobra.Command, flag, value string, fn func(context.Context, *workflow.Service, queue.Policy, time.Time) error) error {
	a, err := c.openApp(cmd)
	if err != nil {
		return err
	}
	defer a.Close()
	at, err := parseFlagTime(flag, value, a.Now())
	if err != nil {
		return err
	}
	p, err := a.Cfg.QueuePolicy()
	if err != nil {
		return err
	}
	s, err := a.Workflow()
	if err != nil {
		return err
	}
	return fn(cmd.Context(), s, p, at)
}
