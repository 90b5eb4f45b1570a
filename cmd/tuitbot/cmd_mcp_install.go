package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tuitbot/tuitbot/internal/clientcfg"
	"github.com/tuitbot/tuitbot/internal/mcpserver"
)

// serverName is the entry's key in every client's server map; it matches
// the name the MCP server announces.
const serverName = "tuitbot"

// extend adds the commands and completions that live outside the command
// files they attach to.
func (c *cli) extend(root *cobra.Command) {
	if mcp := findCmd(root, "mcp"); mcp != nil {
		mcp.AddCommand(c.mcpInstallCmd(), c.mcpUninstallCmd(), c.mcpHealthcheckCmd())
	}
	c.addCompletions(root)
}

// findCmd walks a path of subcommand names from root.
func findCmd(root *cobra.Command, path ...string) *cobra.Command {
	cur := root
	for _, name := range path {
		var next *cobra.Command
		for _, sub := range cur.Commands() {
			if sub.Name() == name {
				next = sub
				break
			}
		}
		if next == nil {
			return nil
		}
		cur = next
	}
	return cur
}

func clientNames() []string {
	var names []string
	for _, cl := range clientcfg.Clients() {
		names = append(names, string(cl))
	}
	return names
}

type installFlags struct {
	client    string
	transport string
	listen    string
	print     bool
}

func (c *cli) mcpInstallCmd() *cobra.Command {
	var f installFlags
	cmd := &cobra.Command{
		Use:   "install --client " + strings.Join(clientNames(), "|"),
		Short: "Add tuitbot to an MCP client's config file",
		Long: "Write tuitbot's server entry into the client's own config file, in its format and at its\n" +
			"per-OS location, pointing at this binary. Other servers and keys stay; the file is backed up\n" +
			"to FILE.bak (0600) before it changes; running it again changes nothing. --print shows the\n" +
			"entry instead of writing it.\n\n" +
			"The entry lists the default toolset selection (--toolsets default, or the X-MCP-Toolsets\n" +
			"header over HTTP), which fits every client's documented tool limit (Cursor 40, Trae 40,\n" +
			"Windsurf 50 across servers); it says which toolsets it left out and how to add them. Claude\n" +
			"Code keeps the whole profile: its tool search loads a tool's definition only when the agent\n" +
			"needs it.\n\n" +
			"--transport http writes a URL entry for a server you run yourself with\n" +
			"`tuitbot mcp serve --transport http`. The bearer token never goes into the client's file:\n" +
			"the entry reads it from $" + clientcfg.TokenEnvVar + " (VS Code prompts for it once instead).",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return c.runInstall(cmd.Context(), f, false)
		},
	}
	c.addInstallFlags(cmd, &f, true)
	return cmd
}

func (c *cli) mcpUninstallCmd() *cobra.Command {
	var f installFlags
	cmd := &cobra.Command{
		Use:   "uninstall --client " + strings.Join(clientNames(), "|"),
		Short: "Remove tuitbot's entry from an MCP client's config file",
		Long:  "Remove exactly tuitbot's server entry (and, for VS Code, its token prompt); everything else stays.",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return c.runInstall(cmd.Context(), f, true)
		},
	}
	c.addInstallFlags(cmd, &f, false)
	return cmd
}

func (c *cli) addInstallFlags(cmd *cobra.Command, f *installFlags, install bool) {
	cmd.Flags().StringVar(&f.client, "client", "", "the MCP client: "+strings.Join(clientNames(), ", "))
	cmd.Flags().BoolVar(&f.print, "print", false, "show the change instead of writing it")
	_ = cmd.MarkFlagRequired("client")
	_ = cmd.RegisterFlagCompletionFunc("client", cobra.FixedCompletions(clientNames(), cobra.ShellCompDirectiveNoFileComp))
	if install {
		cmd.Flags().StringVar(&f.transport, "transport", "stdio", "stdio (the client starts tuitbot) or http (a URL entry for a server you start with 'tuitbot mcp serve --transport http')")
		cmd.Flags().StringVar(&f.listen, "listen", "127.0.0.1:8765", "with --transport http: the host:port the server listens on")
		_ = cmd.RegisterFlagCompletionFunc("transport", cobra.FixedCompletions([]string{"stdio", "http"}, cobra.ShellCompDirectiveNoFileComp))
	}
}

func (c *cli) runInstall(_ context.Context, f installFlags, uninstall bool) error {
	client, err := clientcfg.ParseClient(f.client)
	if err != nil {
		return usageError{err}
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return fmt.Errorf("find the home directory: %w", err)
	}
	path, err := client.ConfigPath(clientcfg.Env{GOOS: runtime.GOOS, Home: home, Getenv: os.Getenv})
	if err != nil {
		return err
	}
	o := clientcfg.Options{Client: client, Path: path, DryRun: f.print, Server: clientcfg.Server{Name: serverName}}
	var notes []string
	if !uninstall {
		if o.Server, o.TokenFile, notes, err = c.serverEntry(f); err != nil {
			return err
		}
		var more []string
		if o.Server, more, err = withSelection(client, o.Server); err != nil {
			return err
		}
		notes = append(notes, more...)
	}
	var r clientcfg.Result
	if uninstall {
		r, err = clientcfg.Uninstall(o)
	} else {
		r, err = clientcfg.Install(o)
	}
	if errors.Is(err, clientcfg.ErrUnsupported) {
		// The flags ask for an entry this client cannot hold.
		return usageError{err}
	}
	if err != nil {
		return err
	}
	c.report(client, f.print, r, append(notes, r.Notes...))
	return nil
}

// withSelection narrows the entry to the default selection for every
// client but one that defers tools (Claude Code keeps the whole profile:
// its tool search loads a tool's definition only when the agent needs
// it), and says what was left out and how to add it.
func withSelection(client clientcfg.Client, s clientcfg.Server) (clientcfg.Server, []string, error) {
	lim := client.ToolLimit()
	if lim.Defers {
		return s, []string{fmt.Sprintf("The entry lists the whole profile: %s, so the tools it does not use cost little context.", lim.Source)}, nil
	}
	sel, err := mcpserver.SelectionTools(mcpserver.Workflow, mcpserver.Selection{Toolsets: []string{mcpserver.DefaultToolset}}, false)
	if err != nil {
		return s, nil, err
	}
	if lim.Max > 0 && len(sel) > lim.Max {
		return s, nil, fmt.Errorf("the default selection has %d tools, more than %s holds (%d)", len(sel), client, lim.Max)
	}
	var serverSide []string
	switch {
	case s.HTTP && client == clientcfg.Codex:
		// Codex's URL entry is kept to the keys it always had; the server
		// applies the selection to every session instead.
		serverSide = append(serverSide, "Codex's entry carries no selection header: start the server with --toolsets default.")
	case s.HTTP:
		s.Headers = append(s.Headers, [2]string{mcpserver.HeaderToolsets, mcpserver.DefaultToolset})
	default:
		s.Args = append(s.Args, "--toolsets", mcpserver.DefaultToolset)
	}
	bytes, err := mcpserver.ListBytes(sel)
	if err != nil {
		return s, nil, err
	}
	fit := ""
	if lim.Max > 0 {
		fit = fmt.Sprintf(" to fit %s's limit (%s)", client, lim.Source)
	}
	var out, part []string
	in := map[string]bool{}
	for _, t := range sel {
		in[t.Name] = true
	}
	for _, ts := range mcpserver.Toolsets() {
		if ts.Name == "dynamic" {
			continue
		}
		n := 0
		for _, t := range ts.Tools {
			if in[t] {
				n++
			}
		}
		switch n {
		case 0:
			out = append(out, ts.Name)
		case len(ts.Tools):
		default:
			part = append(part, ts.Name)
		}
	}
	how := "the entry's --toolsets argument"
	if s.HTTP && client == clientcfg.Codex {
		how = "the server's --toolsets argument"
	} else if s.HTTP {
		how = "the entry's " + mcpserver.HeaderToolsets + " header"
	}
	notes := []string{
		fmt.Sprintf("The entry lists the default selection: %d tools, %d bytes of tools/list (about %d tokens)%s.", len(sel), bytes, bytes/4, fit),
		fmt.Sprintf("Left out: the toolsets %s, and part of %s. Add one in %s (for example default,engage; `tuitbot mcp serve --help` and docs/tools.md list them with their sizes), or let an agent whose client handles tools/list_changed enable it with enable_toolset.",
			strings.Join(out, ", "), strings.Join(part, ", "), how),
	}
	return s, append(notes, serverSide...), nil
}

// serverEntry describes this binary as the client should start or reach it.
func (c *cli) serverEntry(f installFlags) (s clientcfg.Server, tokenFile string, notes []string, err error) {
	s.Name = serverName
	switch f.transport {
	case "stdio":
		exe, err := os.Executable()
		if err != nil {
			return s, "", nil, fmt.Errorf("find this binary's path: %w", err)
		}
		if exe, err = filepath.Abs(exe); err != nil {
			return s, "", nil, err
		}
		s.Command = exe
		s.Args = []string{"mcp", "serve"}
		if c.configPath != "" {
			p, err := filepath.Abs(c.configPath)
			if err != nil {
				return s, "", nil, err
			}
			s.Args = append(s.Args, "--config", p)
		}
		if c.sandbox {
			s.Args = append(s.Args, "--sandbox")
		}
		if tmp := os.TempDir(); strings.HasPrefix(exe, filepath.Clean(tmp)+string(filepath.Separator)) {
			notes = append(notes, "This binary lives in a temporary directory (`go run`?); the client will not find it later. Install a built binary (go install ./cmd/tuitbot) and run this again.")
		}
		return s, "", notes, nil
	case "http":
		host, port, err := net.SplitHostPort(f.listen)
		if err != nil {
			return s, "", nil, usageError{fmt.Errorf("--listen %q: want host:port such as 127.0.0.1:8765: %w", f.listen, err)}
		}
		if host == "" || host == "0.0.0.0" || host == "::" {
			host = "127.0.0.1"
		}
		s.HTTP = true
		s.URL = "http://" + net.JoinHostPort(host, port) + "/"
		cfg, err := c.loadConfig()
		if err != nil {
			return s, "", nil, err
		}
		if c.sandbox {
			c.sandboxHome(cfg)
		}
		tokenFile = filepath.Join(cfg.Home, "mcp_token")
		serve := "tuitbot mcp serve --transport http --listen " + f.listen
		if c.sandbox {
			serve += " --sandbox"
		}
		notes = append(notes, "Start the server yourself: "+serve)
		if !f.print {
			// The server would create it on first start; creating it now
			// lets the user hand it to the client before that. It is read
			// only to create it, never printed.
			if _, err := mcpserver.LoadOrCreateToken(tokenFile, true); err != nil {
				return s, "", nil, err
			}
		}
		return s, tokenFile, notes, nil
	}
	return s, "", nil, usageError{fmt.Errorf("--transport %q: allowed values: stdio, http", f.transport)}
}

func (c *cli) report(client clientcfg.Client, dry bool, r clientcfg.Result, notes []string) {
	w := c.stdout
	switch r.Action {
	case clientcfg.AlreadyInstalled:
		fmt.Fprintf(w, "%s: already installed in %s; nothing changed\n", client, r.Path)
	case clientcfg.NotInstalled:
		fmt.Fprintf(w, "%s: not installed in %s; nothing changed\n", client, r.Path)
	default:
		// The sentence names the entry: "removed FILE" would read as if the
		// whole file had gone.
		say := map[clientcfg.Action]struct{ would, did string }{
			clientcfg.Installed: {"add the " + serverName + " entry to", "added the " + serverName + " entry to"},
			clientcfg.Updated:   {"update the " + serverName + " entry in", "updated the " + serverName + " entry in"},
			clientcfg.Removed:   {"remove the " + serverName + " entry from", "removed the " + serverName + " entry from"},
		}[r.Action]
		if dry {
			fmt.Fprintf(w, "%s: would %s %s:\n\n%s\n", client, say.would, r.Path, strings.TrimRight(r.Snippet, "\n"))
			fmt.Fprintln(w, "\nNothing was written (--print).")
		} else {
			fmt.Fprintf(w, "%s: %s %s\n", client, say.did, r.Path)
			if r.Backup != "" {
				fmt.Fprintf(w, "backup of the previous file: %s\n", r.Backup)
			}
			if r.Action != clientcfg.Removed {
				fmt.Fprintf(w, "Restart %s to load it.\n", client)
			}
		}
	}
	if r.Action != clientcfg.Removed && r.Action != clientcfg.NotInstalled {
		for _, n := range notes {
			fmt.Fprintln(w, n)
		}
	}
}

// mcpHealthcheckCmd probes a running HTTP server's /healthz, for container
// HEALTHCHECKs: distroless images have no curl.
func (c *cli) mcpHealthcheckCmd() *cobra.Command {
	var url string
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "healthcheck",
		Short: "Exit 0 when the HTTP transport's GET /healthz answers ok",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, cancel := context.WithTimeout(cmd.Context(), timeout)
			defer cancel()
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
			if err != nil {
				return usageError{fmt.Errorf("--url: %w", err)}
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				return fmt.Errorf("healthcheck: %w", err)
			}
			defer resp.Body.Close()
			body, err := io.ReadAll(io.LimitReader(resp.Body, 1024))
			if err != nil {
				return fmt.Errorf("healthcheck: %w", err)
			}
			if resp.StatusCode != http.StatusOK || strings.TrimSpace(string(body)) != "ok" {
				return errors.New("healthcheck: " + resp.Status + ": " + strings.TrimSpace(string(body)))
			}
			fmt.Fprintln(c.stdout, "ok")
			return nil
		},
	}
	cmd.Flags().StringVar(&url, "url", "http://127.0.0.1:8765/healthz", "the health endpoint")
	cmd.Flags().DurationVar(&timeout, "timeout", 3*time.Second, "give up after this long")
	return cmd
}
