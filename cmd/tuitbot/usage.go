package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

// argHints say where the value a placeholder in a command's Use line comes
// from, so a missing argument is answered with the command that lists it.
var argHints = map[string]string{
	"ID":             "see `tuitbot approve list`",
	"CORRELATION_ID": "see `tuitbot audit recent`",
}

// strictUsage makes every way of calling a command wrongly a usage error
// (exit 2) that says what to do instead. Cobra on its own prints the help
// and exits 0 for an unknown subcommand of a command group (`tuitbot
// approve aprove 1`), and answers a missing argument with a bare count
// (exit 1); a script or an agent reading either would think it worked or
// not know how to fix it.
func strictUsage(root *cobra.Command) {
	var walk func(cmd *cobra.Command)
	walk = func(cmd *cobra.Command) {
		if cmd.SuggestionsMinimumDistance <= 0 {
			cmd.SuggestionsMinimumDistance = 2
		}
		switch {
		case cmd.HasSubCommands() && !cmd.Runnable():
			cmd.Args = unknownSubcommand
			cmd.RunE = func(cmd *cobra.Command, _ []string) error { return cmd.Help() }
		case cmd.HasSubCommands() && cmd == root:
			cmd.Args = unknownSubcommand
		case cmd.Args != nil:
			cmd.Args = hintedArgs(cmd.Args)
		}
		for _, sub := range cmd.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// unknownSubcommand accepts only no arguments: a command group called with
// one names a subcommand that does not exist.
func unknownSubcommand(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
	if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
		msg += fmt.Sprintf("; did you mean `%s %s`?", cmd.CommandPath(), strings.Join(s, "` or `"+cmd.CommandPath()+" "))
	} else {
		msg += fmt.Sprintf("; run `%s --help` for the list", cmd.CommandPath())
	}
	return usageError{fmt.Errorf("%s", msg)}
}

// hintedArgs turns an argument count error into a usage error that names
// what is missing and where to find it.
func hintedArgs(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		err := check(cmd, args)
		if err == nil {
			return nil
		}
		var need []string
		for _, w := range strings.Fields(cmd.Use)[1:] {
			if w == strings.ToUpper(w) && strings.Trim(w, "ABCDEFGHIJKLMNOPQRSTUVWXYZ_") == "" {
				need = append(need, w)
			}
		}
		if len(args) < len(need) {
			missing := need[len(args)]
			msg := fmt.Sprintf("`%s` needs %s", strings.TrimPrefix(cmd.CommandPath(), "tuitbot "), article(missing))
			if h := argHints[missing]; h != "" {
				msg += ": " + h
			}
			return usageError{fmt.Errorf("%s (usage: %s)", msg, cmd.UseLine())}
		}
		return usageError{fmt.Errorf("%w (usage: %s)", err, cmd.UseLine())}
	}
}

// article names a placeholder the way the hint reads: "an id", "a
// correlation id".
func article(placeholder string) string {
	name := strings.ToLower(strings.ReplaceAll(placeholder, "_", " "))
	if strings.ContainsRune("aeiou", rune(name[0])) {
		return "an " + name
	}
	return "a " + name
}
