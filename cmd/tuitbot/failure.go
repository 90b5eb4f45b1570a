package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync/atomic"

	"github.com/spf13/cobra"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/redact"
)

// run executes one command line and answers its failure, if any, the way
// the command was asked to answer. It returns the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer, stdin io.Reader) int {
	out := &watchedWriter{w: stdout}
	root := newRootFor(args, out, stderr, stdin)
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return 0
	}
	f := describeFailure(cmd, args, err)
	// A command that printed its JSON document before failing (doctor
	// prints its report, then exits 1) has answered on stdout already: a
	// second document there would break a reader expecting exactly one.
	if f.json && !out.written.Load() {
		if werr := writeJSON(stdout, struct {
			Error failureBody `json:"error"`
		}{f.body}); werr == nil {
			return exitCode(err)
		}
	}
	fmt.Fprintln(stderr, "error:", f.text)
	if f.body.Hint != "" {
		fmt.Fprintln(stderr, "hint:", f.body.Hint)
	}
	return exitCode(err)
}

// failureBody is the error object a --json command prints on stdout:
// {"error": {"code", "message", "hint"}}.
type failureBody struct {
	// Code is an error code of docs/errors.md, or, when the failure has
	// none, the exit code's name: usage, degraded or error.
	Code    string `json:"code"`
	Message string `json:"message"`
	// Hint is what to do about it; empty when there is nothing to add.
	Hint string `json:"hint"`
}

// failure is one failed command, ready to print.
type failure struct {
	json bool
	body failureBody
	// text is the line for stderr: the error as before, minus the hints.
	text string
}

// describeFailure splits err into code, message and the hints that apply to
// how the command was called: a hint whose flag was given is left out, so
// no answer ever asks for a flag the command already has.
func describeFailure(cmd *cobra.Command, args []string, err error) failure {
	given := func(flag string) bool { return flagGiven(cmd, args, flag) }
	text := err.Error()
	var hints []apperr.Hint
	for _, ae := range appErrors(err) {
		// The chain's text holds each error's hints where its Error put
		// them; they are shown apart, filtered, instead.
		text = strings.Replace(text, ae.Error(), ae.Unhinted(), 1)
		hints = append(hints, ae.Hints...)
	}
	text = redact.URLCredentials(text)
	code := failureCode(err)
	hint := apperr.JoinHints(apperr.Applicable(hints, given))
	if hint == "" && exitCode(err) == 2 && cmd != nil && !strings.Contains(text, "--help") {
		hint = "see `" + cmd.CommandPath() + " --help`"
	}
	return failure{
		json: flagGiven(cmd, args, "--json"),
		body: failureBody{Code: code, Message: strings.TrimPrefix(text, code+": "), Hint: redact.URLCredentials(hint)},
		text: text,
	}
}

// failureCode is the code of the outermost coded error in err, else the
// name of its exit code.
func failureCode(err error) string {
	var ae *apperr.Error
	if errors.As(err, &ae) {
		return string(ae.Code)
	}
	switch exitCode(err) {
	case 2:
		return "usage"
	case 3:
		return "degraded"
	}
	return "error"
}

// appErrors returns every coded error in err's tree, outermost first.
func appErrors(err error) []*apperr.Error {
	var out []*apperr.Error
	var walk func(error)
	walk = func(e error) {
		if e == nil {
			return
		}
		if ae, ok := e.(*apperr.Error); ok {
			out = append(out, ae)
		}
		switch u := e.(type) {
		case interface{ Unwrap() []error }:
			for _, inner := range u.Unwrap() {
				walk(inner)
			}
		case interface{ Unwrap() error }:
			walk(u.Unwrap())
		}
	}
	walk(err)
	return out
}

// flagGiven reports whether the command line set flag. The parsed flags
// answer first; the raw arguments answer when parsing stopped before the
// flag (an unknown flag earlier on the line) or found no command at all.
func flagGiven(cmd *cobra.Command, args []string, flag string) bool {
	name := strings.TrimPrefix(flag, "--")
	if cmd != nil {
		if f := cmd.Flags().Lookup(name); f != nil && f.Changed {
			return f.Value.String() != "false"
		}
	}
	for _, a := range args {
		switch {
		case a == "--":
			return false
		case a == flag, a == flag+"=true":
			return true
		}
	}
	return false
}

// watchedWriter remembers whether anything was written through it. A
// server writes from other goroutines (the review page's login URL).
type watchedWriter struct {
	w       io.Writer
	written atomic.Bool
}

func (w *watchedWriter) Write(p []byte) (int, error) {
	if len(p) > 0 {
		w.written.Store(true)
	}
	return w.w.Write(p)
}
