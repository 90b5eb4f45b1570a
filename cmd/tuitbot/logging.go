package main

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/tuitbot/tuitbot/internal/config"
)

// logSink opens where the logs go: stderr, or --log-file. The file is
// opened once per process, for appending, readable by the owner only (a log
// names accounts and posts even though it never holds a credential).
func (c *cli) logSink() (io.Writer, error) {
	if c.logFile == "" {
		// Logs go to stderr only: stdout belongs to the MCP transport.
		return c.stderr, nil
	}
	if c.logOut != nil {
		return c.logOut, nil
	}
	if dir := filepath.Dir(c.logFile); dir != "" {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("--log-file %s: %w", c.logFile, err)
		}
	}
	f, err := os.OpenFile(c.logFile, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("--log-file %s: %w", c.logFile, err)
	}
	c.logOut = f
	return f, nil
}

// logHandler builds the handler --log-format names. Every record passes
// c.secrets, which knows the configured credentials and masks any attribute
// named like one.
func (c *cli) logHandler(w io.Writer, level slog.Level, cfg *config.Config) (slog.Handler, error) {
	if cfg != nil && cfg != c.secretsOf {
		// Every credential the configuration holds (keys, an ntfy topic) or
		// names in the environment (the LLM key, each channel's secrets).
		c.secrets.Add(cfg.SecretValues(os.Getenv)...)
		c.secretsOf = cfg
	}
	opts := &slog.HandlerOptions{Level: level, ReplaceAttr: c.secrets.ReplaceAttr}
	switch strings.ToLower(c.logFormat) {
	case "", "text":
		return slog.NewTextHandler(w, opts), nil
	case "json":
		return slog.NewJSONHandler(w, opts), nil
	}
	return nil, usageError{fmt.Errorf("--log-format %q: allowed values: text, json", c.logFormat)}
}
