package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/optouts"
)

// OptOutList is `tuitbot optouts list --json`.
type OptOutList struct {
	OptOuts []optouts.OptOut `json:"opt_outs"`
	Count   int              `json:"count"`
}

// OptOutCleared is `tuitbot optouts clear USER --json`.
type OptOutCleared struct {
	User    string `json:"user"`
	Cleared bool   `json:"cleared"`
}

// withOptOuts opens the home and runs fn with the account's suppression
// list.
func (c *cli) withOptOuts(cmd *cobra.Command, fn func(context.Context, optouts.Store) error) error {
	a, err := c.openApp(cmd)
	if err != nil {
		return err
	}
	defer a.Close()
	s, err := a.OptOuts()
	if err != nil {
		return err
	}
	return fn(cmd.Context(), s)
}

func (c *cli) optoutsCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "optouts",
		Short: "List and clear the users who told the account to stop",
		Long: "A mention, reply or DM to the account that says an opt-out phrase (x_api.opt_out_phrases:\n" +
			"\"stop\", \"unsubscribe\", …) puts its author on the account's suppression list, as X's\n" +
			"guidelines ask (\"If a user says 'stop,' stop\"). No automated reply, @mention or DM reaches\n" +
			"them (user_opted_out) until a person clears them here. Nothing is sent to X.",
		Example: "  tuitbot optouts list\n  tuitbot optouts clear @rustacean_rae",
	}
	list := &cobra.Command{
		Use:     "list",
		Short:   "List the suppressed users, oldest first",
		Example: "  tuitbot optouts list\n  tuitbot optouts list --account brand_b --json",
		Args:    cobra.NoArgs,
	}
	listJSON := jsonFlag(list, "opt_outs (user_id, username, phrase, source_id, text, created_at) and count")
	list.RunE = func(cmd *cobra.Command, _ []string) error {
		return c.withOptOuts(cmd, func(ctx context.Context, s optouts.Store) error {
			rows, err := s.List(ctx)
			if err != nil {
				return err
			}
			return c.answer(*listJSON, OptOutList{OptOuts: rows, Count: len(rows)}, func(w io.Writer) {
				if len(rows) == 0 {
					fmt.Fprintln(w, "no user has opted out")
					return
				}
				tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
				fmt.Fprintln(tw, "USER_ID\tUSERNAME\tPHRASE\tSINCE\tSOURCE")
				for _, o := range rows {
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", o.UserID, orDash(o.Username), o.Phrase, o.CreatedAt, orDash(o.SourceID))
				}
				_ = tw.Flush()
			})
		})
	}
	clr := &cobra.Command{
		Use:     "clear USER",
		Short:   "Take a user (an X user id or @username) off the suppression list",
		Example: "  tuitbot optouts clear @rustacean_rae\n  tuitbot optouts clear 1234567890 --json",
		Args:    cobra.ExactArgs(1),
	}
	clearJSON := jsonFlag(clr, "user and cleared (whether the user was on the list)")
	clr.RunE = func(cmd *cobra.Command, args []string) error {
		user := strings.TrimSpace(args[0])
		if strings.TrimPrefix(user, "@") == "" {
			return usageError{errors.New("USER: an X user id or @username is required")}
		}
		return c.withOptOuts(cmd, func(ctx context.Context, s optouts.Store) error {
			ok, err := s.Clear(ctx, user)
			if err != nil {
				return apperr.Wrap(apperr.DBError, err, "clearing %s: %v", user, err)
			}
			return c.answer(*clearJSON, OptOutCleared{User: user, Cleared: ok}, func(w io.Writer) {
				if ok {
					fmt.Fprintf(w, "%s is off the suppression list\n", user)
					return
				}
				fmt.Fprintf(w, "%s was not on the suppression list\n", user)
			})
		})
	}
	cmd.AddCommand(list, clr)
	return cmd
}
