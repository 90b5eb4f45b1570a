package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"

	"github.com/spf13/cobra"

	"github.com/tuitbot/tuitbot/internal/app"
	"github.com/tuitbot/tuitbot/internal/store"
)

// dbCmd moves a home's history between its SQLite file and a PostgreSQL
// database, in either direction.
func (c *cli) dbCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "db",
		Short: "Move the database between SQLite and PostgreSQL",
		Long: "Copy all of tuitbot's history (audit, approvals, limits, drafts, analytics, the database identity) between\n" +
			"databases. Stop every tuitbot process using the source first. The target must be new or empty; after copying,\n" +
			"every table's row count is compared and any difference leaves the target unchanged.",
	}
	var to string
	migrate := &cobra.Command{
		Use:   "migrate",
		Short: "Copy this home's SQLite database into PostgreSQL (storage.database_url or --to)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := c.loadConfig()
			if err != nil {
				return err
			}
			target := to
			if target == "" {
				target = cfg.Storage.DatabaseURL
			}
			if !store.IsPostgresURL(target) {
				return usageError{errors.New("name the PostgreSQL database: set storage.database_url or pass --to URL")}
			}
			if _, err := os.Stat(cfg.DBFile()); err != nil {
				return fmt.Errorf("no SQLite database to migrate at %s: %w", cfg.DBFile(), err)
			}
			return c.copyDB(cmd.Context(), cfg.DBFile(), target, app.StoreOptions(cfg, nil, c.acceptNewDB))
		},
	}
	migrate.Flags().StringVar(&to, "to", "", "PostgreSQL URL to copy into (default storage.database_url)")
	export := &cobra.Command{
		Use:   "export FILE",
		Short: "Copy the configured database (SQLite or PostgreSQL) into a new SQLite file",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := c.loadConfig()
			if err != nil {
				return err
			}
			if _, err := os.Stat(args[0]); !errors.Is(err, fs.ErrNotExist) {
				return usageError{fmt.Errorf("%s already exists; export writes a new file", args[0])}
			}
			return c.copyDB(cmd.Context(), cfg.DatabaseTarget(), args[0], app.StoreOptions(cfg, nil, c.acceptNewDB))
		},
	}
	imp := &cobra.Command{
		Use:   "import FILE",
		Short: "Copy a SQLite file into the configured database, which must be empty",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := c.loadConfig()
			if err != nil {
				return err
			}
			if _, err := os.Stat(args[0]); err != nil {
				return usageError{fmt.Errorf("no SQLite database to import: %w", err)}
			}
			opts := app.StoreOptions(cfg, nil, c.acceptNewDB)
			// The file may come from another home: it is read, not bound to
			// this one. The home's database takes the history, and is bound
			// to this home when it next opens.
			opts.HomeIDFile = ""
			return c.copyDB(cmd.Context(), args[0], cfg.DatabaseTarget(), opts)
		},
	}
	cmd.AddCommand(migrate, export, imp)
	return cmd
}

// copyDB opens both databases and copies from into to. Only the home's
// own database is checked against the home's history (opts); the other
// side is opened as it is.
func (c *cli) copyDB(ctx context.Context, from, to string, home store.Options) error {
	src, err := store.Open(ctx, from, home)
	if err != nil {
		return fmt.Errorf("cannot open the source database: %w", err)
	}
	defer src.Close()
	dst, err := store.Open(ctx, to, store.Options{AcceptNew: home.AcceptNew})
	if err != nil {
		return fmt.Errorf("cannot open the target database: %w", err)
	}
	defer dst.Close()
	counts, err := store.Copy(ctx, src, dst)
	if err != nil {
		return fmt.Errorf("copy %s to %s: %w", src.Path, dst.Path, err)
	}
	tables := make([]string, 0, len(counts))
	for t := range counts {
		tables = append(tables, t)
	}
	sort.Strings(tables)
	var total int64
	for _, t := range tables {
		fmt.Fprintf(c.stdout, "%-20s %d rows\n", t, counts[t])
		total += counts[t]
	}
	fmt.Fprintf(c.stdout, "copied %d rows from %s to %s; every table's count checked\n", total, src.Path, dst.Path)
	return nil
}
