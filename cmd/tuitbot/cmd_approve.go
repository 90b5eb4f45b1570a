package main

import (
	"encoding/json"
	"fmt"
	"github.com/tuitbot/tuitbot/internal/actions"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tuitbot/tuitbot/internal/app"
	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/approvallink"
	"github.com/tuitbot/tuitbot/internal/gateway"
	"github.com/tuitbot/tuitbot/internal/mcpserver"
)

func (c *cli) withGateway(cmd *cobra.Command, fn func(a *app.App, g *gateway.Gateway) error) error {
	a, err := c.openApp(cmd)
	if err != nil {
		return err
	}
	defer a.Close()
	g, err := a.RequireGateway()
	if err != nil {
		return err
	}
	return fn(a, g)
}

func (c *cli) openApp(cmd *cobra.Command) (*app.App, error) {
	cfg, err := c.loadConfig()
	if err != nil {
		return nil, err
	}
	log, err := c.logger(cfg)
	if err != nil {
		return nil, err
	}
	return c.build(cmd.Context(), cfg, app.Options{Logger: log, RequireDB: true})
}

func parseID(s string) (int64, error) {
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil || id <= 0 {
		return 0, usageError{fmt.Errorf("%q is not an approval id (a positive number; see `tuitbot approve list`)", s)}
	}
	return id, nil
}

func (c *cli) approveCmd() *cobra.Command {
	var reviewer, notes string
	cmd := &cobra.Command{
		Use:   "approve",
		Short: "Review the approval queue: list, show, approve, reject, edit",
		Long: "Review calls that the policy routed to human approval. Approving replays exactly the queued\n" +
			"call (as edited) through the gateway; idempotency, limits and audit still apply.",
	}
	cmd.PersistentFlags().StringVar(&reviewer, "reviewer", "cli", "name recorded as the reviewer")
	var limit, offset int
	var listJSON, showJSON bool
	list := &cobra.Command{
		Use:   "list",
		Short: "List pending items, oldest first, a page at a time",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if limit < 1 {
				return usageError{fmt.Errorf("--limit must be at least 1")}
			}
			if offset < 0 {
				return usageError{fmt.Errorf("--offset must not be negative")}
			}
			return c.withGateway(cmd, func(_ *app.App, g *gateway.Gateway) error {
				total, err := g.PendingCount(cmd.Context())
				if err != nil {
					return err
				}
				items, err := g.PendingPage(cmd.Context(), limit, offset)
				if err != nil {
					return err
				}
				if listJSON {
					return writeJSON(c.stdout, approvalPage(items, total, offset, limit))
				}
				if len(items) == 0 {
					if total == 0 {
						fmt.Fprintln(c.stdout, "no pending items")
					} else {
						fmt.Fprintf(c.stdout, "no pending items at offset %d (%d pending)\n", offset, total)
					}
					return nil
				}
				for _, it := range items {
					fmt.Fprintf(c.stdout, "#%d  %-18s %s  (%s; expires %s)\n", it.ID, it.Tool, preview(it.Params), it.Reason, it.ExpiresAt)
				}
				fmt.Fprintf(c.stdout, "items %d-%d of %d pending", offset+1, offset+len(items), total)
				if next := offset + len(items); next < total {
					fmt.Fprintf(c.stdout, "; next page: tuitbot approve list --offset %d --limit %d", next, limit)
				}
				fmt.Fprintln(c.stdout)
				return nil
			})
		},
	}
	list.Flags().IntVar(&limit, "limit", 50, "items per page")
	list.Flags().IntVar(&offset, "offset", 0, "pending items to skip (oldest first)")
	list.Flags().BoolVar(&listJSON, "json", false, "print JSON: list_pending_approvals' fields (items, count) plus total_pending, offset and limit")
	// byID builds a subcommand acting on one item.
	byID := func(use, short string, run func(cmd *cobra.Command, g *gateway.Gateway, id int64) error) *cobra.Command {
		return &cobra.Command{
			Use: use, Short: short, Args: cobra.ExactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				id, err := parseID(args[0])
				if err != nil {
					return err
				}
				return c.withGateway(cmd, func(_ *app.App, g *gateway.Gateway) error { return run(cmd, g, id) })
			},
		}
	}
	show := &cobra.Command{
		Use:   "show ID",
		Short: "Show one item with its exact parameters (and the diff of any edit); a delete shows the post it deletes",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := parseID(args[0])
			if err != nil {
				return err
			}
			return c.withGateway(cmd, func(a *app.App, g *gateway.Gateway) error {
				it, err := g.Item(cmd.Context(), id)
				if err != nil {
					return err
				}
				if showJSON {
					return writeJSON(c.stdout, it)
				}
				return c.showItem(cmd.Context(), a, it)
			})
		},
	}
	show.Flags().BoolVar(&showJSON, "json", false, "print JSON: get_approval_item's fields")
	// A terminal keeps nothing between two commands, so the CLI cannot
	// know what its user last read. `show` prints the item's content hash
	// and --shown binds a decision to it: an edit since then decides
	// nothing (approval_changed). Without --shown, the decision binds to
	// the content its own claim reads, in the claim's transaction: what
	// runs is what the item records and what the command then prints,
	// never a mix of two versions.
	var shown string
	decision := func() (gateway.Decision, error) {
		if shown != "" && !isContentHash(shown) {
			return gateway.Decision{}, usageError{fmt.Errorf("--shown: %q is not a content hash (64 hex digits, as `tuitbot approve show` prints it)", shown)}
		}
		return gateway.Decision{Reviewer: reviewer, Notes: notes, Shown: shown}, nil
	}
	var approveJSON, rejectJSON, editJSON *bool
	approve := byID("approve ID", "Approve an item: run exactly the queued call now", func(cmd *cobra.Command, g *gateway.Gateway, id int64) error {
		d, err := decision()
		if err != nil {
			return err
		}
		it, _, err := g.ApproveWith(cmd.Context(), id, d)
		if *approveJSON {
			// A failed call answers with the error document alone: one
			// document on stdout; `approve show ID --json` has the item.
			if err != nil {
				return err
			}
			return writeJSON(c.stdout, it)
		}
		if it != nil {
			printItem(c.stdout, it)
		}
		return err
	})
	approve.Flags().StringVar(&notes, "notes", "", "review notes")
	approve.Flags().StringVar(&shown, "shown", "", "the content hash \"tuitbot approve show\" printed: approve only if the item is still exactly that")
	approveJSON = jsonFlag(approve, "approve_item's fields (the item after its call ran)")
	reject := byID("reject ID", "Reject an item", func(cmd *cobra.Command, g *gateway.Gateway, id int64) error {
		d, err := decision()
		if err != nil {
			return err
		}
		it, err := g.RejectWith(cmd.Context(), id, d)
		if err != nil {
			return err
		}
		return c.answer(*rejectJSON, it, func(w io.Writer) {
			fmt.Fprintf(w, "#%d rejected\n", it.ID)
			printReview(w, it)
		})
	})
	reject.Flags().StringVar(&notes, "notes", "", "review notes")
	reject.Flags().StringVar(&shown, "shown", "", "the content hash \"tuitbot approve show\" printed: reject only if the item is still exactly that")
	rejectJSON = jsonFlag(reject, "reject_item's fields (the rejected item)")
	var text, options string
	edit := byID("edit ID [--text TEXT] [--options JSON]", "Edit the text or post options of a pending item before approving it", func(cmd *cobra.Command, g *gateway.Gateway, id int64) error {
		var ch gateway.Changes
		if cmd.Flags().Changed("text") {
			ch.Text = &text
		}
		if cmd.Flags().Changed("options") {
			if !json.Valid([]byte(options)) {
				return usageError{fmt.Errorf("--options: not a JSON object (use {} or null to remove them)")}
			}
			ch.Fields = map[string]json.RawMessage{"options": json.RawMessage(options)}
		}
		if ch.Text == nil && ch.Fields == nil {
			return usageError{fmt.Errorf("--text or --options is required")}
		}
		it, err := g.EditFields(cmd.Context(), id, ch)
		if err != nil {
			return err
		}
		return c.answer(*editJSON, it, func(w io.Writer) { printItem(w, it) })
	})
	editJSON = jsonFlag(edit, "get_approval_item's fields (the edited item)")
	edit.Flags().StringVar(&text, "text", "", "the new text")
	edit.Flags().StringVar(&options, "options", "", "the new post options as JSON, e.g. {\"reply_settings\":\"following\"}; null removes them")
	cmd.AddCommand(list, show, approve, reject, edit, c.approveLinksCmd())
	return cmd
}

// approveLinksCmd manages the signed one-time links notifications carry.
func (c *cli) approveLinksCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "links",
		Short: "Manage signed approval links: rotate the key (kills every link) or revoke an item's links",
	}
	links := func(cmd *cobra.Command) (*approvallink.Service, *app.App, error) {
		a, err := c.openApp(cmd)
		if err != nil {
			return nil, nil, err
		}
		l := a.Links()
		if l == nil {
			a.Close()
			return nil, nil, apperr.New(apperr.ConfigError, "approval links are off; set [approval_links] enabled = true (and notify.public_base_url)")
		}
		return l, a, nil
	}
	var rotateJSON, revokeJSON *bool
	rotate := &cobra.Command{
		Use:   "rotate-key",
		Short: "Replace the link key: every link sent so far stops working",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			l, a, err := links(cmd)
			if err != nil {
				return err
			}
			defer a.Close()
			n, err := l.RotateKey(cmd.Context())
			if err != nil {
				return err
			}
			return c.answer(*rotateJSON, LinksRevoked{Revoked: n}, func(w io.Writer) {
				fmt.Fprintf(w, "link key rotated; %d open link(s) stopped working\n", n)
			})
		},
	}
	rotateJSON = jsonFlag(rotate, "revoked_links (the open links that stopped working)")
	revoke := &cobra.Command{
		Use:   "revoke ID",
		Short: "Stop every link of one approval item",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := parseID(args[0])
			if err != nil {
				return err
			}
			l, a, err := links(cmd)
			if err != nil {
				return err
			}
			defer a.Close()
			n, err := l.Revoke(cmd.Context(), a.Account, id)
			if err != nil {
				return err
			}
			return c.answer(*revokeJSON, LinksRevoked{ID: id, Revoked: n}, func(w io.Writer) {
				fmt.Fprintf(w, "%d open link(s) of item %d revoked\n", n, id)
			})
		},
	}
	revokeJSON = jsonFlag(revoke, "id, revoked_links")
	cmd.AddCommand(rotate, revoke)
	return cmd
}

func preview(params json.RawMessage) string {
	var m map[string]any
	if json.Unmarshal(params, &m) == nil {
		for _, k := range []string{"text", "tweet_id", "target_user_id", "path"} {
			if v, ok := m[k].(string); ok {
				return fmt.Sprintf("%s=%q", k, truncate(v, 60))
			}
		}
	}
	return truncate(string(params), 60)
}

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

// whoLine says who asked for a mutation and, when a person approved it,
// who did: "asked by autopilot (loop content); approved by link:phone".
func whoLine(e gateway.AuditEntry) string {
	s := "asked by " + e.Caller
	if e.Loop != "" {
		s += " (loop " + e.Loop + ")"
	}
	if e.DecidedBy != "" {
		s += "; approved by " + e.DecidedBy
	}
	return s
}

// isContentHash reports whether s is spelled as a content hash: 64
// lowercase hex digits.
func isContentHash(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, r := range s {
		if (r < '0' || r > '9') && (r < 'a' || r > 'f') {
			return false
		}
	}
	return true
}

func printItem(w io.Writer, it *gateway.ApprovalItem) {
	fmt.Fprintf(w, "#%d %s [%s]\n  rule: %s (%s)\n  caller: %s  created: %s  expires: %s\n",
		it.ID, it.Tool, it.Status, it.MatchedRuleID, it.Reason, it.Caller, it.CreatedAt, it.ExpiresAt)
	fmt.Fprintf(w, "  params: %s\n", it.Params)
	for _, o := range actions.DescribeOptions(it.Params) {
		fmt.Fprintf(w, "  %s\n", o)
	}
	printBody(w, it)
	if it.Edited {
		fmt.Fprintln(w, "  edited:")
		for _, line := range it.EditDiff() {
			fmt.Fprintln(w, "    "+line)
		}
	}
	if it.CorrelationID != "" {
		fmt.Fprintf(w, "  correlation_id: %s\n", it.CorrelationID)
	}
	if len(it.Result) > 0 {
		fmt.Fprintf(w, "  result: %s\n", it.Result)
	}
	if it.ErrorCode != "" {
		fmt.Fprintf(w, "  error: %s: %s\n", it.ErrorCode, it.ErrorMessage)
	}
	printReview(w, it)
}

func (c *cli) auditCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "audit", Short: "Read the mutation audit trail"}
	var tool, status string
	var recentJSON, detailJSON bool
	var limit int
	recent := &cobra.Command{
		Use:   "recent",
		Short: "List recent mutations, newest first, each with its rollback guidance",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if limit < 1 || limit > 100 {
				return usageError{fmt.Errorf("--limit %d: allowed values are 1 to 100", limit)}
			}
			return c.withGateway(cmd, func(_ *app.App, g *gateway.Gateway) error {
				rows, err := g.Recent(cmd.Context(), gateway.AuditFilter{Tool: tool, Status: status, Limit: limit})
				if apperr.CodeOf(err) == apperr.InvalidInput {
					// A filter value that matches nothing would look like an
					// empty trail: it is a usage error naming the allowed values.
					// The message starts with the field ("status: ..."), which
					// is the flag's name; the code is not for a person.
					return usageError{fmt.Errorf("--%s", apperr.As(err).Message)}
				}
				if err != nil {
					return err
				}
				if recentJSON {
					return writeJSON(c.stdout, mcpserver.MutationList{Mutations: rows, Count: len(rows)})
				}
				if len(rows) == 0 {
					fmt.Fprintln(c.stdout, "no mutations recorded")
				}
				for _, r := range rows {
					fmt.Fprintf(c.stdout, "%s  %-11s %-18s %s  %s\n", r.CreatedAt, r.Status, r.Tool, r.CorrelationID, strings.TrimSpace(r.ErrorCode))
					fmt.Fprintf(c.stdout, "    %s\n", whoLine(r))
					fmt.Fprintf(c.stdout, "    %s\n", rollbackLine(r))
				}
				return nil
			})
		},
	}
	recent.Flags().StringVar(&tool, "tool", "", "only this tool")
	recent.Flags().StringVar(&status, "status", "", "only this status: "+strings.Join(auditStatusNames, ", "))
	recent.Flags().IntVar(&limit, "limit", 20, "rows (1-100)")
	recent.Flags().BoolVar(&recentJSON, "json", false, "print JSON: get_recent_mutations' fields (mutations, count)")
	show := &cobra.Command{
		Use:   "show CORRELATION_ID",
		Short: "Show one mutation in full",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return c.withGateway(cmd, func(_ *app.App, g *gateway.Gateway) error {
				e, err := g.Detail(cmd.Context(), args[0])
				if err != nil {
					return err
				}
				// The detail is JSON either way (get_mutation_detail's
				// fields); --json says so explicitly for scripts.
				return writeJSON(c.stdout, e)
			})
		},
	}
	show.Flags().BoolVar(&detailJSON, "json", true, "print JSON: get_mutation_detail's fields (always on)")
	var happened, didNotHappen bool
	var resolveJSON *bool
	resolve := &cobra.Command{
		Use:   "resolve CORRELATION_ID --happened|--did-not-happen",
		Short: "Resolve a mutation whose outcome is unknown, after checking X",
		Long: "A mutation that ended unknown or interrupted may or may not have reached X, so identical\n" +
			"repeats stay blocked until it is resolved. Check X (the post, the like, the follow), then\n" +
			"say what you found: --happened makes repeats answer as duplicates of it, --did-not-happen\n" +
			"lets the call run again. `tuitbot audit show` prints the exact request that was sent.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if happened == didNotHappen {
				return usageError{fmt.Errorf("say what you found on X: exactly one of --happened or --did-not-happen")}
			}
			resolution := gateway.ResolvedHappened
			if didNotHappen {
				resolution = gateway.ResolvedDidNotHappen
			}
			return c.withGateway(cmd, func(_ *app.App, g *gateway.Gateway) error {
				e, err := g.Resolve(cmd.Context(), args[0], resolution, gateway.ResolvedByCLI)
				if err != nil {
					return err
				}
				return c.answer(*resolveJSON, e, func(w io.Writer) {
					fmt.Fprintf(w, "%s (%s, %s) resolved as %s by %s at %s\n", e.CorrelationID, e.Tool, e.Status, e.Resolution, e.ResolvedBy, e.ResolvedAt)
				})
			})
		},
	}
	resolve.Flags().BoolVar(&happened, "happened", false, "the mutation did reach X")
	resolve.Flags().BoolVar(&didNotHappen, "did-not-happen", false, "the mutation did not reach X")
	resolveJSON = jsonFlag(resolve, "resolve_mutation's fields (the resolved audit row)")
	cmd.AddCommand(recent, show, resolve)
	return cmd
}
