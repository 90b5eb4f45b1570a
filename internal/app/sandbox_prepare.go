package app

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"time"

	"github.com/tuitbot/tuitbot/internal/config"
	"github.com/tuitbot/tuitbot/internal/store"
	"github.com/tuitbot/tuitbot/internal/xsim"
)

// PrepareSandbox makes sure the sandbox home (cfg.Home is the sandbox home)
// holds the emulator world and a token for every demo account, so that
// every --sandbox command finds them whichever runs first, also one that
// only reads them (`tuitbot auth status --sandbox`). When something is
// missing it attaches to or starts the emulator exactly as a sandbox
// process does (the process that starts it writes the world and the
// tokens), then lets go of it again. cfg changes as a sandbox process's
// does; acceptNewDB is --accept-new-database.
func PrepareSandbox(ctx context.Context, cfg *config.Config, log *slog.Logger, acceptNewDB bool) error {
	missing, err := sandboxMissing(cfg)
	if err != nil || len(missing) == 0 {
		return err
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	log.Debug("sandbox: preparing the world and the demo accounts' tokens", "missing", missing)
	// The database and its identity come before the first token, as in
	// every sandbox process: from then on a token means the home has
	// history, and a database that goes missing is noticed.
	db, err := store.Open(ctx, cfg.DatabaseTarget(), StoreOptions(cfg, nil, acceptNewDB))
	if err != nil {
		return fmt.Errorf("prepare the sandbox: cannot open the database: %w", err)
	}
	if err := db.Close(); err != nil {
		return fmt.Errorf("prepare the sandbox: %w", err)
	}
	a := &App{Cfg: cfg, Log: slog.New(warnOnly{log.Handler()}), Now: time.Now}
	if _, err := startSandbox(ctx, a, nil); err != nil {
		return fmt.Errorf("prepare the sandbox: %w", err)
	}
	if err := a.Close(); err != nil {
		return fmt.Errorf("prepare the sandbox: %w", err)
	}
	// A process of another home serving the same world mints no login
	// for this one; startSandbox has said so.
	if still, err := sandboxMissing(cfg); err != nil || len(still) > 0 {
		return err
	}
	log.Info("sandbox: prepared the demo world and its accounts' tokens", "home", cfg.Home)
	return nil
}

// warnOnly passes on warnings and errors only. Preparing starts and stops
// an emulator the command never uses; its routine lines ("emulator
// started") would read as if the command had started two.
type warnOnly struct{ slog.Handler }

func (h warnOnly) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelWarn && h.Handler.Enabled(ctx, l)
}

func (h warnOnly) WithAttrs(as []slog.Attr) slog.Handler {
	return warnOnly{h.Handler.WithAttrs(as)}
}

func (h warnOnly) WithGroup(name string) slog.Handler {
	return warnOnly{h.Handler.WithGroup(name)}
}

// sandboxMissing lists the files a prepared sandbox home has and this one
// lacks: the world and each demo account's token.
func sandboxMissing(cfg *config.Config) ([]string, error) {
	state, err := SandboxStateFile(cfg)
	if err != nil {
		return nil, err
	}
	want := []string{state, cfg.TokenFileFor(config.DefaultAccountName)}
	for _, b := range xsim.DemoBrands {
		want = append(want, cfg.TokenFileFor(b.Account))
	}
	var missing []string
	for _, p := range want {
		_, err := os.Stat(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			missing = append(missing, p)
		case err != nil:
			return nil, fmt.Errorf("sandbox: %w", err)
		}
	}
	return missing, nil
}
