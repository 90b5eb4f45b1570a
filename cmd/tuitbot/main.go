// Command tuitbot lets AI agents work an X account safely: an MCP server and
// CLI whose every mutation passes one policy gateway.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/tuitbot/tuitbot/internal/redact"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	root := newRoot(os.Stdout, os.Stderr, os.Stdin)
	if err := root.ExecuteContext(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "error:", redact.URLCredentials(err.Error()))
		os.Exit(exitCode(err))
	}
}
