package main

import (
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/tuitbot/tuitbot/internal/app"
	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/notify"
)

func (c *cli) notifyCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "notify",
		Short: "Notification channels: send a test, show their status, manage the outbox",
		Long: "Notifications tell you when an item waits for approval (see [notify] and [[notify.channels]]\n" +
			"in `tuitbot config init`). They are written to an outbox with the item and delivered by the\n" +
			"dispatcher that runs in `mcp serve`, `web` and `run`.",
	}
	var channel string
	var asJSON, printOnly bool
	test := &cobra.Command{
		Use:   "test --channel NAME",
		Short: "Send a test message through one channel now and report what it answered",
		Long: "Send a test message through one channel now and report what it answered. With --print nothing\n" +
			"is sent: it shows the notice as the channel would render it (with no --channel, the words every\n" +
			"channel uses), so a notice can be seen without any outside service, in the sandbox too.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if channel == "" && !printOnly {
				return usageError{fmt.Errorf("--channel: required; name one of the [[notify.channels]] entries (or --print to see the notice)")}
			}
			a, err := c.openApp(cmd)
			if err != nil {
				return err
			}
			defer a.Close()
			if printOnly {
				p, err := previewTestNotice(a, channel)
				if err != nil {
					return err
				}
				return c.answer(asJSON, p, func(w io.Writer) { printNoticePreview(w, p) })
			}
			row, err := a.SendTestNotification(cmd.Context(), channel)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(c.stdout, row)
			}
			if row.Status != notify.StatusDelivered {
				return fmt.Errorf("channel %s: the test message was not delivered (%s): %s", channel, row.Status, row.LastError)
			}
			fmt.Fprintf(c.stdout, "channel %s: test message delivered (outbox row %d)\n", channel, row.ID)
			return nil
		},
	}
	test.Flags().StringVar(&channel, "channel", "", "the channel to test (its name in [[notify.channels]])")
	test.Flags().BoolVar(&asJSON, "json", false, "print the outbox row as JSON (with --print: channel, type, title, text, payload)")
	test.Flags().BoolVar(&printOnly, "print", false, "send nothing: print the notice as the channel would render it")

	status := &cobra.Command{
		Use:   "status",
		Short: "Show each channel's last success, last error, and pending and failed counts",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			a, err := c.openApp(cmd)
			if err != nil {
				return err
			}
			defer a.Close()
			st, err := a.NotificationStatus(cmd.Context())
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(c.stdout, st)
			}
			if len(st.Channels) == 0 {
				fmt.Fprintln(c.stdout, "no notification channel is configured")
				return nil
			}
			tw := tabwriter.NewWriter(c.stdout, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "CHANNEL\tTYPE\tTARGET\tPENDING\tFAILED\tLAST SUCCESS\tLAST ERROR")
			for _, ch := range st.Channels {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%s\t%s\n", ch.Name, ch.Type, ch.Target, ch.Pending, ch.Failed, dash(ch.LastSuccess), dash(ch.LastError))
			}
			return tw.Flush()
		},
	}
	status.Flags().BoolVar(&asJSON, "json", false, "print JSON (get_notification_status' fields)")

	outbox := &cobra.Command{Use: "outbox", Short: "List, retry or drop outbox rows"}
	var f notify.Filter
	list := &cobra.Command{
		Use:   "list",
		Short: "List outbox rows, newest first",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o, a, err := c.outbox(cmd)
			if err != nil {
				return err
			}
			defer a.Close()
			rows, err := o.List(cmd.Context(), f)
			if err != nil {
				return usageError{err}
			}
			if asJSON {
				return writeJSON(c.stdout, map[string]any{"rows": rows, "count": len(rows)})
			}
			tw := tabwriter.NewWriter(c.stdout, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tCHANNEL\tEVENT\tITEM\tSTATUS\tATTEMPTS\tNEXT ATTEMPT\tLAST ERROR")
			for _, r := range rows {
				fmt.Fprintf(tw, "%d\t%s\t%s\t%d\t%s\t%d\t%s\t%s\n", r.ID, r.Channel, r.Event, r.ItemID, r.Status, r.Attempts, r.NextAttempt, dash(r.LastError))
			}
			return tw.Flush()
		},
	}
	list.Flags().StringVar(&f.Channel, "channel", "", "only this channel")
	list.Flags().StringVar(&f.Status, "status", "", "only this status: pending, delivered, failed, dropped")
	list.Flags().IntVar(&f.Limit, "limit", 50, "most rows to list (1-500)")
	list.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	change := func(use, short string, do func(o *notify.Outbox, cmd *cobra.Command, id int64) error, done, status string) *cobra.Command {
		var asJSON *bool
		sub := &cobra.Command{
			Use: use + " ID", Short: short, Args: cobra.ExactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				id, err := strconv.ParseInt(args[0], 10, 64)
				if err != nil || id <= 0 {
					return usageError{fmt.Errorf("%q is not an outbox row id (see `tuitbot notify outbox list`)", args[0])}
				}
				o, a, err := c.outbox(cmd)
				if err != nil {
					return err
				}
				defer a.Close()
				if err := do(o, cmd, id); err != nil {
					return err
				}
				return c.answer(*asJSON, OutboxChange{ID: id, Status: status}, func(w io.Writer) {
					fmt.Fprintf(w, "outbox row %d %s\n", id, done)
				})
			},
		}
		asJSON = jsonFlag(sub, "id, status (the row's new status)")
		return sub
	}
	retry := change("retry", "Send a failed or dropped row again (the next dispatcher pass delivers it)",
		func(o *notify.Outbox, cmd *cobra.Command, id int64) error { return o.Retry(cmd.Context(), id) }, "is pending again", notify.StatusPending)
	drop := change("drop", "Give up on a pending or failed row",
		func(o *notify.Outbox, cmd *cobra.Command, id int64) error { return o.Drop(cmd.Context(), id) }, "dropped", notify.StatusDropped)
	outbox.AddCommand(list, retry, drop)
	cmd.AddCommand(c.notifyAddCmd(), test, status, outbox)
	return cmd
}

// outbox opens the services and returns the outbox, or why there is none.
func (c *cli) outbox(cmd *cobra.Command) (*notify.Outbox, *app.App, error) {
	a, err := c.openApp(cmd)
	if err != nil {
		return nil, nil, err
	}
	o := a.Outbox()
	if o == nil {
		a.Close()
		return nil, nil, apperr.New(apperr.ConfigError, "no notification channel is configured; add a [[notify.channels]] entry (see `tuitbot config init`)")
	}
	return o, a, nil
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
