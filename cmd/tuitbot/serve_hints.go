package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"

	"github.com/tuitbot/tuitbot/internal/mcpserver"
)

// stdinIsTerminal reports whether r is an interactive terminal. /dev/null is
// a character device too, and is what a client-less process (a test, a
// service) gets, so it does not count.
func stdinIsTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	if err != nil || st.Mode()&os.ModeCharDevice == 0 {
		return false
	}
	if null, err := os.Stat(os.DevNull); err == nil && os.SameFile(st, null) {
		return false
	}
	return true
}

// stdioTerminalHint is the one line a person who started the stdio server
// by hand sees: it is waiting for a program, not for them.
func stdioTerminalHint(sandbox bool) string {
	flag := ""
	if sandbox {
		flag = " --sandbox"
	}
	return "tuitbot mcp serve is waiting for an MCP client on stdin (JSON-RPC, one message per line); it is not interactive. " +
		"Let the client start it: `tuitbot mcp install --client claude-code" + flag + "` (or cursor, vscode, …), " +
		"or serve HTTP with `tuitbot mcp serve --transport http" + flag + "`. Ctrl-C stops it."
}

// knownTools refuses a tool name the registry does not have, naming the
// flag or key it came from: a typo must not silently widen or narrow what
// the server offers.
func knownTools(reg []*mcpserver.Tool, from string, names []string) error {
	for _, n := range names {
		if !slices.ContainsFunc(reg, func(t *mcpserver.Tool) bool { return t.Name == n }) {
			return fmt.Errorf("%s: unknown tool %q; `tuitbot mcp manifest` lists every tool", from, n)
		}
	}
	return nil
}

// checkToolSelection refuses a --tools list that leaves the profile with
// nothing to serve: a server with no tools would start and look healthy
// while every call fails.
func checkToolSelection(reg []*mcpserver.Tool, p mcpserver.Profile, tools, exclude []string) error {
	if len(tools) == 0 {
		return nil
	}
	var outside []string
	served := 0
	for _, t := range reg {
		if !slices.Contains(tools, t.Name) {
			continue
		}
		if !t.In(p) {
			outside = append(outside, t.Name)
			continue
		}
		if !slices.Contains(exclude, t.Name) {
			served++
		}
	}
	if served > 0 {
		return nil
	}
	if len(outside) > 0 {
		return fmt.Errorf("--tools %s: not in profile %s, so the server would serve no tools; pick tools of that profile (`tuitbot mcp manifest --profile %s`) or another --profile",
			strings.Join(outside, ","), p, p)
	}
	// Every name is known (knownTools), so excluded ones leave nothing.
	return fmt.Errorf("--tools %s are all excluded (--exclude-tools or mcp.exclude_tools), so the server would serve no tools", strings.Join(tools, ","))
}

// checkToolsets refuses a --toolsets selection that leaves the profile with
// nothing to serve, for the reason checkToolSelection gives.
func checkToolsets(reg []*mcpserver.Tool, p mcpserver.Profile, toolsets, tools, exclude []string) error {
	if len(toolsets) == 0 {
		return nil
	}
	sel, err := mcpserver.Select(reg, mcpserver.Options{Profile: p, Toolsets: toolsets, Tools: tools, ExcludeTools: exclude})
	if err != nil {
		return err
	}
	if len(sel) == 0 {
		return fmt.Errorf("--toolsets %s: none of their tools is in profile %s (or all are excluded), so the server would serve no tools", strings.Join(toolsets, ","), p)
	}
	return nil
}

// stopIsNotAnError is a log handler that records the MCP SDK's "server run
// cancelled" (what it logs when Ctrl-C or SIGTERM ends a stdio session) as
// the ordinary stop it is. An ERROR line there sends operators looking for
// a fault that did not happen; every other record passes unchanged.
type stopIsNotAnError struct{ slog.Handler }

func (h stopIsNotAnError) Handle(ctx context.Context, r slog.Record) error {
	if r.Level == slog.LevelError && r.Message == "server run cancelled" {
		cancelled := true
		r.Attrs(func(a slog.Attr) bool {
			if a.Key == "error" {
				err, ok := a.Value.Any().(error)
				cancelled = ok && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded))
			}
			return true
		})
		if cancelled {
			stopped := slog.NewRecord(r.Time, slog.LevelInfo, "mcp server stopped", r.PC)
			if !h.Enabled(ctx, slog.LevelInfo) {
				return nil
			}
			return h.Handler.Handle(ctx, stopped)
		}
	}
	return h.Handler.Handle(ctx, r)
}

func (h stopIsNotAnError) WithAttrs(attrs []slog.Attr) slog.Handler {
	return stopIsNotAnError{h.Handler.WithAttrs(attrs)}
}

func (h stopIsNotAnError) WithGroup(name string) slog.Handler {
	return stopIsNotAnError{h.Handler.WithGroup(name)}
}
