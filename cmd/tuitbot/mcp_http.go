package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"

	"github.com/tuitbot/tuitbot/internal/app"
	"github.com/tuitbot/tuitbot/internal/config"
	"github.com/tuitbot/tuitbot/internal/mcpserver"
	"github.com/tuitbot/tuitbot/internal/web"
)

// serveHTTPWhileStarting runs the HTTP transport while the services start
// beside it (see startingServer): it listens at once, /healthz says
// degraded and tool calls answer db_error while the database is
// unavailable, and the services start as soon as it is back. When they
// cannot start for another reason the server ends with it. With withWeb
// the review page is served under /ui once they have started.
func (c *cli) serveHTTPWhileStarting(ctx context.Context, cfg *config.Config, opts app.Options, mo mcpserver.Options, log *slog.Logger, mf metricsFlags, tokenFile, listen string, withWeb bool) error {
	if err := c.prepareBuild(cfg, &opts); err != nil {
		return err
	}
	if _, err := cfg.SelectAccount(c.account); err != nil {
		return usageError{err}
	}
	tok, path, err := c.httpToken(cfg, tokenFile, mf)
	if err != nil {
		return err
	}
	var page *startingWeb
	var afterStart func(*app.App) error
	if withWeb {
		page = &startingWeb{c: c, log: log, links: cfg.ApprovalLinks}
		afterStart = page.start
	}
	s, err := c.newStartingServer(ctx, cfg, opts, mo, log, afterStart, nil)
	if err != nil {
		return err
	}
	log.Info("mcp server starting", "profile", mo.Profile, "tools", len(s.selected), "transport", "http", "mode", cfg.Mode, "sandbox", c.sandbox)
	ho := httpOptions(cfg, listen, tok, path, log, mf)
	ho.Healthy, ho.Metrics = s.healthy, s.metrics()
	ho.Ready = func(addr string) { log.Info("listening", "url", "http://"+addr+"/", "token_file", path) }
	if page != nil {
		page.s = s
		ho.Mounts = page.mounts()
		ho.Ready = func(addr string) {
			log.Info("listening", "url", "http://"+addr+"/", "token_file", path, "review_page", "http://"+addr+webPrefix+"/")
			page.listening(addr)
		}
	}
	// Over HTTP no first answer waits on the start: it begins at once.
	s.starting.Begin()
	err = s.finish(ctx, mcpserver.ServeHTTP(s.serving, s.srv, ho))
	if page != nil {
		if lerr := page.linksErr(); err == nil {
			err = lerr
		}
	}
	return err
}

// startingWeb is the review page of `mcp serve --web`, which is built on
// the services: its paths are served from when the listener opens, each
// request waiting for the services as a tool call does (and refused while
// the database is unavailable), and its one-time login URL, the first
// line on stdout, is printed once both the page and the address exist.
type startingWeb struct {
	c     *cli
	log   *slog.Logger
	links config.ApprovalLinks
	s     *startingServer

	// ui is set before the services are handed to the server (Ready), so
	// a request that waited for them finds it.
	ui *web.Server

	mu      sync.Mutex
	addr    string
	printed bool
	// linksDone carries the links listener's end, when it runs.
	linksDone chan error
}

// start builds the page on the started services and, with
// approval_links.listen, serves the links alone on that address; that
// listener ends the server when it fails, and with it.
func (w *startingWeb) start(a *app.App) error {
	ui, err := w.c.mcpWeb(w.s.serving, a)
	if err != nil {
		return err
	}
	if extra := w.links.Listen; extra != "" && a.Links() != nil {
		lln, err := linksListener(extra, false, nil, w.log)
		if err != nil {
			return err
		}
		w.mu.Lock()
		w.linksDone = make(chan error, 1)
		done := w.linksDone
		w.mu.Unlock()
		go func() {
			err := ui.ServeLinks(w.s.serving, lln)
			w.s.stopServing()
			done <- err
		}()
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.ui = ui
	w.printLogin()
	return nil
}

// listening records the address the server bound.
func (w *startingWeb) listening(addr string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.addr = addr
	w.printLogin()
}

// printLogin prints the login URL once the page and the address both
// exist; the caller holds mu. The URL holds the login token: stdout only,
// never the log.
func (w *startingWeb) printLogin() {
	if w.printed || w.ui == nil || w.addr == "" {
		return
	}
	w.printed = true
	w.ui.SetAddr(w.addr)
	fmt.Fprintln(w.c.stdout, w.ui.LoginURL())
}

// mounts are the page's paths beside the MCP endpoint: the page under
// /ui and, when approval links are on, the signed links at /a/TOKEN.
func (w *startingWeb) mounts() map[string]http.Handler {
	m := map[string]http.Handler{webPrefix: w.wait(func(ui *web.Server) http.Handler { return ui.Within(w.s.serving) })}
	if w.links.Enabled {
		m[strings.TrimSuffix(web.LinkPrefix, "/")] = w.wait((*web.Server).LinkHandler)
	}
	return m
}

// wait serves a request with the page's handler once the services have
// started, and refuses it while they are unavailable.
func (w *startingWeb) wait(handler func(*web.Server) http.Handler) http.Handler {
	var once sync.Once
	var h http.Handler
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if err := w.s.starting.Wait(r.Context()); err != nil {
			rw.Header().Set("Retry-After", "5")
			http.Error(rw, "the review page opens once the database is available; try again shortly", http.StatusServiceUnavailable)
			return
		}
		once.Do(func() { h = handler(w.ui) })
		h.ServeHTTP(rw, r)
	})
}

// linksErr waits for the links listener, when it ran, and returns its
// error.
func (w *startingWeb) linksErr() error {
	w.mu.Lock()
	done := w.linksDone
	w.mu.Unlock()
	if done == nil {
		return nil
	}
	return <-done
}
