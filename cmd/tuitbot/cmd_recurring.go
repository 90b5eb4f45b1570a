package main

import (
	"context"
	"errors"
	"fmt"
	"github.com/tuitbot/tuitbot/internal/app"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/argcheck"
	"github.com/tuitbot/tuitbot/internal/mcpserver"
	"github.com/tuitbot/tuitbot/internal/workflow"
)

// everyRE is --every: a count and a unit, "1d", "2w", "3 days".
var everyRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^([0-9]+) ?(d|day|days|w|week|weeks)$`) })

// parseEvery reads --every into the tool's {n, unit}; the workflow checks
// the count's range, so only the shape is checked here.
func parseEvery(s string) (workflow.Every, error) {
	m := everyRE().FindStringSubmatch(strings.ToLower(strings.TrimSpace(s)))
	if m == nil {
		if s == "" {
			return workflow.Every{}, usageError{errors.New("--every: required, a count and d (days) or w (weeks), e.g. 1d or 2w")}
		}
		return workflow.Every{}, usageError{fmt.Errorf("--every %q: a count and d (days) or w (weeks), e.g. 1d or 2w", s)}
	}
	n, err := strconv.Atoi(m[1])
	if err != nil {
		return workflow.Every{}, usageError{fmt.Errorf("--every %q: the count is too large", s)}
	}
	unit := "day"
	if m[2][0] == 'w' {
		unit = "week"
	}
	return workflow.Every{N: n, Unit: unit}, nil
}

// fieldFlag names the flag that sets one of the recurring and evergreen
// tools' fields on the command line; ok is false for a field that is not a
// flag (an id given as an argument).
func fieldFlag(field string) (flag string, ok bool) {
	base, index, indexed := strings.Cut(strings.TrimSuffix(field, "]"), "[")
	switch base {
	case "content":
		flag = "--text"
	case "draft_id":
		flag = "--draft"
	case "every", "every.n", "every.unit":
		flag = "--every"
	case "weekdays":
		flag = "--weekdays"
	case "time":
		flag = "--time"
	case "ends_after":
		flag = "--ends-after"
	case "ends_on":
		flag = "--ends-on"
	case "vary", "vary.variants", "variants":
		flag = "--variant"
	default:
		return "", false
	}
	if indexed && flag == "--variant" {
		if i, err := strconv.Atoi(index); err == nil {
			flag = fmt.Sprintf("--variant #%d", i+1)
		}
	}
	return flag, true
}

// variantRefRE finds the variants a message refers to by field name.
var variantRefRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?:vary\.variants|variants)\[([0-9]+)\]|vary\.variants`)
})

// fieldRefs rewords the field names a message's text refers to as flags.
func fieldRefs(s string) string {
	s = variantRefRE().ReplaceAllStringFunc(s, func(ref string) string {
		f, _ := fieldFlag(ref)
		return f
	})
	return strings.NewReplacer("draft_id", "--draft", "or content", "or --text", "pass content", "pass --text",
		"ends_after", "--ends-after", "ends_on", "--ends-on").Replace(s)
}

// asFlags restates a workflow error for the command line: the field it
// names becomes the flag, bad input is a usage error (exit 2), and other
// refusals keep their code and hints, worded with the flags.
func asFlags(err error) error {
	ae := apperr.As(err)
	if ae == nil {
		return err
	}
	field, rest, ok := strings.Cut(ae.Message, ": ")
	if !ok {
		return err
	}
	var flags []string
	for _, f := range strings.Split(field, ", ") {
		flag, ok := fieldFlag(f)
		if !ok {
			return err
		}
		flags = append(flags, flag)
	}
	msg := strings.Join(flags, ", ") + ": " + fieldRefs(rest)
	if ae.Code == apperr.InvalidInput {
		return usageError{errors.New(msg)}
	}
	out := *ae
	out.Message = msg
	out.Hints = make([]apperr.Hint, len(ae.Hints))
	for i, h := range ae.Hints {
		out.Hints[i] = apperr.Hint{Do: fieldRefs(h.Do), Unless: h.Unless}
	}
	return &out
}

// parseRecurringID reads a recurring post's id argument.
func parseRecurringID(s string) (int64, error) {
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil || id <= 0 {
		return 0, usageError{fmt.Errorf("%q is not a recurring post id (a positive number; see `tuitbot recurring list`)", s)}
	}
	return id, nil
}

// withRecurring opens the home and runs fn with its workflow service and
// the account's timezone, which every rule's times are read in.
func (c *cli) withRecurring(cmd *cobra.Command, fn func(context.Context, *workflow.Service, *time.Location) error) error {
	return c.withWorkflow(cmd, func(a *app.App, s *workflow.Service) error {
		loc, err := time.LoadLocation(a.Cfg.Schedule.Timezone)
		if err != nil {
			return apperr.Wrap(apperr.ConfigError, err, "schedule.timezone: %v", err)
		}
		return asFlags(fn(cmd.Context(), s, loc))
	})
}

// withWorkflow opens the home and runs fn with it and its workflow
// service.
func (c *cli) withWorkflow(cmd *cobra.Command, fn func(*app.App, *workflow.Service) error) error {
	a, err := c.openApp(cmd)
	if err != nil {
		return err
	}
	defer a.Close()
	s, err := a.Workflow()
	if err != nil {
		return err
	}
	return fn(a, s)
}

func (c *cli) recurringCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "recurring",
		Short: "Create, list, pause, resume and delete recurring posts",
		Long: "A recurring post is a text posted again every n days or weeks at an HH:MM time in\n" +
			"schedule.timezone. Each occurrence becomes a scheduled draft a day ahead and is published\n" +
			"through the gateway like any scheduled draft (policy, approval, dedup, audit). These commands\n" +
			"change local records only; nothing is sent to X when they run.",
		Example: "  tuitbot recurring create --text \"Weekly tip: pin your best post.\" --every 1w --weekdays mon --time 09:00\n" +
			"  tuitbot recurring list",
	}
	var listJSON bool
	list := &cobra.Command{
		Use:     "list",
		Short:   "List the recurring posts with their status and next occurrence",
		Example: "  tuitbot recurring list\n  tuitbot recurring list --account brand_b --json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return c.withRecurring(cmd, func(ctx context.Context, s *workflow.Service, loc *time.Location) error {
				ps, err := s.RecurringPosts(ctx, loc)
				if err != nil {
					return err
				}
				if listJSON {
					return writeJSON(c.stdout, map[string]any{"recurring_posts": ps, "count": len(ps), "timezone": loc.String()})
				}
				if len(ps) == 0 {
					fmt.Fprintln(c.stdout, "no recurring posts")
					return nil
				}
				tw := tabwriter.NewWriter(c.stdout, 0, 0, 2, ' ', 0)
				fmt.Fprintln(tw, "ID\tSTATUS\tEVERY\tDAYS\tTIME\tNEXT\tMADE\tTEXT")
				for _, p := range ps {
					fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", p.ID, p.Status, everyText(p.Every), orDash(strings.Join(p.Weekdays, ",")),
						p.Time, orDash(p.NextAt), madeText(p), textsText(p.Texts))
				}
				return tw.Flush()
			})
		},
	}
	list.Flags().BoolVar(&listJSON, "json", false, "print JSON: list_recurring_posts' fields (recurring_posts, count, timezone)")

	var (
		text, every, at, endsOn string
		draft                   int64
		weekdays, variants      []string
		endsAfter               int
		createJSON              bool
	)
	create := &cobra.Command{
		Use:   "create",
		Short: "Create a recurring post",
		Long: "Create a rule that posts --text (or the text of single-post --draft) every --every at --time\n" +
			"in schedule.timezone, on --weekdays if given, until --ends-after occurrences or --ends-on.\n" +
			"X refuses a text repeated within its duplicate window, so a rule that would post one text\n" +
			"again within 7 days is refused (duplicate_content_risk) unless --variant gives other texts,\n" +
			"posted in turn after --text.",
		Example: "  tuitbot recurring create --text \"Weekly tip: pin your best post.\" --every 1w --weekdays mon --time 09:00\n" +
			"  tuitbot recurring create --text \"Good morning!\" --every 1d --time 08:00 --ends-after 30 \\\n" +
			"      --variant \"Morning, all!\" --variant \"Hello, early risers.\"",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ev, err := parseEvery(every)
			if err != nil {
				return err
			}
			req := workflow.RecurringRequest{DraftID: draft, Content: text, Every: ev, Weekdays: weekdays, Time: at,
				EndsAfter: endsAfter, EndsOn: endsOn}
			if len(variants) > 0 {
				req.Vary = &workflow.Vary{Variants: variants}
			}
			return c.withRecurring(cmd, func(ctx context.Context, s *workflow.Service, loc *time.Location) error {
				p, err := s.CreateRecurring(ctx, loc, req)
				if err != nil {
					return err
				}
				return c.printRecurring(p, "created", createJSON)
			})
		},
	}
	create.Flags().StringVar(&text, "text", "", "the text to post (or --draft)")
	create.Flags().Int64Var(&draft, "draft", 0, "a single-post draft whose text to post (or --text)")
	create.Flags().StringVar(&every, "every", "", "how often: a count and d or w, e.g. 1d, 3d, 2w (1-365 days or 1-52 weeks)")
	create.Flags().StringSliceVar(&weekdays, "weekdays", nil, "days it falls on, e.g. mon,wed,fri (default: every day for d, the day it is created for w)")
	create.Flags().StringVar(&at, "time", "", "HH:MM in schedule.timezone")
	create.Flags().IntVar(&endsAfter, "ends-after", 0, "stop after this many occurrences (1-10000; default never)")
	create.Flags().StringVar(&endsOn, "ends-on", "", "YYYY-MM-DD: the last day an occurrence may fall on")
	create.Flags().StringArrayVar(&variants, "variant", nil, "another text posted in turn after --text (repeat the flag for more)")
	create.Flags().BoolVar(&createJSON, "json", false, "print JSON: create_recurring_post's fields")

	action := func(name, short, example, verb string) *cobra.Command {
		var asJSON bool
		sub := &cobra.Command{
			Use:     name + " ID",
			Short:   short,
			Example: example,
			Args:    cobra.ExactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				id, err := parseRecurringID(args[0])
				if err != nil {
					return err
				}
				return c.withRecurring(cmd, func(ctx context.Context, s *workflow.Service, loc *time.Location) error {
					p, err := s.UpdateRecurring(ctx, loc, id, workflow.RecurringUpdate{Action: name})
					if err != nil {
						return err
					}
					return c.printRecurring(p, verb, asJSON)
				})
			},
		}
		sub.Flags().BoolVar(&asJSON, "json", false, "print JSON: update_recurring_post's fields")
		return sub
	}
	pause := action(workflow.RecurringPause, "Pause a recurring post and withdraw its occurrences not yet published",
		"  tuitbot recurring pause 3", "paused")
	resume := action(workflow.RecurringResume, "Resume a paused recurring post from its next occurrence after now",
		"  tuitbot recurring resume 3", "resumed")

	var deleteJSON bool
	del := &cobra.Command{
		Use:     "delete ID",
		Short:   "Delete a recurring post and withdraw its occurrences not yet published",
		Long:    "Delete a recurring post. Its occurrences not yet published are withdrawn; what it already posted stays.",
		Example: "  tuitbot recurring delete 3",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := parseRecurringID(args[0])
			if err != nil {
				return err
			}
			return c.withRecurring(cmd, func(ctx context.Context, s *workflow.Service, _ *time.Location) error {
				n, err := s.DeleteRecurring(ctx, id)
				if err != nil {
					return err
				}
				if deleteJSON {
					return writeJSON(c.stdout, map[string]any{"deleted": true, "id": id, "withdrawn_drafts": n})
				}
				fmt.Fprintf(c.stdout, "deleted recurring post %d; withdrew %d scheduled occurrences\n", id, n)
				return nil
			})
		},
	}
	del.Flags().BoolVar(&deleteJSON, "json", false, "print JSON: delete_recurring_post's fields (deleted, id, withdrawn_drafts)")
	cmd.AddCommand(list, create, pause, resume, del)
	return cmd
}

func (c *cli) printRecurring(p *workflow.RecurringPost, verb string, asJSON bool) error {
	if asJSON {
		return writeJSON(c.stdout, p)
	}
	days := ""
	if len(p.Weekdays) > 0 {
		days = " on " + strings.Join(p.Weekdays, ",")
	}
	fmt.Fprintf(c.stdout, "%s recurring post %d: every %s%s at %s, %s\n", verb, p.ID, everyText(p.Every), days, p.Time, p.Status)
	if p.NextAt != "" {
		fmt.Fprintf(c.stdout, "next: %s\n", p.NextAt)
	}
	return nil
}

func everyText(e workflow.Every) string {
	if e.N == 1 {
		return e.Unit
	}
	return fmt.Sprintf("%d %ss", e.N, e.Unit)
}

func madeText(p *workflow.RecurringPost) string {
	if p.EndsAfter > 0 {
		return fmt.Sprintf("%d/%d", p.Created, p.EndsAfter)
	}
	return strconv.Itoa(p.Created)
}

func textsText(texts []string) string {
	if len(texts) == 0 {
		return ""
	}
	s := strconv.Quote(truncate(texts[0], 40))
	if len(texts) > 1 {
		s += fmt.Sprintf(" +%d variants", len(texts)-1)
	}
	return s
}

// parseTweetID reads an X post id argument.
func parseTweetID(s string) (string, error) {
	if err := argcheck.ID("TWEET_ID", s); err != nil {
		return "", usageError{errors.New(apperr.As(err).Message)}
	}
	return s, nil
}

func (c *cli) evergreenCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "evergreen",
		Short: "Mark, list and unmark evergreen posts, recycled into empty queue slots",
		Long: "Evergreen posts are the account's own posts kept for recycling: with [evergreen] enabled and\n" +
			"fill_empty_slots, a queue slot still empty 2 h before its time gets the eligible post with the\n" +
			"most engagement, by evergreen.mode (repost, requote or variant), published through the gateway.",
		Example: "  tuitbot evergreen mark 1790000000000000000\n  tuitbot evergreen list",
	}
	var listJSON bool
	list := &cobra.Command{
		Use:     "list",
		Short:   "List the evergreen posts, most engagement first, and the [evergreen] settings",
		Example: "  tuitbot evergreen list\n  tuitbot evergreen list --account brand_b --json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return c.withWorkflow(cmd, func(a *app.App, s *workflow.Service) error {
				ps, err := s.EvergreenPosts(cmd.Context())
				if err != nil {
					return err
				}
				settings := mcpserver.EvergreenSettings(a.Cfg.Evergreen)
				if listJSON {
					return writeJSON(c.stdout, map[string]any{"evergreen": ps, "count": len(ps), "settings": settings})
				}
				e := a.Cfg.Evergreen
				fmt.Fprintf(c.stdout, "[evergreen] enabled=%t fill_empty_slots=%t mode=%s min_interval_days=%d max_recycles=%d\n",
					e.Enabled, e.FillEmptySlots, e.Mode, e.MinIntervalDays, e.MaxRecycles)
				if len(ps) == 0 {
					fmt.Fprintln(c.stdout, "no evergreen posts")
					return nil
				}
				tw := tabwriter.NewWriter(c.stdout, 0, 0, 2, ' ', 0)
				fmt.Fprintln(tw, "TWEET\tSTATUS\tENGAGEMENT\tRECYCLES\tLAST RECYCLED\tTEXT")
				for _, p := range ps {
					text := strconv.Quote(truncate(p.Text, 40))
					if len(p.Variants) > 0 {
						text += fmt.Sprintf(" +%d variants", len(p.Variants))
					}
					fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%s\n", p.TweetID, p.Status, p.Engagement, p.Recycles, orDash(p.LastRecycledAt), text)
				}
				return tw.Flush()
			})
		},
	}
	list.Flags().BoolVar(&listJSON, "json", false, "print JSON: list_evergreen's fields (evergreen, count, settings)")

	var variants []string
	var markJSON bool
	mark := &cobra.Command{
		Use:   "mark TWEET_ID",
		Short: "Keep one of the account's posts for recycling, with its engagement read from X now",
		Long: "Mark one of the account's posts evergreen. Its engagement (likes + reposts + replies + quotes)\n" +
			"is read from X now; marking it again refreshes it. --variant gives the texts evergreen.mode\n" +
			"requote (the quote's comment) and variant (a new post) use in turn. Reads X; posts nothing.",
		Example: "  tuitbot evergreen mark 1790000000000000000\n" +
			"  tuitbot evergreen mark 1790000000000000000 --variant \"Still worth reading.\" --variant \"Worth a second look.\"",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := parseTweetID(args[0])
			if err != nil {
				return err
			}
			return c.withWorkflow(cmd, func(a *app.App, s *workflow.Service) error {
				p, err := s.MarkEvergreen(cmd.Context(), id, variants)
				if err != nil {
					return asFlags(err)
				}
				if markJSON {
					return writeJSON(c.stdout, map[string]any{"evergreen": p, "settings": mcpserver.EvergreenSettings(a.Cfg.Evergreen)})
				}
				fmt.Fprintf(c.stdout, "marked %s evergreen: engagement %d, %d variants\n", p.TweetID, p.Engagement, len(p.Variants))
				if !a.Cfg.Evergreen.Enabled || !a.Cfg.Evergreen.FillEmptySlots {
					fmt.Fprintln(c.stdout, "note: nothing is recycled until [evergreen] enabled and fill_empty_slots are true")
				}
				return nil
			})
		},
	}
	mark.Flags().StringArrayVar(&variants, "variant", nil, "a text for requote and variant modes (repeat the flag for more)")
	mark.Flags().BoolVar(&markJSON, "json", false, "print JSON: mark_evergreen's fields (evergreen, settings)")

	var unmarkJSON bool
	unmark := &cobra.Command{
		Use:     "unmark TWEET_ID",
		Short:   "Stop recycling a post; items already placed in the queue stay",
		Example: "  tuitbot evergreen unmark 1790000000000000000",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := parseTweetID(args[0])
			if err != nil {
				return err
			}
			return c.withWorkflow(cmd, func(a *app.App, s *workflow.Service) error {
				if err := s.UnmarkEvergreen(cmd.Context(), id); err != nil {
					return err
				}
				if unmarkJSON {
					return writeJSON(c.stdout, map[string]any{"unmarked": true, "tweet_id": id})
				}
				fmt.Fprintf(c.stdout, "unmarked %s\n", id)
				return nil
			})
		},
	}
	unmark.Flags().BoolVar(&unmarkJSON, "json", false, "print JSON: unmark_evergreen's fields (unmarked, tweet_id)")
	cmd.AddCommand(list, mark, unmark)
	return cmd
}
