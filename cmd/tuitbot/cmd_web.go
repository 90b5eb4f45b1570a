package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tuitbot/tuitbot/internal/app"
	"github.com/tuitbot/tuitbot/internal/autopilot"
	"github.com/tuitbot/tuitbot/internal/config"
	"github.com/tuitbot/tuitbot/internal/gateway"
	"github.com/tuitbot/tuitbot/internal/web"
)

func (c *cli) webCmd() *cobra.Command {
	var listen, tlsCert, tlsKey string
	var behindProxy []string
	cmd := &cobra.Command{
		Use:   "web",
		Short: "Review the approval queue, audit trail and analytics in the browser",
		Long: "Serve a local review page: approve, edit or reject what agents queued, read the audit trail\n" +
			"(roll back, resolve unknown outcomes), analytics, the autopilot's state and the settings.\n\n" +
			"The first line on stdout is a one-time login URL; opening it sets a session cookie and the\n" +
			"URL stops working. Restart the command for a new one. The server listens on loopback;\n" +
			"approving replays exactly the queued call through the gateway, as `tuitbot approve` does,\n" +
			"with reviewer \"web\". With --sandbox it shares the emulator world of `mcp serve --sandbox`.\n\n" +
			"To reach it from a phone, --listen on another address needs TLS (--tls-cert and --tls-key)\n" +
			"or a reverse proxy in front (--behind-proxy CIDR, whose X-Forwarded-* headers alone are\n" +
			"trusted). It also serves the signed approval links (/a/) when [approval_links] is enabled.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			proxies, err := parseProxies(behindProxy)
			if err != nil {
				return err
			}
			if (tlsCert == "") != (tlsKey == "") {
				return usageError{errors.New("--tls-cert and --tls-key go together: give both files")}
			}
			withTLS := tlsCert != ""
			if err := checkListen("--listen", listen, withTLS, proxies); err != nil {
				return err
			}
			a, err := c.openApp(cmd)
			if err != nil {
				return err
			}
			defer a.Close()
			extra := a.Cfg.ApprovalLinks.Listen
			if extra != "" && a.Links() != nil {
				if err := checkListen("approval_links.listen", extra, withTLS, proxies); err != nil {
					return err
				}
			}
			if err := a.StartNotifications(ctx); err != nil {
				return err
			}
			d, err := webDeps(a)
			if err != nil {
				return err
			}
			if err := c.seedDemo(cmd.Context(), a, d); err != nil {
				return err
			}
			srv, err := web.New(d, web.Options{TrustedProxies: proxies})
			if err != nil {
				return err
			}
			if withTLS {
				if err := srv.UseTLS(tlsCert, tlsKey); err != nil {
					return usageError{err}
				}
			}
			ln, err := srv.Listen(listen)
			if err != nil {
				return err
			}
			// The URL holds the login token: stdout only, never the log.
			fmt.Fprintln(c.stdout, srv.LoginURL())
			if u := srv.PublicLoginURL(); u != "" {
				fmt.Fprintln(c.stdout, "or, from your phone:", u)
			}
			a.Log.Info("review page listening; open the login URL printed on stdout", "addr", ln.Addr().String(), "sandbox", c.sandbox, "tls", withTLS)
			if extra == "" || a.Links() == nil {
				return srv.Serve(ctx, ln)
			}
			// approval_links.listen serves the links alone, nothing else of
			// the page.
			lln, err := linksListener(extra, withTLS, proxies, a.Log)
			if err != nil {
				return err
			}
			errs := make(chan error, 2)
			go func() { errs <- srv.Serve(ctx, ln) }()
			go func() { errs <- srv.ServeLinks(ctx, lln) }()
			err = <-errs
			if err2 := <-errs; err == nil {
				err = err2
			}
			return err
		},
	}
	cmd.Flags().StringVar(&listen, "listen", "127.0.0.1:8767", "host:port (port 0 picks a free one); another address than loopback needs --tls-cert/--tls-key or --behind-proxy")
	cmd.Flags().StringVar(&tlsCert, "tls-cert", "", "serve HTTPS with this certificate file (PEM)")
	cmd.Flags().StringVar(&tlsKey, "tls-key", "", "the certificate's private key file (PEM)")
	cmd.Flags().StringSliceVar(&behindProxy, "behind-proxy", nil, "CIDR of the reverse proxy in front (e.g. 127.0.0.1/32); X-Forwarded-* is trusted from it alone")
	return cmd
}

// linksListener listens on approval_links.listen, under the same rule as
// the page's own address.
func linksListener(addr string, withTLS bool, proxies []*net.IPNet, log *slog.Logger) (net.Listener, error) {
	if err := checkListen("approval_links.listen", addr, withTLS, proxies); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("approval_links.listen %s: %w", addr, err)
	}
	log.Info("approval links listening", "addr", ln.Addr().String())
	return ln, nil
}

// checkListen allows a non-loopback address only with TLS or behind a
// trusted proxy: a review page or a link on the network in clear text,
// unknown to any proxy, would hand approvals to whoever sees the traffic.
func checkListen(flag, addr string, withTLS bool, proxies []*net.IPNet) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return usageError{fmt.Errorf("%s %q: want host:port: %w", flag, addr, err)}
	}
	if ip := net.ParseIP(host); host == "localhost" || (ip != nil && ip.IsLoopback()) {
		return nil
	}
	if withTLS || len(proxies) > 0 {
		return nil
	}
	return usageError{fmt.Errorf("%s %q is not a loopback address: serve it over TLS (--tls-cert FILE --tls-key FILE) "+
		"or behind a reverse proxy that terminates TLS (--behind-proxy CIDR, e.g. Tailscale Serve or Caddy on this machine: --behind-proxy 127.0.0.1/32)", flag, addr)}
}

// parseProxies reads --behind-proxy.
func parseProxies(list []string) ([]*net.IPNet, error) {
	var out []*net.IPNet
	for _, s := range list {
		_, n, err := net.ParseCIDR(strings.TrimSpace(s))
		if err != nil {
			return nil, usageError{fmt.Errorf("--behind-proxy %q: want a CIDR such as 127.0.0.1/32 or 100.64.0.0/10", s)}
		}
		out = append(out, n)
	}
	return out, nil
}

// webDeps hands the review page the services it reads and acts through,
// for every account of the home (the selected one first).
func webDeps(a *app.App) (web.Deps, error) {
	if _, err := a.RequireGateway(); err != nil {
		return web.Deps{}, err
	}
	d := web.Deps{Log: a.Log, Now: a.Now, Warnings: app.PolicyWarnings(a.Cfg), Links: a.Links(), PublicBaseURL: a.Cfg.Notify.PublicBaseURL}
	if o := a.Outbox(); o != nil {
		d.Notified = o.LastNotified
	}
	shown := a.Cfg
	if a.Sim != nil {
		in := a.Cfg.InSandbox(a.Sim.URL)
		shown, d.SandboxURL = &in, a.Sim.URL
	}
	if masked, err := config.MaskedTOML(shown); err == nil {
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
	acc.Queue = a.Cfg.QueuePolicy
	if r, err := a.Autopilot(autopilot.Options{}); err == nil {
		acc.Autopilot, acc.Hold = r.Status, r.Hold
	}
	disc, _ := a.Discovery()
	acc.Posts = web.LookupPosts(disc, a.XClient)
	acc.Users = web.LookupUsers(a.XClient)
	acc.Sandbox = a.Sim != nil
	acc.CheckHandOffs = func(ctx context.Context) ([]gateway.HandOff, error) { return a.CheckHandOffs(ctx, true) }
	acc.Access = a.XAccessLevel()
	acc.OptOuts = a.OptOutList
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
