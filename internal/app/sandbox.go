package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/tuitbot/tuitbot/internal/xauth"
	"github.com/tuitbot/tuitbot/internal/xsim"
)

// Sandbox is the X emulator a --sandbox process uses. The first sandbox
// process starts it on loopback and advertises its address in the sandbox
// home, so later processes (`tuitbot approve --sandbox` beside a running
// `mcp serve --sandbox`) act on the same emulator world.
type Sandbox struct {
	URL    string
	Server *xsim.Server // nil when attached to another process's emulator
	state  string
	ad     string
}

type advert struct {
	URL string `json:"url"`
	PID int    `json:"pid"`
}

// Bases maps every logical host to the emulator.
func (s *Sandbox) Bases() map[string]string {
	return map[string]string{"api.x.com": s.URL, "upload.x.com": s.URL, "upload.twitter.com": s.URL}
}

func startSandbox(ctx context.Context, a *App) (*Sandbox, error) {
	cfg := a.Cfg
	if err := os.MkdirAll(cfg.Home, 0o700); err != nil {
		return nil, fmt.Errorf("sandbox home %s: %w", cfg.Home, err)
	}
	ad := filepath.Join(cfg.Home, "xsim.json")
	// The sandbox speaks to the emulator only; point OAuth there too so a
	// token refresh can never leave loopback.
	if url, ok := liveAdvert(ctx, ad); ok {
		a.Log.Info("sandbox: using the running emulator", "url", url)
		cfg.XAPI.ClientID = xsim.DefaultClientID
		cfg.XAPI.AuthorizeURL = url + "/i/oauth2/authorize"
		cfg.XAPI.TokenURL = url + "/2/oauth2/token"
		return &Sandbox{URL: url}, nil
	}
	opts := xsim.DefaultOptions()
	opts.Now = a.Now
	opts.Seed = cfg.Sandbox.Seed
	if cfg.Sandbox.StateFile != "" {
		w, err := xsim.LoadWorld(cfg.Sandbox.StateFile)
		switch {
		case err == nil:
			opts.World = w
		case errors.Is(err, os.ErrNotExist):
		default:
			return nil, fmt.Errorf("sandbox state %s: %w", cfg.Sandbox.StateFile, err)
		}
	}
	srv := xsim.New(opts)
	url, err := srv.Start(ctx, "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("start the X emulator: %w", err)
	}
	sb := &Sandbox{URL: url, Server: srv, state: cfg.Sandbox.StateFile, ad: ad}
	cfg.XAPI.ClientID = xsim.DefaultClientID
	cfg.XAPI.AuthorizeURL = url + "/i/oauth2/authorize"
	cfg.XAPI.TokenURL = url + "/2/oauth2/token"
	access, refresh, ttl := srv.IssueToken(srv.DemoUserID(), srv.AllScopes())
	tok := &xauth.Token{AccessToken: access, RefreshToken: refresh, TokenType: "bearer",
		ExpiresAt: a.Now().Add(ttl), Scopes: srv.AllScopes()}
	if err := xauth.SaveToken(ctx, cfg.TokenFile(), tok); err != nil {
		srv.Close()
		return nil, fmt.Errorf("sandbox token: %w", err)
	}
	b, _ := json.Marshal(advert{URL: url, PID: os.Getpid()})
	if err := os.WriteFile(ad, b, 0o600); err != nil {
		srv.Close()
		return nil, fmt.Errorf("sandbox advert: %w", err)
	}
	a.OnClose(sb.close)
	a.Log.Info("sandbox: X emulator started", "url", url, "demo_user", srv.DemoUserID())
	return sb, nil
}

// liveAdvert returns the advertised emulator URL when it still answers.
func liveAdvert(ctx context.Context, path string) (string, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", false
	}
	var ad advert
	if json.Unmarshal(b, &ad) != nil || ad.URL == "" {
		return "", false
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, ad.URL+"/2/users/me", nil)
	if err != nil {
		return "", false
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", false
	}
	resp.Body.Close()
	// Without a token the emulator answers 401: it is alive.
	return ad.URL, resp.StatusCode == http.StatusUnauthorized
}

func (s *Sandbox) close() error {
	if s.Server == nil {
		return nil
	}
	var errs []error
	if s.state != "" {
		if err := xsim.SaveWorld(s.state, s.Server.World()); err != nil {
			errs = append(errs, fmt.Errorf("save sandbox state: %w", err))
		}
	}
	if s.ad != "" {
		_ = os.Remove(s.ad)
	}
	errs = append(errs, s.Server.Close())
	return errors.Join(errs...)
}
