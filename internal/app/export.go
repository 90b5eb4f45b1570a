package app

import (
	"context"
	"github.com/tuitbot/tuitbot/internal/postmetrics"
	"io"
	"path/filepath"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/export"
)

// exportSource is where each kind of export reads its rows, for this
// account.
func (a *App) exportSource(what string) (export.Source, error) {
	switch what {
	case export.Audit, export.Approvals:
		g, err := a.RequireGateway()
		if err != nil {
			return nil, err
		}
		if what == export.Audit {
			return g.ExportAudit, nil
		}
		return g.ExportApprovals, nil
	case export.Posts:
		wf, err := a.Workflow()
		if err != nil {
			return nil, err
		}
		return wf.ExportPosts, nil
	case export.Metrics:
		return a.metricsExport()
	}
	return nil, apperr.New(apperr.InvalidInput, "what: %q is not allowed; allowed values: audit, posts, metrics, approvals", what)
}

// metricsExport is the one place `export --what metrics` reads from: the
// account's posts measured at 1 h, 24 h and 7 days (post_metrics).
func (a *App) metricsExport() (export.Source, error) {
	db, err := a.RequireDB()
	if err != nil {
		return nil, apperr.Wrap(apperr.DBError, err, "database unavailable: %v", err)
	}
	pm := &postmetrics.Store{DB: db, Account: a.Account, Now: a.Now}
	return pm.Export, nil
}

// Export streams one export of this account to w; progress (may be nil)
// hears the running row count.
func (a *App) Export(ctx context.Context, r export.Request, w io.Writer, progress func(int64)) (int64, error) {
	if err := r.Check(); err != nil {
		return 0, err
	}
	src, err := a.exportSource(r.What)
	if err != nil {
		return 0, err
	}
	return export.Write(ctx, w, r, src, progress)
}

// ExportDir is where export_data writes its files: exports/ in the home.
func (a *App) ExportDir() string { return filepath.Join(a.Cfg.Home, "exports") }

// ExportToFile writes one export of this account to a new 0600 file in
// the home's exports directory and returns its path and row count.
func (a *App) ExportToFile(ctx context.Context, r export.Request) (string, int64, error) {
	if err := r.Check(); err != nil {
		return "", 0, err
	}
	src, err := a.exportSource(r.What)
	if err != nil {
		return "", 0, err
	}
	return export.ToFile(ctx, a.ExportDir(), a.Now(), r, src)
}
