package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
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
// approve aprove 1`), and answers a missing argument with a bare count and
// a missing required flag with a bare list (exit 1); a script or an agent
// reading either would think it worked or not know how to fix it.
func strictUsage(root *cobra.Command) {
	// Cobra adds its help and completion commands only when it executes;
	// adding them now holds them to the same rules (`tuitbot completion
	// tcsh`, `tuitbot help aprove`).
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	if help := findCmd(root, "help"); help != nil {
		help.Args = helpTopic
	}
	var walk func(cmd *cobra.Command)
	walk = func(cmd *cobra.Command) {
		if cmd.SuggestionsMinimumDistance <= 0 {
			cmd.SuggestionsMinimumDistance = 2
		}
		switch {
		case cmd.HasSubCommands() && !cmd.Runnable():
			cmd.Args = unknownSubcommand
			cmd.RunE = func(cmd *cobra.Command, _ []string) error { return cmd.Help() }
		case cmd.HasSubCommands():
			cmd.Args = unknownSubcommand
		default:
			cmd.Args = hintedArgs(cmd.Args)
		}
		cmd.Args = withRequiredFlags(cmd.Args)
		for _, sub := range cmd.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// helpTopic accepts the path of an existing command: `tuitbot help aprove`
// is the same mistake as `tuitbot aprove`.
func helpTopic(cmd *cobra.Command, args []string) error {
	parent := cmd.Root()
	for i, name := range args {
		next := findCmd(parent, name)
		if next == nil {
			return unknownSubcommand(parent, args[i:i+1])
		}
		parent = next
	}
	return nil
}

// withRequiredFlags adds cobra's required-flag and flag-group checks to the
// argument check, which runs before cobra's own and so can name the flag
// as a usage error.
func withRequiredFlags(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := check(cmd, args); err != nil {
			return err
		}
		var missing []string
		cmd.Flags().VisitAll(func(f *pflag.Flag) {
			if req := f.Annotations[cobra.BashCompOneRequiredFlag]; len(req) > 0 && req[0] == "true" && !f.Changed {
				missing = append(missing, fmt.Sprintf("--%s (%s)", f.Name, f.Usage))
			}
		})
		if len(missing) > 0 {
			return usageError{fmt.Errorf("`%s` needs %s", strings.TrimPrefix(cmd.CommandPath(), "tuitbot "), strings.Join(missing, " and "))}
		}
		if err := cmd.ValidateFlagGroups(); err != nil {
			return usageError{fmt.Errorf("%w (usage: %s)", err, cmd.UseLine())}
		}
		return nil
	}
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
	if check == nil {
		// What cobra does for a command that names no rule.
		check = cobra.ArbitraryArgs
	}
	return func(cmd *cobra.Command, args []string) error {
		err := check(cmd, args)
		var ue usageError
		if err == nil || errors.As(err, &ue) {
			return err
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
	// "a user", "a URL": a u that sounds like "you" takes "a".
	sounds := strings.ContainsRune("aeiou", rune(name[0])) && !strings.HasPrefix(name, "us") && !strings.HasPrefix(name, "ur")
	if sounds {
		return "an " + name
	}
	return "a " + name
}
