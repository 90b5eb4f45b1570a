package xauth

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync/atomic"
	"time"

	"golang.org/x/oauth2"

	"github.com/tuitbot/tuitbot/internal/apperr"
)

// refreshTimeout bounds a refresh once it has started. The refresh runs
// detached from the caller's cancellation: once X has been sent the
// single-use refresh token, abandoning the answer would lose the only valid
// token pair.
const refreshTimeout = 30 * time.Second

// forcedRefreshGap is how recently the held token must have changed for a
// forced Refresh to hand it out instead of refreshing again. Callers that got
// a 401 on the previous token at about the same time would otherwise each
// spend a refresh.
const forcedRefreshGap = 10 * time.Second

const reauthHint = "; run `tuitbot auth`"

// Manager hands out access tokens from the token file and refreshes them.
// It is safe for concurrent use, and several Managers (in one process or in
// many) may share one token file.
type Manager struct {
	opts Options
	// sem serialises token work in this process; a channel rather than a
	// mutex so that waiting honours ctx.
	sem chan struct{}
	// gen counts changes of the held token; read without sem to detect a
	// change that happened while a caller waited.
	gen atomic.Uint64

	// Guarded by sem.
	tok       *Token
	info      os.FileInfo
	changedAt time.Time
}

// NewManager checks the options. It does not read the token file: a missing
// file is reported by AccessToken, so a server can start before `tuitbot
// auth` has run.
func NewManager(o Options) (*Manager, error) {
	if o.TokenPath == "" {
		return nil, apperr.New(apperr.ConfigError, "token file path (Options.TokenPath) is empty")
	}
	r, err := o.resolved()
	if err != nil {
		return nil, err
	}
	return &Manager{opts: r, sem: make(chan struct{}, 1)}, nil
}

// Format prints the manager without any token value.
func (m *Manager) Format(f fmt.State, _ rune) {
	io.WriteString(f, "xauth.Manager{path:"+m.opts.TokenPath+"}")
}

func (m *Manager) acquire(ctx context.Context) error {
	select {
	case m.sem <- struct{}{}:
		return nil
	default:
	}
	if m.opts.onWait != nil {
		m.opts.onWait()
	}
	select {
	case m.sem <- struct{}{}:
		return nil
	case <-ctx.Done():
		return apperr.Wrap(apperr.XNetworkError, ctx.Err(), "gave up waiting for the token")
	}
}

func (m *Manager) release() { <-m.sem }

// fresh reports whether t can be used without refreshing.
func (m *Manager) fresh(t *Token) bool {
	if t == nil {
		return false
	}
	return t.ExpiresAt.IsZero() || m.opts.Now().Add(m.opts.RefreshSkew).Before(t.ExpiresAt)
}

// setToken records t as the held token; info is the FileInfo of the file it
// came from or went to.
func (m *Manager) setToken(t *Token, info os.FileInfo) {
	if m.tok != nil && m.tok.AccessToken != t.AccessToken {
		m.changedAt = m.opts.Now()
	}
	if m.tok == nil || m.tok.AccessToken != t.AccessToken {
		m.gen.Add(1)
	}
	m.tok = t
	m.info = info
}

// reloadIfChanged re-reads the file when it is not the one last seen, so a
// token refreshed by another process is picked up.
func (m *Manager) reloadIfChanged() error {
	cur, err := os.Stat(m.opts.TokenPath)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			// A deleted file means logged out: stop using the old token.
			m.tok, m.info = nil, nil
		}
		// Let the read produce the detailed error.
		cur = nil
	}
	if cur != nil && m.tok != nil && m.info != nil &&
		os.SameFile(cur, m.info) && cur.ModTime().Equal(m.info.ModTime()) && cur.Size() == m.info.Size() &&
		cur.Mode() == m.info.Mode() {
		return nil
	}
	t, info, err := readTokenFile(m.opts.TokenPath)
	if err != nil {
		return err
	}
	m.setToken(t, info)
	return nil
}

// AccessToken returns a usable access token, refreshing it first when it
// expires within RefreshSkew.
func (m *Manager) AccessToken(ctx context.Context) (string, error) {
	if err := m.acquire(ctx); err != nil {
		return "", err
	}
	defer m.release()
	if err := m.reloadIfChanged(); err != nil {
		return "", err
	}
	if m.fresh(m.tok) {
		return m.tok.AccessToken, nil
	}
	t, err := m.refreshLocked(ctx, m.tok, false)
	if err != nil {
		return "", err
	}
	return t.AccessToken, nil
}

// Refresh forces a refresh; the API client calls it once after X answered
// 401. When the token has already been replaced since the caller got it — by
// a concurrent Refresh in this process or by another process — the
// replacement is returned and X is not asked again.
func (m *Manager) Refresh(ctx context.Context) (string, error) {
	seen := m.gen.Load()
	if err := m.acquire(ctx); err != nil {
		return "", err
	}
	defer m.release()
	if m.tok == nil {
		if err := m.reloadIfChanged(); err != nil {
			return "", err
		}
		// Loading is not a replacement the caller could have missed.
		seen = m.gen.Load()
	}
	if m.fresh(m.tok) {
		if m.gen.Load() != seen {
			return m.tok.AccessToken, nil
		}
		if !m.changedAt.IsZero() && m.opts.Now().Sub(m.changedAt) < forcedRefreshGap {
			return m.tok.AccessToken, nil
		}
	}
	t, err := m.refreshLocked(ctx, m.tok, true)
	if err != nil {
		return "", err
	}
	return t.AccessToken, nil
}

// refreshLocked refreshes under the cross-process lock. held is the token
// the caller judged unusable. Under the lock the file is read again: if
// another process already replaced held with a fresh token, that token is
// adopted and X is not called, because held's refresh token has been spent.
func (m *Manager) refreshLocked(ctx context.Context, held *Token, forced bool) (*Token, error) {
	unlock, err := lockTokenFile(ctx, m.opts.TokenPath, m.opts.onWait)
	if err != nil {
		return nil, err
	}
	defer unlock()

	cur, info, err := readTokenFile(m.opts.TokenPath)
	if err != nil {
		if apperr.CodeOf(err) == apperr.XNotConfigured {
			m.tok, m.info = nil, nil
		}
		return nil, err
	}
	replaced := held == nil || cur.AccessToken != held.AccessToken
	if m.fresh(cur) && (!forced || replaced) {
		m.setToken(cur, info)
		return cur, nil
	}
	if cur.RefreshToken == "" {
		m.setToken(cur, info)
		if forced {
			return nil, apperr.New(apperr.XAuthExpired, "X no longer accepts the access token in %s and there is no refresh token%s", m.opts.TokenPath, reauthHint)
		}
		if m.opts.Now().Before(cur.ExpiresAt) {
			// Nothing to refresh with, but the token still works for a
			// while: use it rather than fail early.
			return cur, nil
		}
		return nil, apperr.New(apperr.XAuthExpired, "the X access token in %s has expired and there is no refresh token%s", m.opts.TokenPath, reauthHint)
	}
	if m.opts.ClientID == "" {
		return nil, apperr.New(apperr.ConfigError, "cannot refresh the X token: the client id (Options.ClientID) is not configured")
	}

	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), refreshTimeout)
	defer cancel()
	cfg := m.opts.oauthConfig("")
	// An empty access token makes the source refresh immediately.
	src := cfg.TokenSource(m.opts.httpContext(rctx), &oauth2.Token{RefreshToken: cur.RefreshToken})
	ot, err := src.Token()
	if err != nil {
		return nil, tokenEndpointError(rctx, err, "token refresh", apperr.XAuthExpired, reauthHint,
			cur.RefreshToken, cur.AccessToken, m.opts.ClientSecret)
	}
	next, err := m.opts.tokenFromOAuth(ot, cur)
	if err != nil {
		return nil, err
	}
	newInfo, err := writeTokenFile(m.opts.TokenPath, next)
	if err != nil {
		// X has already spent the old refresh token, so the new pair is the
		// only valid one: keep it in memory, recorded against the old file's
		// identity so reloadIfChanged does not swap the spent pair back in.
		m.setToken(next, info)
		m.changedAt = m.opts.Now()
		return nil, err
	}
	m.setToken(next, newInfo)
	m.changedAt = m.opts.Now()
	return next, nil
}
