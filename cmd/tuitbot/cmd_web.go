package main

import (
	"context"
	"fmt"
	"net"

	"github.com/spf13/cobra"

	"github.com/tuitbot/tuitbot/internal/app"
	"github.com/tuitbot/tuitbot/internal/autopilot"
	"github.com/tuitbot/tuitbot/internal/config"
	"github.com/tuitbot/tuitbot/internal/web"
)

func (c *cli) webCmd() *cobra.Command {
	var listen string
	cmd := &cobra.Command{
		Use:   "web",
		Short: "Review the approval queue, audit trail and analytics in the browser",
		Long: "Serve a local review page: approve, edit or reject what agents queued, read the audit trail\n" +
			"(roll back, resolve unknown outcomes), analytics, the autopilot's state and the settings.\n\n" +
			"The first line on stdout is a one-time login URL; opening it sets a session cookie and the\n" +
			"URL stops working. Restart the command for a new one. The server listens on loopback;\n" +
			"approving replays exactly the queued call through the gateway, as `tuitbot approve` does,\n" +
			"with reviewer \"web\". With --sandbox it shares the emulator world of `mcp serve --sandbox`.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			host, _, err := net.SplitHostPort(listen)
			if err != nil {
				return usageError{fmt.Errorf("--listen %q: want host:port: %w", listen, err)}
			}
			if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
				return usageError{fmt.Errorf("--listen %q: the review page listens on loopback only (127.0.0.1, ::1 or localhost)", listen)}
			}
			a, err := c.openApp(cmd)
			if err != nil {
				return err
			}
			defer a.Close()
			d, err := webDeps(a)
			if err != nil {
				return err
			}
			if err := c.seedDemo(cmd.Context(), a, d); err != nil {
				return err
			}
			srv, err := web.New(d, web.Options{})
			if err != nil {
				return err
			}
			ln, err := srv.Listen(listen)
			if err != nil {
				return err
			}
			// The URL holds the login token: stdout only, never the log.
			fmt.Fprintln(c.stdout, srv.LoginURL())
			a.Log.Info("review page listening; open the login URL printed on stdout", "addr", ln.Addr().String(), "sandbox", c.sandbox)
			return srv.Serve(ctx, ln)
		},
	}
	cmd.Flags().StringVar(&listen, "listen", "127.0.0.1:8767", "host:port on loopback (port 0 picks a free one)")
	return cmd
}

// webDeps hands the review page the services it reads and acts through,
// for every account of the home (the selected one first).
func webDeps(a *app.App) (web.Deps, error) {
	if _, err := a.RequireGateway(); err != nil {
		return web.Deps{}, err
	}
	d := web.Deps{Log: a.Log, Now: a.Now, Warnings: app.PolicyWarnings(a.Cfg)}
	if masked, err := config.MaskedTOML(a.Cfg); err == nil {
		d.Settings = masked
	}
	names := a.Accounts()
	for _, name := range names {
		acc, err := a.ForAccount(name)
		if err != nil || acc.Gateway == nil {
			a.Log.Warn("review page: account not served", "account", name, "error", err)
			continue
		}
		d.Accounts = append(d.Accounts, webAccount(acc))
	}
	// The account the configuration selects comes first: it is the one
	// shown unless a page asks for another.
	if sel, err := a.ForAccount(""); err == nil {
		for i, acc := range d.Accounts {
			if acc.Name == sel.Account && i > 0 {
				d.Accounts[0], d.Accounts[i] = d.Accounts[i], d.Accounts[0]
			}
		}
	}
	return d, nil
}

// webAccount is one account's services for the review page.
func webAccount(a *app.App) web.Account {
	acc := web.Account{Name: a.Account, Gateway: a.Gateway, DailyBudgetUSD: a.Cfg.MCPPolicy.DailyBudgetUSD}
	if wf, err := a.Workflow(); err == nil {
		acc.Workflow = wf
	}
	if c, err := a.Composer(); err == nil {
		acc.Composer = c
	}
	if r, err := a.Autopilot(autopilot.Options{}); err == nil {
		acc.Autopilot, acc.Hold = r.Status, r.Hold
	}
	disc, _ := a.Discovery()
	acc.Posts = web.LookupPosts(disc, a.XClient)
	acc.Users = web.LookupUsers(a.XClient)
	acc.Sandbox = a.Sim != nil
	acc.XLogin = a.XLoginProblem
	if a.Policy != nil {
		acc.Policy = web.PolicyInfo{Rules: a.Policy.Rules(), Limits: a.Policy.Limits()}
		if a.Counters != nil {
			acc.Policy.Usage = a.Counters.Snapshot
		}
	}
	return acc
}

// seedDemo gives a fresh sandbox home its demo world, so the first look at
// the review page has something to review. Real homes are never touched.
func (c *cli) seedDemo(ctx context.Context, a *app.App, d web.Deps) error {
	if !c.sandbox || len(d.Accounts) == 0 {
		return nil
	}
	seeded, err := web.SeedDemo(ctx, d.Accounts[0])
	if err != nil {
		return err
	}
	if seeded {
		a.Log.Info("sandbox: seeded the demo world (caller \"demo\") because the sandbox had no gateway history", "account", d.Accounts[0].Name)
	}
	return nil
}
