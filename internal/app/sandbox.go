package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/tuitbot/tuitbot/internal/config"
	"github.com/tuitbot/tuitbot/internal/flock"
	"github.com/tuitbot/tuitbot/internal/xauth"
	"github.com/tuitbot/tuitbot/internal/xsim"
)

// The sandbox is one emulator world per sandbox home, shared by every
// --sandbox process. Its files, all in the sandbox home:
//
//	world.json               the world (unless [sandbox].state_file or
//	                         --sandbox-state names another file), rewritten
//	                         now and then with the changes of
//	world.json.log           the changes since, appended one by one, each
//	                         before its answer (xsim.WorldLogPath)
//	xsim.json                where the running emulator listens, which
//	                         process runs it and which world it serves
//	xsim.lock                held by the process running the emulator
//	xsim-start.lock          held while a process decides to attach, start
//	                         or take over, and while the emulator stops
//	locks/sandbox-PID-*.lock held by every process using the sandbox
//
// and beside the world file, whatever home points at it:
//
//	WORLD.lock               held by the one emulator serving the world
//	                         (xsim.LockWorld), saying where it listens
//	WORLD.start.lock         held, after the home's start lock, while a
//	                         process decides to attach, start or take over
//
// so that homes naming one state file share one emulator, as the
// processes of one home do.
//
// The first process starts the emulator inside itself; later ones attach to
// it. When the process running it exits, the next request of any attached
// process finds the address dead and, under the start lock, starts a new
// emulator on the saved world (at the same address when it is free). Every
// request goes through the Sandbox transport, which always sends it to the
// emulator of the moment.
const (
	sandboxWorld     = "world.json"
	sandboxAdvert    = "xsim.json"
	sandboxOwnerLock = "xsim.lock"
	sandboxStartLock = "xsim-start.lock"
	sandboxLockDir   = "locks"
	sandboxUserLock  = "sandbox-"
)

// startLockWait bounds the wait for another process to finish starting or
// stopping the emulator, which takes milliseconds.
const startLockWait = 30 * time.Second

// Sandbox is the X emulator a --sandbox process uses.
type Sandbox struct {
	// URL and Server are the emulator as New found it: Server is the one this
	// process started, nil when it attached to another process's. A later
	// takeover does not change them; Current reports the emulator of the
	// moment.
	URL    string
	Server *xsim.Server

	home, state string
	seed        int64
	access      SandboxAccess
	now         func() time.Time
	log         *slog.Logger
	base        http.RoundTripper
	user        *os.File // this process's liveness lock

	takeover sync.Mutex // one takeover at a time in this process

	mu  sync.Mutex
	cur string // the base URL requests go to
	own *owned // the emulator this process runs, if any
}

// owned is an emulator this process runs, with the lock that says so.
type owned struct {
	srv  *xsim.Server
	lock *os.File
}

// advert is the content of xsim.json.
type advert struct {
	URL   string `json:"url"`
	PID   int    `json:"pid"`
	State string `json:"state"`
}

// Bases maps every logical host to the emulator. The transport sends every
// request to the emulator of the moment whatever its host, so these only
// need to be well-formed.
func (s *Sandbox) Bases() map[string]string {
	return map[string]string{"api.x.com": s.URL, "upload.x.com": s.URL, "upload.twitter.com": s.URL}
}

// Current returns the emulator requests go to now, and the server when this
// process runs it.
func (s *Sandbox) Current() (string, *xsim.Server) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.own != nil {
		return s.cur, s.own.srv
	}
	return s.cur, nil
}

// HTTPClient is the client for everything the sandbox sends: it never
// follows redirects and reaches nothing but the emulator.
func (s *Sandbox) HTTPClient() *http.Client {
	return &http.Client{
		Transport:     s,
		Timeout:       xauth.DefaultHTTPTimeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// SandboxStateFile is the file that holds the sandbox world for cfg, whose
// Home is the sandbox home.
func SandboxStateFile(cfg *config.Config) (string, error) {
	p := cfg.Sandbox.StateFile
	if p == "" {
		p = filepath.Join(cfg.Home, sandboxWorld)
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", fmt.Errorf("sandbox state %s: %w", p, err)
	}
	return abs, nil
}

// SandboxQueueSlots gives the sandbox home demo posting slots when its
// configuration sets none: without slots the queue commands and tools only
// answer queue_not_configured, so a fresh sandbox could not show the
// queue. Weekday mornings and afternoons, weekend late mornings. Only the
// sandbox home calls it; a real home never gets these.
func SandboxQueueSlots(cfg *config.Config) {
	if len(cfg.Queue.Slots) == 0 {
		cfg.Queue.Slots = []string{"mon-fri 09:00", "mon-fri 15:30", "sat,sun 11:00"}
	}
}

// SandboxAccounts adds the demo brands to cfg as further accounts, unless
// the configuration already describes them: the sandbox home runs them all.
func SandboxAccounts(cfg *config.Config) {
	for _, b := range xsim.DemoBrands {
		if _, ok := cfg.Accounts[b.Account]; !ok {
			if cfg.Accounts == nil {
				cfg.Accounts = map[string]map[string]any{}
			}
			cfg.Accounts[b.Account] = map[string]any{}
		}
	}
}

// sandboxTransport reaches the emulator with a new connection for every
// request. The emulator can change hands (its process exits, another takes
// it over): a post sent on a kept-alive connection to the old one fails
// after it is written, which is an unknown outcome, while a fresh dial to a
// gone emulator is refused, which provably sent nothing and moves this
// process to the successor. A loopback dial costs far less than an answer.
func sandboxTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.DisableKeepAlives = true
	return t
}

// SandboxAccess returns the access level of an account's app by the
// account's name (config.DefaultAccountName for the default account), or
// "" to leave the emulator world's level for it as it is. The emulator
// started for the sandbox models those levels: on xsim.AccessPayPerUse its
// demo user meets the self-serve X of 2026. The default account's level is
// also the world's, for users no account names. A nil SandboxAccess leaves
// every level as the world has it (a new world: xsim.AccessEnterprise).
type SandboxAccess func(account string) xsim.Access

// applyAccess sets the levels access gives on srv; setting the levels the
// world already has changes nothing, so a start does not rewrite it.
func applyAccess(srv *xsim.Server, access SandboxAccess) error {
	if access == nil {
		return nil
	}
	if lvl := access(config.DefaultAccountName); lvl != "" {
		if err := srv.SetAccess(lvl); err != nil {
			return fmt.Errorf("sandbox access of account %s: %w", config.DefaultAccountName, err)
		}
	}
	accounts := srv.DemoAccounts()
	names := make([]string, 0, len(accounts))
	for name := range accounts {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		lvl := access(name)
		if lvl == "" {
			continue
		}
		if err := srv.SetUserAccess(accounts[name], lvl); err != nil {
			return fmt.Errorf("sandbox access of account %s: %w", name, err)
		}
	}
	return nil
}

func startSandbox(ctx context.Context, a *App, access SandboxAccess) (*Sandbox, error) {
	cfg := a.Cfg
	if err := os.MkdirAll(filepath.Join(cfg.Home, sandboxLockDir), 0o700); err != nil {
		return nil, fmt.Errorf("sandbox home %s: %w", cfg.Home, err)
	}
	state, err := SandboxStateFile(cfg)
	if err != nil {
		return nil, err
	}
	// The world's lock files live beside it.
	if err := os.MkdirAll(filepath.Dir(state), 0o700); err != nil {
		return nil, fmt.Errorf("sandbox state %s: %w", state, err)
	}
	s := &Sandbox{home: cfg.Home, state: state, seed: cfg.Sandbox.Seed, now: a.Now, log: a.Log,
		base: sandboxTransport(), access: access}
	// Registered before anything else so `tuitbot sandbox reset` sees this
	// process as a user of the sandbox from the start.
	if s.user, err = os.CreateTemp(filepath.Join(cfg.Home, sandboxLockDir), sandboxUserLock+strconv.Itoa(os.Getpid())+"-*.lock"); err != nil {
		return nil, fmt.Errorf("sandbox lock: %w", err)
	}
	if err := flock.TryLock(s.user); err != nil {
		s.releaseUser()
		return nil, fmt.Errorf("sandbox lock: %w", err)
	}
	base, srv, err := s.attachOrStart(ctx)
	if err != nil {
		s.releaseUser()
		return nil, err
	}
	s.URL, s.Server, s.cur = base, srv, base
	// The sandbox speaks to the emulator only; point OAuth there too so a
	// token refresh can never leave loopback.
	cfg.XAPI.ClientID = xsim.DefaultClientID
	cfg.XAPI.AuthorizeURL = base + "/i/oauth2/authorize"
	cfg.XAPI.TokenURL = base + "/2/oauth2/token"
	// A fresh home names no topics, which the content and thread loops
	// (and the content tools) need: the sandbox then writes about what its
	// demo account does. Accounts inherit them like any [business] key.
	if b := &cfg.Business; len(nonBlank(b.ContentPillars))+len(nonBlank(b.IndustryTopics))+len(nonBlank(b.ProductKeywords)) == 0 {
		b.ContentPillars = xsim.DemoPillars()
	}
	// Likewise discovery, which searches the keywords.
	if b := &cfg.Business; len(nonBlank(b.ProductKeywords))+len(nonBlank(b.CompetitorKeywords)) == 0 {
		b.ProductKeywords = xsim.DemoKeywords()
	}
	SandboxAccounts(cfg)
	if srv == nil {
		a.Log.Debug("sandbox: using the running emulator", "url", base, "state", state)
		// Logins are minted by the process that starts the emulator: a home
		// that has never started one on this world, while another home's
		// process serves it, has none yet.
		for _, name := range cfg.AccountNames() {
			if _, err := os.Stat(cfg.TokenFileFor(name)); errors.Is(err, fs.ErrNotExist) {
				a.Log.Warn("sandbox: another process serves this world and this home has no login in it yet; stop the other sandbox processes, then start this one first",
					"account", name, "state", state)
				break
			}
		}
	} else {
		// Every account logs in as its own demo user, each with its own
		// token file; one whose file still holds a working login keeps it
		// (an expired access token is refreshed on first use, as on X).
		var names, users []string
		for name, user := range srv.DemoAccounts() {
			if !cfg.HasAccount(name) {
				continue
			}
			if tok, err := xauth.LoadToken(cfg.TokenFileFor(name)); err == nil && tok != nil &&
				srv.RefreshValid(user, tok.RefreshToken, srv.AllScopes()) {
				continue
			}
			names, users = append(names, name), append(users, user)
		}
		for i, t := range srv.IssueTokens(users, srv.AllScopes()) {
			name := names[i]
			tok := &xauth.Token{AccessToken: t.Access, RefreshToken: t.Refresh, TokenType: "bearer",
				ExpiresAt: a.Now().Add(t.ExpiresIn), Scopes: srv.AllScopes()}
			if err := xauth.SaveToken(ctx, cfg.TokenFileFor(name), tok); err != nil {
				_ = s.close()
				return nil, fmt.Errorf("sandbox token of account %s: %w", name, err)
			}
		}
		// Every --sandbox command starts or attaches to the emulator: at
		// info level this line would be noise on each one; --log-level
		// debug shows it.
		a.Log.Debug("sandbox: X emulator started", "url", base, "state", state, "demo_user", srv.DemoUserID())
	}
	a.OnClose(s.close)
	return s, nil
}

// attachOrStart returns the running emulator of this sandbox home, or
// starts one on the saved world and returns it as srv.
func (s *Sandbox) attachOrStart(ctx context.Context) (base string, srv *xsim.Server, err error) {
	unlock, err := s.lockStart(ctx)
	if err != nil {
		return "", nil, err
	}
	defer unlock()
	ad, _ := readAdvert(s.home)
	if ad != nil && emulatorAnswers(ctx, ad.URL) {
		if ad.State != s.state {
			return "", nil, fmt.Errorf("the running sandbox emulator (process %d) serves the world in %s, not %s: use the same --sandbox-state, or stop that process first",
				ad.PID, ad.State, s.state)
		}
		return ad.URL, nil, nil
	}
	// Another home's process may serve the same world file.
	if url, pid, ok := xsim.WorldOwner(s.state); ok {
		if !emulatorAnswers(ctx, url) {
			return "", nil, fmt.Errorf("the sandbox emulator of process %d serves the world in %s but does not answer: stop that process and try again", pid, s.state)
		}
		return url, nil, nil
	}
	lock, err := os.OpenFile(filepath.Join(s.home, sandboxOwnerLock), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return "", nil, fmt.Errorf("sandbox emulator lock: %w", err)
	}
	if err := flock.TryLock(lock); err != nil {
		lock.Close()
		if errors.Is(err, flock.ErrLocked) {
			who := "another process"
			if ad != nil {
				who = fmt.Sprintf("process %d", ad.PID)
			}
			return "", nil, fmt.Errorf("the sandbox emulator run by %s does not answer: stop that process and try again", who)
		}
		return "", nil, fmt.Errorf("sandbox emulator lock: %w", err)
	}
	hint := ""
	if ad != nil {
		// The same address lets processes that still use it carry on
		// without noticing; any other free port works too.
		if u, perr := url.Parse(ad.URL); perr == nil {
			hint = u.Host
		}
	}
	srv, base, err = s.startEmulator(hint)
	if err != nil {
		_ = flock.Unlock(lock)
		lock.Close()
		if errors.Is(err, xsim.ErrWorldInUse) {
			return "", nil, fmt.Errorf("sandbox state %s: %w; stop the process running it and try again", s.state, err)
		}
		return "", nil, err
	}
	b, _ := json.Marshal(advert{URL: base, PID: os.Getpid(), State: s.state})
	if err := writeFileAtomic(filepath.Join(s.home, sandboxAdvert), b); err != nil {
		_ = srv.Close()
		_ = flock.Unlock(lock)
		lock.Close()
		return "", nil, fmt.Errorf("sandbox advert: %w", err)
	}
	s.mu.Lock()
	s.own = &owned{srv: srv, lock: lock}
	s.mu.Unlock()
	return base, srv, nil
}

// startEmulator starts an emulator on the saved world, at hint when that
// address is free. It holds the world's lock from before it reads the
// world until the emulator closes.
func (s *Sandbox) startEmulator(hint string) (*xsim.Server, string, error) {
	wl, err := xsim.LockWorld(s.state)
	if err != nil {
		return nil, "", err
	}
	srv, base, err := s.startLocked(hint, wl)
	if err != nil {
		_ = wl.Release()
		return nil, "", err
	}
	return srv, base, nil
}

func (s *Sandbox) startLocked(hint string, wl *xsim.WorldLock) (*xsim.Server, string, error) {
	opts := xsim.DefaultOptions()
	opts.Now = s.now
	opts.Seed = s.seed
	opts.StateFile = s.state
	opts.WorldLock = wl
	opts.OnSaveError = func(err error) {
		s.log.Warn("sandbox: the emulator world could not be saved; other sandbox processes may not see the latest changes", "state", s.state, "error", err)
	}
	w, err := xsim.LoadWorld(s.state)
	switch {
	case err == nil:
		opts.World = w
	case errors.Is(err, fs.ErrNotExist):
		// A new sandbox: the demo world, saved at once below.
	default:
		return nil, "", fmt.Errorf("sandbox state %s: %w (run `tuitbot sandbox reset` to start over)", s.state, err)
	}
	srv := xsim.New(opts)
	if err := applyAccess(srv, s.access); err != nil {
		_ = srv.Close()
		return nil, "", err
	}
	// The emulator lives until this process closes the App, not until the
	// context of whatever request happened to start it ends.
	bg := context.Background()
	base := ""
	if hint != "" {
		base, err = srv.Start(bg, hint)
	}
	if hint == "" || err != nil {
		base, err = srv.Start(bg, "127.0.0.1:0")
	}
	if err != nil {
		return nil, "", fmt.Errorf("start the X emulator: %w", err)
	}
	if opts.World == nil {
		// A new sandbox: its demo world exists nowhere else yet. A loaded
		// one is its file already; rewriting it would cost every start an
		// encoding of the whole world.
		if err := srv.Save(); err != nil {
			_ = srv.Close()
			return nil, "", fmt.Errorf("sandbox state %s: %w", s.state, err)
		}
	}
	return srv, base, nil
}

// lockStart takes the start lock, waiting for a process that is starting or
// stopping the emulator.
func (s *Sandbox) lockStart(ctx context.Context) (func(), error) {
	return lockStarts(ctx, s.home, s.state)
}

// lockStarts takes the start lock of home, then that of the world file
// state, which every home naming that file shares.
func lockStarts(ctx context.Context, home, state string) (func(), error) {
	unlockHome, err := lockFile(ctx, filepath.Join(home, sandboxStartLock))
	if err != nil {
		return nil, err
	}
	unlockWorld, err := lockFile(ctx, worldStartLock(state))
	if err != nil {
		unlockHome()
		return nil, err
	}
	return func() {
		unlockWorld()
		unlockHome()
	}, nil
}

// worldStartLock is the start lock of the world file state.
func worldStartLock(state string) string { return state + ".start.lock" }

func lockFile(ctx context.Context, path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("sandbox lock: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, startLockWait)
	defer cancel()
	if err := flock.Lock(ctx, f); err != nil {
		f.Close()
		return nil, fmt.Errorf("wait for %s: %w", path, err)
	}
	return func() {
		_ = flock.Unlock(f)
		_ = f.Close()
	}, nil
}

// RoundTrip sends req to the emulator of the moment. When that emulator is
// gone (the connection is refused, so nothing was sent) it attaches to or
// starts its successor and sends the request there.
func (s *Sandbox) RoundTrip(req *http.Request) (*http.Response, error) {
	s.mu.Lock()
	base := s.cur
	s.mu.Unlock()
	resp, err := s.base.RoundTrip(toEmulator(req, base, req.Body))
	if err == nil || !refused(err) {
		return resp, err
	}
	body := req.Body
	if body != nil && body != http.NoBody {
		if req.GetBody == nil {
			return nil, err
		}
		if body, err = req.GetBody(); err != nil {
			return nil, err
		}
	}
	next, terr := s.takeOver(req.Context(), base)
	if terr != nil {
		return nil, fmt.Errorf("%w; the sandbox emulator could not be restarted: %v", err, terr)
	}
	return s.base.RoundTrip(toEmulator(req, next, body))
}

// takeOver moves this process to the successor of the emulator at failed.
func (s *Sandbox) takeOver(ctx context.Context, failed string) (string, error) {
	s.takeover.Lock()
	defer s.takeover.Unlock()
	s.mu.Lock()
	cur, own := s.cur, s.own
	s.mu.Unlock()
	if cur != failed {
		return cur, nil // another request of this process already moved on
	}
	if own != nil && own.srv.URL() == failed {
		return "", errors.New("this process's own emulator refuses connections")
	}
	base, srv, err := s.attachOrStart(ctx)
	if err != nil {
		return "", err
	}
	s.mu.Lock()
	s.cur = base
	s.mu.Unlock()
	if srv != nil {
		s.log.Warn("sandbox: the process running the emulator has gone; this process now runs it on the saved world", "url", base, "state", s.state)
	} else {
		s.log.Info("sandbox: the emulator moved", "url", base)
	}
	return base, nil
}

func toEmulator(req *http.Request, base string, body io.ReadCloser) *http.Request {
	r := req.Clone(req.Context())
	if u, err := url.Parse(base); err == nil {
		r.URL.Scheme, r.URL.Host = u.Scheme, u.Host
	}
	r.Host = ""
	r.Body = body
	return r
}

// refused reports an error that proves nothing reached the emulator.
func refused(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial" || errors.Is(err, syscall.ECONNREFUSED)
}

func readAdvert(home string) (*advert, error) {
	b, err := os.ReadFile(filepath.Join(home, sandboxAdvert))
	if err != nil {
		return nil, err
	}
	var ad advert
	if err := json.Unmarshal(b, &ad); err != nil {
		return nil, err
	}
	if ad.URL == "" {
		return nil, errors.New("sandbox advert has no url")
	}
	return &ad, nil
}

// emulatorAnswers reports whether an emulator answers at base.
func emulatorAnswers(ctx context.Context, base string) bool {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/2/users/me", nil)
	if err != nil {
		return false
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	// Without a token the emulator answers 401: it is alive.
	return resp.StatusCode == http.StatusUnauthorized
}

// close stops the emulator this process runs, if any. It holds the start
// lock meanwhile, so a process taking over sees either this emulator
// answering or its lock free, never the moment in between.
func (s *Sandbox) close() error {
	s.mu.Lock()
	own := s.own
	s.own = nil
	s.mu.Unlock()
	defer s.releaseUser()
	if own == nil {
		return nil
	}
	unlock, lerr := s.lockStart(context.Background())
	if lerr == nil {
		defer unlock()
	}
	base := own.srv.URL()
	err := own.srv.Close()
	if ad, aerr := readAdvert(s.home); aerr == nil && ad.PID == os.Getpid() && ad.URL == base {
		_ = os.Remove(filepath.Join(s.home, sandboxAdvert))
	}
	_ = flock.Unlock(own.lock)
	_ = own.lock.Close()
	if err != nil {
		return fmt.Errorf("stop the sandbox emulator: %w", err)
	}
	return nil
}

func (s *Sandbox) releaseUser() {
	if s.user == nil {
		return
	}
	_ = os.Remove(s.user.Name())
	_ = s.user.Close()
	s.user = nil
}

func writeFileAtomic(path string, b []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+"-*.tmp")
	if err != nil {
		return err
	}
	tmp := f.Name()
	if err := f.Chmod(0o600); err == nil {
		_, err = f.Write(b)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			return os.Rename(tmp, path)
		}
	} else {
		f.Close()
	}
	_ = os.Remove(tmp)
	return err
}

// SandboxBusyError says which processes use the sandbox.
type SandboxBusyError struct{ PIDs []int }

func (e *SandboxBusyError) Error() string {
	ids := make([]string, len(e.PIDs))
	for i, p := range e.PIDs {
		ids[i] = strconv.Itoa(p)
		if p <= 0 {
			ids[i] = "(unknown pid)"
		}
	}
	return "the sandbox is in use by process " + strings.Join(ids, ", ") +
		" (a --sandbox command or server); stop it first: it would keep writing to the files a reset removes"
}

// ResetSandbox forgets everything the sandbox remembers so the next
// --sandbox command starts over with a new demo world: the world, the
// sandbox database (approvals, audit, limits) and the emulator token. The
// MCP bearer token (mcp_token) stays, so clients configured with it keep
// working. It refuses while any process uses the sandbox. cfg.Home is the
// sandbox home. It returns the paths it removed.
func ResetSandbox(ctx context.Context, cfg *config.Config) ([]string, error) {
	home := cfg.Home
	state, err := SandboxStateFile(cfg)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(home); errors.Is(err, fs.ErrNotExist) {
		return removeAll(nil, state)
	}
	// No process can start the emulator while the start locks are held.
	if err := os.MkdirAll(filepath.Dir(state), 0o700); err != nil {
		return nil, fmt.Errorf("sandbox state %s: %w", state, err)
	}
	unlock, err := lockStarts(ctx, home, state)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if pids := sandboxUsers(home, state); len(pids) > 0 {
		return nil, &SandboxBusyError{PIDs: pids}
	}
	entries, err := os.ReadDir(home)
	if err != nil {
		return nil, fmt.Errorf("sandbox home: %w", err)
	}
	var paths []string
	for _, e := range entries {
		if p := filepath.Join(home, e.Name()); p == xsim.WorldLockPath(state) || p == worldStartLock(state) {
			continue // lock files, like the home's own below
		}
		switch e.Name() {
		case "mcp_token", sandboxStartLock, sandboxOwnerLock:
			// The MCP bearer token is the user's client configuration; the
			// lock files must keep their identity while others may open them.
			continue
		case "media":
			// Files the user put there to attach to posts.
			continue
		}
		paths = append(paths, filepath.Join(home, e.Name()))
	}
	return removeAll(paths, state)
}

// sandboxUsers returns the processes that hold the emulator lock or a
// sandbox liveness lock in home, or serve its world file state.
func sandboxUsers(home, state string) []int {
	seen := map[int]bool{}
	if _, pid, ok := xsim.WorldOwner(state); ok {
		seen[pid] = true
	} else if held(xsim.WorldLockPath(state)) {
		seen[0] = true
	}
	if held(filepath.Join(home, sandboxOwnerLock)) {
		pid := 0
		if ad, err := readAdvert(home); err == nil {
			pid = ad.PID
		}
		seen[pid] = true
	}
	locks, _ := filepath.Glob(filepath.Join(home, sandboxLockDir, sandboxUserLock+"*.lock"))
	for _, p := range locks {
		if held(p) {
			name := strings.TrimPrefix(filepath.Base(p), sandboxUserLock)
			pid, _ := strconv.Atoi(name[:max(strings.IndexByte(name, '-'), 0)])
			seen[pid] = true
		}
	}
	var out []int
	for p := range seen {
		out = append(out, p)
	}
	sort.Ints(out)
	return out
}

// held reports whether another open file holds the lock on path.
func held(path string) bool {
	f, err := os.OpenFile(path, os.O_RDWR, 0o600)
	if err != nil {
		return false
	}
	defer f.Close()
	if err := flock.TryLock(f); err != nil {
		return errors.Is(err, flock.ErrLocked)
	}
	_ = flock.Unlock(f)
	return false
}

func removeAll(paths []string, state string) ([]string, error) {
	// The world is its file and the change log beside it.
	for _, p := range []string{state, xsim.WorldLogPath(state)} {
		if !slices.Contains(paths, p) {
			paths = append(paths, p)
		}
	}
	var removed []string
	for _, p := range paths {
		if _, err := os.Lstat(p); errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err := os.RemoveAll(p); err != nil {
			return removed, fmt.Errorf("sandbox reset: %w", err)
		}
		removed = append(removed, p)
	}
	return removed, nil
}

// nonBlank is list without its blank entries.
func nonBlank(list []string) []string {
	var out []string
	for _, s := range list {
		if strings.TrimSpace(s) != "" {
			out = append(out, s)
		}
	}
	return out
}

// SandboxAddress is where the sandbox emulator of cfg's home (a sandbox
// home) was last started, for showing; "" when none was.
func SandboxAddress(cfg *config.Config) string {
	ad, err := readAdvert(cfg.Home)
	if err != nil {
		return ""
	}
	return ad.URL
}
