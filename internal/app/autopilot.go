package app

import (
	"log/slog"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/autopilot"
	"github.com/tuitbot/tuitbot/internal/optouts"
	"github.com/tuitbot/tuitbot/internal/workflow"
)

// AutopilotDeps gives the autopilot the services its loops use. The
// database and the gateway are required; X and the LLM may be missing (the
// loops that need them then report why).
func (a *App) AutopilotDeps() (autopilot.Deps, error) {
	db, err := a.RequireDB()
	if err != nil {
		return autopilot.Deps{}, apperr.Wrap(apperr.DBError, err, "the autopilot needs the database: %v", err)
	}
	g, err := a.RequireGateway()
	if err != nil {
		return autopilot.Deps{}, err
	}
	wf, err := a.Workflow()
	if err != nil {
		return autopilot.Deps{}, err
	}
	disc, err := a.Discovery()
	if err != nil {
		return autopilot.Deps{}, err
	}
	return autopilot.Deps{
		Cfg: a.Cfg, DB: db, Gateway: g, Workflow: wf, Discovery: disc, AccountID: a.Account,
		Replier:   func(loop string) (*workflow.Replier, error) { return a.Replier(autopilot.Caller, loop) },
		Generator: a.Generator, X: a.XClient, Log: a.autopilotLog(), Now: a.Now,
		AnyHour: a.Sim != nil && a.Cfg.Sandbox.AllDay, OptOuts: optouts.Store{DB: db, AccountID: a.Account, Now: a.Now, Phrases: a.Cfg.XAPI.OptOutPhrases},
	}, nil
}

// autopilotLog is the runner's logger. The other accounts' loggers name
// their account already; the default account's does not, so that a home of
// one account logs as it always has. In a home of several, where one
// process may run every account's autopilot (or stand by for it), each
// line must say which account it is about, default included.
func (a *App) autopilotLog() *slog.Logger {
	if a.root == nil && len(a.Accounts()) > 1 {
		return a.Log.With("account", a.Account)
	}
	return a.Log
}

// Autopilot builds an autopilot runner on a's services.
func (a *App) Autopilot(o autopilot.Options) (*autopilot.Runner, error) {
	d, err := a.AutopilotDeps()
	if err != nil {
		return nil, err
	}
	return autopilot.New(d, o)
}
