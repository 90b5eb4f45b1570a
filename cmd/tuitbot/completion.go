package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tuitbot/tuitbot/internal/app"
	"github.com/tuitbot/tuitbot/internal/mcpserver"
)

// addCompletions makes tool names (mcp serve --tools/--exclude-tools) and
// pending approval ids (approve show/approve/reject/edit) complete from
// what this installation actually has. Shell scripts come from cobra's
// `tuitbot completion bash|zsh|fish|powershell`.
func (c *cli) addCompletions(root *cobra.Command) {
	if serve := findCmd(root, "mcp", "serve"); serve != nil {
		for _, flag := range []string{"tools", "exclude-tools"} {
			_ = serve.RegisterFlagCompletionFunc(flag, completeToolNames)
		}
		_ = serve.RegisterFlagCompletionFunc("toolsets", cobra.FixedCompletions(mcpserver.ToolsetNames(), cobra.ShellCompDirectiveNoFileComp))
		_ = serve.RegisterFlagCompletionFunc("profile", cobra.FixedCompletions([]string{"workflow", "full", "readonly", "api-readonly"}, cobra.ShellCompDirectiveNoFileComp))
		_ = serve.RegisterFlagCompletionFunc("transport", cobra.FixedCompletions([]string{"stdio", "http"}, cobra.ShellCompDirectiveNoFileComp))
	}
	for _, name := range []string{"show", "approve", "reject", "edit"} {
		if sub := findCmd(root, "approve", name); sub != nil {
			sub.ValidArgsFunction = c.completeApprovalIDs
		}
	}
}

// completeToolNames completes the last element of a comma-separated list,
// leaving out names already in it; --profile narrows the choice.
func completeToolNames(cmd *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	prefix, partial := "", toComplete
	if i := strings.LastIndex(toComplete, ","); i >= 0 {
		prefix, partial = toComplete[:i+1], toComplete[i+1:]
	}
	have := map[string]bool{}
	for _, n := range strings.Split(prefix, ",") {
		have[n] = true
	}
	var profile mcpserver.Profile
	if p, err := cmd.Flags().GetString("profile"); err == nil && p != "" {
		if parsed, err := mcpserver.ParseProfile(p); err == nil {
			profile = parsed
		}
	}
	var out []string
	for _, t := range mcpserver.Registry() {
		if have[t.Name] || t.OnDemand || !strings.HasPrefix(t.Name, partial) || (profile != "" && !t.In(profile)) {
			continue
		}
		out = append(out, prefix+t.Name+"\t"+t.Title)
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// completeApprovalIDs lists the pending items with a preview of each. It
// never creates a home or a database: with none there is nothing to list.
func (c *cli) completeApprovalIDs(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	cfg, err := c.loadConfig()
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	if c.sandbox {
		c.sandboxHome(cfg)
	}
	if _, err := os.Stat(cfg.DBFile()); err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	ctx, cancel := context.WithTimeout(cmdContext(cmd), 5*time.Second)
	defer cancel()
	// Completion output is parsed by the shell: the app logs nowhere.
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	a, err := app.New(ctx, cfg, app.Options{Logger: log, RequireDB: true, AcceptNewDatabase: false})
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	defer a.Close()
	g, err := a.RequireGateway()
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	items, err := g.PendingPage(ctx, 200, 0)
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []string
	for _, it := range items {
		id := strconv.FormatInt(it.ID, 10)
		if strings.HasPrefix(id, toComplete) {
			out = append(out, fmt.Sprintf("%s\t%s %s", id, it.Tool, preview(it.Params)))
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

func cmdContext(cmd *cobra.Command) context.Context {
	if ctx := cmd.Context(); ctx != nil {
		return ctx
	}
	return context.Background()
}
