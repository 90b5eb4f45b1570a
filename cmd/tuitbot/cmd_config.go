package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tuitbot/tuitbot/internal/app"
	"github.com/tuitbot/tuitbot/internal/config"
	"github.com/tuitbot/tuitbot/internal/xrules"
)

func (c *cli) configCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Create, show and validate the configuration",
	}
	var force bool
	initCmd := &cobra.Command{
		Use:   "init",
		Short: "Write a commented example config file (never overwrites without --force)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			path := c.configPath
			if path == "" {
				home, err := config.HomeDir(os.Getenv)
				if err != nil {
					return err
				}
				path = filepath.Join(home, "config.toml")
			}
			if err := config.WriteExample(path, force); err != nil {
				return err
			}
			fmt.Fprintf(c.stdout, "wrote %s\nnext: set [x_api].client_id, then run `tuitbot auth`; or try `tuitbot mcp serve --sandbox`\n", path)
			return nil
		},
	}
	initCmd.Flags().BoolVar(&force, "force", false, "overwrite an existing file")

	var asJSON bool
	show := &cobra.Command{
		Use:   "show",
		Short: "Print the effective configuration with secrets masked",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, src, err := config.Load(config.LoadOptions{Path: c.configPath})
			if err != nil {
				return configError(err)
			}
			if c.sandbox {
				// Nothing goes to x.com in the sandbox: say where it goes.
				c.sandboxHome(cfg)
				*cfg = cfg.InSandbox(app.SandboxAddress(cfg))
			}
			if asJSON {
				b, err := config.MaskedJSON(cfg)
				if err != nil {
					return err
				}
				fmt.Fprintln(c.stdout, string(b))
				return nil
			}
			file := src.File
			if file == "" {
				file = "(none; defaults)"
			}
			fmt.Fprintf(c.stdout, "# file: %s\n", file)
			for _, e := range src.EnvApplied {
				fmt.Fprintf(c.stdout, "# overridden by %s\n", e)
			}
			out, err := config.MaskedTOML(cfg)
			if err != nil {
				return err
			}
			fmt.Fprint(c.stdout, out)
			return nil
		},
	}
	show.Flags().BoolVar(&asJSON, "json", false, "print JSON")

	var validateJSON *bool
	validate := &cobra.Command{
		Use:   "validate",
		Short: "Validate the configuration, including policy rules",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := c.loadConfig()
			if err != nil {
				return err
			}
			if err := app.ValidateAll(cfg); err != nil {
				return configError(err)
			}
			warnings := append(cfg.NotifyWarnings(), app.PolicyWarnings(cfg)...)
			if warnings == nil {
				warnings = []string{}
			}
			return c.answer(*validateJSON, ConfigCheck{Valid: true, Warnings: warnings}, func(w io.Writer) {
				for _, warning := range warnings {
					fmt.Fprintln(w, "warning:", warning)
				}
				fmt.Fprintln(w, "configuration is valid")
			})
		},
	}
	validateJSON = jsonFlag(validate, "valid, warnings")
	cmd.AddCommand(initCmd, show, validate)
	return cmd
}

func (c *cli) doctorCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Check config, database, token, LLM and X, one line each",
		Long: "Check config, database, token, LLM and X, one line each: name, status (ok, degraded,\n" +
			"not_configured, error) and what to do. Exit status: 0 when nothing is degraded or failing\n" +
			"(not_configured is fine), 3 when something is degraded (tuitbot works, but mutations may be\n" +
			"refused), 1 when a check failed.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := c.loadConfig()
			if err != nil {
				if asJSON {
					_ = writeJSON(c.stdout, doctorReport(nil, err))
				} else {
					fmt.Fprintf(c.stdout, "%-9s %-15s %v\n", "config", "error", err)
				}
				return err
			}
			log, err := c.logger(cfg)
			if err != nil {
				return err
			}
			a, err := c.build(cmd.Context(), cfg, app.Options{Logger: log})
			if err != nil {
				return err
			}
			defer a.Close()
			rep := doctorReport(a.Doctor(cmd.Context()), nil)
			rep.Access = a.XAccess()
			if asJSON {
				if err := writeJSON(c.stdout, rep); err != nil {
					return err
				}
			} else {
				for _, ch := range rep.Checks {
					fmt.Fprintf(c.stdout, "%-9s %-15s %s\n", ch.Name, ch.Status, ch.Message)
				}
				// One line per account, in the checks' shape: what the
				// account's X access allows and costs is information, not a
				// verdict, so its status is ok.
				for _, l := range rep.Access {
					fmt.Fprintf(c.stdout, "%-9s %-15s %s Prices: %s.\n", "x_access."+l.Account, "ok", l.Allows, formatPrices(l.Prices))
				}
			}
			switch rep.Status {
			case "error":
				return fmt.Errorf("doctor found errors")
			case "degraded":
				return degradedError{fmt.Errorf("doctor found degraded services: %s", strings.Join(rep.degraded(), ", "))}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the checks as JSON (see README: machine-readable output)")
	return cmd
}

// formatPrices lists prices as "a post $0.015, ...".
func formatPrices(ps []xrules.Price) string {
	parts := make([]string, len(ps))
	for i, p := range ps {
		parts[i] = fmt.Sprintf("%s $%.3f", p.What, p.USD)
	}
	return strings.Join(parts, ", ")
}
