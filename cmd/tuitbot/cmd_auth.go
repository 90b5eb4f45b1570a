package main

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tuitbot/tuitbot/internal/app"
	"github.com/tuitbot/tuitbot/internal/store"
	"github.com/tuitbot/tuitbot/internal/xapi"
	"github.com/tuitbot/tuitbot/internal/xauth"
)

func (c *cli) authCmd() *cobra.Command {
	var headless, statusJSON bool
	var timeout time.Duration
	var scopeGroups []string
	// Read from the process's one endpoint table, which the tool
	// registry reads too: building a table of its own was most of what
	// this command's help cost every start.
	groups := scopeGroupList()
	cmd := &cobra.Command{
		Use:   "auth",
		Short: "Log in to X with OAuth 2.0 (PKCE) and store the tokens (0600)",
		Long: "Log in to X with OAuth 2.0 PKCE. By default a one-shot listener on x_api.callback_addr\n" +
			"(127.0.0.1:8080) receives the redirect; with --headless, paste the full redirected URL instead.\n" +
			"Tokens are written atomically to ~/.tuitbot/tokens.json with mode 0600 and refreshed automatically.\n" +
			"With --account NAME (an [accounts.NAME] section) the account's tokens go to ~/.tuitbot/tokens/NAME.json\n" +
			"instead, each refreshed under its own lock. Log every account in with its own X login.\n" +
			"The login asks for the scopes the tools need. Optional groups of scopes are asked for only\n" +
			"when named: --scopes +dm adds direct messages (dm.read, dm.write), which x_send_dm,\n" +
			"x_delete_dm and x_get_dm_events need. Known groups: " + groups + ".",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := c.loadConfig()
			if err != nil {
				return err
			}
			if c.sandbox {
				return usageError{errors.New("the sandbox needs no login: its demo accounts have their tokens already")}
			}
			account, err := cfg.SelectAccount(c.account)
			if err != nil {
				return usageError{err}
			}
			scopes, err := xauth.ScopesWithGroups(scopeGroups)
			if err != nil {
				return usageError{err}
			}
			if cfg.XAPI.ClientID == "" {
				return fmt.Errorf("x_api.client_id is not set; create an X app with OAuth 2.0, then set it in %s or TUITBOT_X_API__CLIENT_ID", cfg.ConfigPath)
			}
			// The database (and its identity) exists before the first token
			// does: from then on a token file means the home has history,
			// and a database that goes missing is noticed.
			db, err := store.Open(cmd.Context(), cfg.DatabaseTarget(), app.StoreOptions(cfg, nil, c.acceptNewDB))
			if err != nil {
				return fmt.Errorf("cannot open the database: %w", err)
			}
			if err := db.Close(); err != nil {
				return err
			}
			tok, err := xauth.Login(cmd.Context(), xauth.LoginOptions{
				Options: xauth.Options{
					ClientID: cfg.XAPI.ClientID, ClientSecret: cfg.XAPI.ClientSecret,
					AuthURL: cfg.XAPI.AuthorizeURL, TokenURL: cfg.XAPI.TokenURL, TokenPath: cfg.TokenFileFor(account),
					Scopes: scopes,
				},
				CallbackAddr: cfg.XAPI.CallbackAddr, Headless: headless, Timeout: timeout, Out: c.stderr, In: c.stdin,
			})
			if err != nil {
				return err
			}
			fmt.Fprintln(c.stdout, loginSentence(account, cfg.TokenFileFor(account), tok))
			return nil
		},
	}
	cmd.Flags().BoolVar(&headless, "headless", false, "paste the redirected URL instead of running a local callback listener")
	cmd.Flags().DurationVar(&timeout, "timeout", 2*time.Minute, "how long to wait for the authorization")
	cmd.Flags().StringSliceVar(&scopeGroups, "scopes", nil, "also ask for an optional scope group ("+groups+"); repeatable, or comma-separated")
	status := &cobra.Command{
		Use:   "status",
		Short: "Show the stored token's scopes and expiry (never the token)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := c.loadConfig()
			if err != nil {
				return err
			}
			if c.sandbox {
				c.sandboxHome(cfg)
			}
			account, err := cfg.SelectAccount(c.account)
			if err != nil {
				return usageError{err}
			}
			st, err := xauth.Status(cfg.TokenFileFor(account), time.Now())
			if err != nil {
				return err
			}
			if statusJSON {
				return writeJSON(c.stdout, tokenStatus(st))
			}
			fmt.Fprintln(c.stdout, st.String())
			return nil
		},
	}
	status.Flags().BoolVar(&statusJSON, "json", false, "print JSON: token_file, token_type, scopes, expires_at, expired, remaining_seconds, has_refresh_token")
	cmd.AddCommand(status)
	return cmd
}

// scopeGroupList names the endpoint table's optional scope groups as
// --scopes takes them: "+dm".
func scopeGroupList() string {
	return "+" + strings.Join(xapi.Known().ScopeGroups(), ", +")
}
