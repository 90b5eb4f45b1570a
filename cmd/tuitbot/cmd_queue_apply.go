package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tuitbot/tuitbot/internal/app"
	"github.com/tuitbot/tuitbot/internal/config"
	"github.com/tuitbot/tuitbot/internal/postmetrics"
	"github.com/tuitbot/tuitbot/internal/queue"
	"github.com/tuitbot/tuitbot/internal/workflow"
)

// applySuggestionCmd writes suggest_queue_slots' slots into the
// configuration file: the human step an agent cannot take.
func (c *cli) applySuggestionCmd() *cobra.Command {
	var yes, dryRun, merge bool
	var count int
	cmd := &cobra.Command{
		Use:   "apply-suggestion",
		Short: "Write the suggested queue slots (from the best posting times) into the config file",
		Long: "Ranks the account's hours of the week from its measured posts (as get_best_posting_times does),\n" +
			"turns the best into [queue] slots (as suggest_queue_slots does), shows the change to the config\n" +
			"file and asks before writing it. Comments and the other settings stay as written; the file's\n" +
			"mode is kept. --account writes the [accounts.NAME.queue] table.\n\n" +
			"Before it asks, it says how many slots a week the change leaves and names each queued item that\n" +
			"would then be outside every slot (it keeps its time). --merge adds the suggested slots to the\n" +
			"current ones instead of replacing them; --dry-run shows all this and writes nothing.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if count < 1 || count > 14 {
				return usageError{fmt.Errorf("--count %d: allowed values are 1 to 14", count)}
			}
			if dryRun && yes {
				return usageError{errors.New("--dry-run and --yes: a dry run writes nothing, so give one of them")}
			}
			a, err := c.openApp(cmd)
			if err != nil {
				return err
			}
			defer a.Close()
			wf, err := a.Workflow()
			if err != nil {
				return err
			}
			pm := &postmetrics.Store{DB: wf.DB, Account: wf.AccountID, Now: a.Now}
			sug, err := pm.SuggestSlots(cmd.Context(), a.Cfg, count)
			if err != nil {
				return err
			}
			path := a.Cfg.ConfigPath
			if path == "" {
				return errors.New("no config file to write: pass -c FILE")
			}
			old, mode, err := readConfigFile(path)
			if err != nil {
				return err
			}
			slots := sug.Slots
			if merge {
				slots = mergeSlots(a.Cfg.Queue.Slots, sug.Slots)
			}
			updated, err := config.SetQueueSlots(old, a.Account, slots)
			if err != nil {
				return err
			}
			if err := checkSlotsTakeEffect(path, updated, a.Account, slots); err != nil {
				return err
			}
			fmt.Fprintf(c.stdout, "Best hours (%s, %s, %d posts): ", sug.Metric, sug.Timezone, sug.Posts)
			for i, b := range sug.Buckets {
				if i > 0 {
					fmt.Fprint(c.stdout, ", ")
				}
				fmt.Fprintf(c.stdout, "%s (%d posts, %s confidence)", b.Slot, b.Posts, b.ConfidenceLabel)
			}
			fmt.Fprintf(c.stdout, "\n--- %s\n+++ %s\n%s", path, path, changedLines(old, updated))
			if updated == old {
				fmt.Fprintln(c.stdout, "the config file already holds these slots; nothing to write")
				return nil
			}
			if err := c.summariseSlotChange(cmd.Context(), a, wf, slots, merge); err != nil {
				return err
			}
			if dryRun {
				fmt.Fprintln(c.stdout, "dry run: nothing written")
				return nil
			}
			if !yes && !confirm(c.stdin, c.stderr, fmt.Sprintf("Write these slots to %s? [y/N] ", path)) {
				fmt.Fprintln(c.stdout, "nothing written")
				return nil
			}
			if err := writeConfigFile(path, updated, mode); err != nil {
				return err
			}
			fmt.Fprintf(c.stdout, "wrote [%s] slots to %s\n", strings.TrimSuffix(strings.TrimPrefix(queueTable(a.Account), "["), "]"), path)
			return nil
		},
	}
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "write without asking")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "show the change and what it does to queued items; write nothing")
	cmd.Flags().BoolVar(&merge, "merge", false, "add the suggested slots to the current ones instead of replacing them")
	cmd.Flags().IntVar(&count, "count", 3, "best hours of the week to turn into slots (1-14)")
	return cmd
}

// summariseSlotChange says, before anything is written, how many slots a
// week the queue has now and would have, and which queued items the new
// slots would leave outside every slot.
func (c *cli) summariseSlotChange(ctx context.Context, a *app.App, wf *workflow.Service, slots []string, merged bool) error {
	p, err := a.Cfg.QueuePolicy()
	if err != nil {
		return err
	}
	rules, err := queue.ParseSlots(slots)
	if err != nil {
		return err
	}
	now := a.Now()
	week := func(r []queue.Rule) int { return len(queue.Expand(r, p.Loc, now, now.AddDate(0, 0, 7))) }
	fmt.Fprintf(c.stdout, "%d slots a week become %d\n", week(p.Rules), week(rules))
	outside, err := wf.QueuedOutside(ctx, p, rules, now)
	if err != nil {
		return err
	}
	if len(outside) == 0 {
		return nil
	}
	fmt.Fprintf(c.stdout, "%d queued items would be outside every slot (each keeps its time):\n", len(outside))
	for _, q := range outside {
		fmt.Fprintf(c.stdout, "  draft %d at %s\n", q.DraftID, q.At)
	}
	if !merged {
		fmt.Fprintln(c.stdout, "--merge keeps the current slots beside the suggested ones")
	}
	return nil
}

// mergeSlots is current followed by each suggested slot it lacks.
func mergeSlots(current, suggested []string) []string {
	out := append([]string{}, current...)
	for _, s := range suggested {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

func queueTable(account string) string {
	if account == "" || account == config.DefaultAccountName {
		return "[queue]"
	}
	return "[accounts." + account + ".queue]"
}

// readConfigFile reads the config file, which may not exist yet (then it
// is created 0600).
func readConfigFile(path string) (string, fs.FileMode, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", 0o600, nil
	}
	if err != nil {
		return "", 0, fmt.Errorf("read %s: %w", path, err)
	}
	st, err := os.Stat(path)
	if err != nil {
		return "", 0, fmt.Errorf("read %s: %w", path, err)
	}
	return string(b), st.Mode().Perm(), nil
}

// checkSlotsTakeEffect loads the edited file from a temporary copy and
// refuses an edit after which the account's queue would not hold slots
// (a file that sets the queue in a form the editor does not change).
func checkSlotsTakeEffect(path, content, account string, slots []string) error {
	cfg, err := loadEdited(path, content)
	if err == nil {
		if account != "" && account != config.DefaultAccountName {
			cfg, err = cfg.ForAccount(account)
		}
	}
	if err != nil || !slices.Equal(cfg.Queue.Slots, slots) {
		return fmt.Errorf("%s sets %s in a form this command does not edit (%v); set slots = %s there by hand", path, queueTable(account), err, config.TOMLStrings(slots))
	}
	return nil
}

// loadEdited loads content, an edit of the config file path, from a
// temporary 0600 copy beside it: the edit is written only if it loads.
func loadEdited(path, content string) (*config.Config, error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("check the edit of %s: %w", path, err)
	}
	tmp, err := os.CreateTemp(dir, ".config-check-*.toml")
	if err != nil {
		return nil, fmt.Errorf("check the edit of %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	err = tmp.Chmod(0o600)
	if err == nil {
		_, err = tmp.WriteString(content)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("check the edit of %s: %w", path, err)
	}
	cfg, _, err := config.Load(config.LoadOptions{Path: tmp.Name()})
	if err != nil {
		// The copy's name means nothing to the reader: name the file.
		return nil, errors.New(strings.ReplaceAll(err.Error(), tmp.Name(), path))
	}
	return cfg, nil
}

// writeConfigFile replaces the file atomically, keeping its mode.
func writeConfigFile(path, content string, mode fs.FileMode) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp, err := os.CreateTemp(dir, ".config-*.tmp")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	err = tmp.Chmod(mode)
	if err == nil {
		_, err = tmp.WriteString(content)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// changedLines shows the lines that differ between a and b, with a line of
// context either side: the edit touches one place.
func changedLines(a, b string) string {
	al, bl := strings.SplitAfter(a, "\n"), strings.SplitAfter(b, "\n")
	pre := 0
	for pre < len(al) && pre < len(bl) && al[pre] == bl[pre] {
		pre++
	}
	suf := 0
	for suf < len(al)-pre && suf < len(bl)-pre && al[len(al)-1-suf] == bl[len(bl)-1-suf] {
		suf++
	}
	var out strings.Builder
	line := func(prefix, s string) {
		if s == "" {
			return
		}
		out.WriteString(prefix + strings.TrimSuffix(s, "\n") + "\n")
	}
	if pre > 0 {
		line(" ", al[pre-1])
	}
	for _, s := range al[pre : len(al)-suf] {
		line("-", s)
	}
	for _, s := range bl[pre : len(bl)-suf] {
		line("+", s)
	}
	if suf > 0 {
		line(" ", al[len(al)-suf])
	}
	return out.String()
}

// confirm asks on w and reads one answer from r; only y or yes agrees,
// and no answer (end of input) declines.
func confirm(r io.Reader, w io.Writer, question string) bool {
	fmt.Fprint(w, question)
	if r == nil {
		return false
	}
	ans, err := bufio.NewReader(r).ReadString('\n')
	if err != nil && ans == "" {
		fmt.Fprintln(w)
		return false
	}
	ans = strings.ToLower(strings.TrimSpace(ans))
	return ans == "y" || ans == "yes"
}
