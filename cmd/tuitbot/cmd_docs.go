package main

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"sort"

	"github.com/spf13/cobra"

	"github.com/tuitbot/tuitbot/internal/mcpserver"
	"github.com/tuitbot/tuitbot/internal/store"
)

func (c *cli) docsCmd() *cobra.Command {
	var check bool
	var dir string
	cmd := &cobra.Command{
		Use:   "docs",
		Short: "Regenerate docs/tools.md, docs/errors.md, docs/config.md, the built-in tool schemas and the baseline database schemas (--check fails when stale)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			files, err := mcpserver.Docs()
			if err != nil {
				return err
			}
			baselines, err := store.BaselineFiles(cmd.Context())
			if err != nil {
				return err
			}
			maps.Copy(files, baselines)
			names := make([]string, 0, len(files))
			for n := range files {
				names = append(names, n)
			}
			sort.Strings(names)
			var stale []string
			for _, n := range names {
				path := filepath.Join(dir, n)
				want := []byte(files[n])
				if check {
					got, err := os.ReadFile(path)
					if err != nil || !bytes.Equal(got, want) {
						stale = append(stale, n)
					}
					continue
				}
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					return err
				}
				if err := os.WriteFile(path, want, 0o644); err != nil {
					return err
				}
				fmt.Fprintf(c.stdout, "wrote %s\n", path)
			}
			if len(stale) > 0 {
				return fmt.Errorf("generated docs are stale: %v; run `go run ./cmd/tuitbot docs` and commit the result", stale)
			}
			if check {
				fmt.Fprintln(c.stdout, "generated docs are current")
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&check, "check", false, "fail when the files differ from what would be generated")
	cmd.Flags().StringVar(&dir, "dir", ".", "repository root")
	return cmd
}
