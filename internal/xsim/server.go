package xsim

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"
)

// DefaultClientID is the OAuth client id the emulator accepts when
// Options.ClientID is empty.
const DefaultClientID = "xsim-sandbox-client"

// DefaultTokenTTL is how long an access token lives, as on X.
const DefaultTokenTTL = 2 * time.Hour

// Options configures a Server.
type Options struct {
	// World is the initial state; nil means DemoWorldAt(Seed, Now()).
	// The server copies it, so the caller's value is never mutated. A
	// world LoadWorld read from StateFile is taken to be what the file
	// holds, so changes are appended to its log from the first; any other
	// world is written whole at the first change.
	World *World
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// TokenTTL is the access-token lifetime; zero means DefaultTokenTTL.
	TokenTTL time.Duration
	// ClientID is the only OAuth client the emulator knows; empty means
	// DefaultClientID.
	ClientID string
	// RateLimits enforces X's per-endpoint limits (429 when exhausted).
	// Headers are sent either way. DefaultOptions turns it on.
	RateLimits bool
	// RateLimitOverrides replaces entries of the built-in limit table, keyed
	// by route ("POST /2/tweets").
	RateLimitOverrides map[string]RateLimit
	// Seed drives the demo world and fault probabilities.
	Seed int64
	// Logf receives one line per request (never tokens or bodies); nil
	// discards.
	Logf func(format string, args ...any)
	// DuplicateWindow is how far back a post's text is compared for X's
	// duplicate-content rule; zero means 24h.
	DuplicateWindow time.Duration
	// RedirectURIs, when non-empty, is the exact allow-list for the OAuth
	// redirect_uri; otherwise any loopback http(s) URI is accepted.
	RedirectURIs []string
	// StateFile, when set, is where the server keeps its world: every
	// request that changed the world has its change appended to the log
	// beside it (WorldLogPath) before the answer is sent, and the file is
	// rewritten (atomically, mode 0600) with the log's changes folded in
	// when the log has grown as large as the world, and on Close. Another
	// process can therefore carry on from the files (LoadWorld reads both)
	// at any moment, with every change a client has seen answered.
	StateFile string
	// WorldLock is the lock on StateFile (LockWorld) the caller took
	// before reading the world it passes; the server holds it until Close.
	// Without one, Start takes it: one emulator serves a world file.
	WorldLock *WorldLock
	// SaveEvery, when positive, coalesces those writes: a change is written
	// at most SaveEvery after it was made, together with every change made
	// meanwhile, and answers do not wait for the file. Close still writes
	// the last world, so a process that closes loses nothing; one killed
	// without closing loses the changes of its last SaveEvery.
	SaveEvery time.Duration
	// afterSave, in tests, is told after each write of StateFile.
	afterSave func()
	// rewriteLogAt, in tests, is the log size at which the world file is
	// rewritten; zero means as large as the world (at least minLogRewrite).
	rewriteLogAt int64
	// Access, when set, is the access level of every account's app
	// (World.Access): AccessPayPerUse models the self-serve X of 2026.
	// Empty keeps the world's level, which for a world that names none is
	// AccessEnterprise: the X every test before 2026 was written against.
	// SetUserAccess sets single accounts. New panics on a level that is not
	// one (ParseAccess reads configuration).
	Access Access
	// StrictSummons makes a reply to a post that is itself a reply to one
	// of the replier's posts need a summons of its own on self-serve
	// access: only the two summons X names (an @mention of the replier, a
	// quote of one of its posts) then count. By default such a reply is
	// summoned; see classifyReply for why.
	StrictSummons bool
	// OnSaveError is told when writing StateFile fails (the change stays in
	// memory and the next write tries again); nil reports through Logf.
	OnSaveError func(error)
}

// DefaultOptions returns options with rate limits enforced, which is how X
// behaves.
func DefaultOptions() Options {
	return Options{RateLimits: true, TokenTTL: DefaultTokenTTL, ClientID: DefaultClientID}
}

// Server is the emulator.
type Server struct {
	opts    Options
	now     func() time.Time
	mux     *http.ServeMux
	handler http.Handler
	routes  map[string]*route
	limits  map[string]RateLimit

	mu           sync.Mutex
	st           *state
	windows      map[string]*window
	faults       []*faultEntry
	counters     map[string]int64
	rng          *rand.Rand
	notEnrolled  bool
	closed       chan struct{}
	closeOnce    sync.Once
	httpSrv      *http.Server
	baseURL      string
	listenerDone chan struct{}
	// gen counts changes to the world, savedGen the last one written to
	// StateFile and durableGen the last one written and synced (all under
	// mu; a loaded world is its file, so all start equal); saveMu keeps
	// writes in order, and stopSaving (under saveMu) ends them once Close
	// has written the final world.
	gen, savedGen, durableGen uint64
	saveMu                    sync.Mutex
	stopSaving                bool
	// The files (under saveMu; see worldlog.go): wlog is the open change
	// log, logSize long, continuing the world file named journal, which is
	// worldSize long. canLog says they hold the state up to the changes
	// not yet recorded, so a record may be appended; else the next write
	// rewrites the world file. resume is the log LoadWorld read, for the
	// first append to carry on (its torn tail cut off).
	wlog             *os.File
	logSize          int64
	journal          string
	worldSize        int64
	canLog, mustSave bool
	resume           *worldSource
	// saveTimer (under mu) is the pending coalesced write, if any.
	saveTimer *time.Timer
}

// route is one endpoint of the emulator.
type route struct {
	key     string // "METHOD /path/{param}", as matched by the mux
	method  string
	path    string
	api     bool // requires a bearer token, counts against rate limits
	scopes  []string
	write   bool  // a mutation: refused for suspended accounts
	maxBody int64 // request body cap; 0 means 64 KiB
	handle  func(*call) reply
}

// call carries one request through a handler.
type call struct {
	s     *Server
	r     *http.Request
	body  []byte
	now   time.Time
	user  *User
	grant *Grant
	route *route
}

// New builds a server. It does not listen; use Start or Handler.
func New(opts Options) *Server {
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	if opts.TokenTTL <= 0 {
		opts.TokenTTL = DefaultTokenTTL
	}
	if opts.ClientID == "" {
		opts.ClientID = DefaultClientID
	}
	if opts.DuplicateWindow <= 0 {
		opts.DuplicateWindow = 24 * time.Hour
	}
	w, generated := opts.World, opts.World == nil
	var from *worldSource
	if generated {
		w = DemoWorldAt(opts.Seed, now())
	} else {
		from = w.from
		w = w.Clone()
	}
	// The state below is the world from now on; the caller's copy kept in
	// opts would hold a second one for as long as the server lives.
	opts.World = nil
	seed := uint64(opts.Seed)
	s := &Server{
		opts:     opts,
		now:      now,
		mux:      http.NewServeMux(),
		routes:   map[string]*route{},
		limits:   defaultLimits(),
		st:       newState(w),
		windows:  map[string]*window{},
		counters: map[string]int64{},
		rng:      rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		closed:   make(chan struct{}),
	}
	if opts.StateFile != "" {
		s.st.keepChanges()
		if from != nil && w.Journal != "" && filepath.Clean(from.path) == filepath.Clean(opts.StateFile) {
			// The files hold this world: its changes go to their log.
			s.canLog, s.journal, s.worldSize, s.resume = true, w.Journal, from.size, from
		}
	}
	if opts.Access != "" {
		if _, err := ParseAccess(string(opts.Access)); err != nil {
			panic(fmt.Sprintf("xsim: Options.Access: %v", err))
		}
		if s.st.access != opts.Access {
			s.st.access = opts.Access
			s.st.touch(touchedSettings, "")
			s.changed()
		}
	}
	for k, v := range opts.RateLimitOverrides {
		s.limits[k] = v
	}
	for _, rt := range s.routeTable() {
		s.routes[rt.key] = rt
		s.mux.Handle(rt.key, s.wrap(rt))
	}
	// x.com's Web Intent pages, where a person does by hand what an app
	// may not (see intent.go).
	s.mux.HandleFunc("GET /intent/{kind}", s.handleIntent)
	s.mux.HandleFunc("POST /intent/{kind}", s.handleIntent)
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.write(w, r, errRouteNotFound())
	})
	s.handler = s.mux
	for _, k := range counterNames() {
		s.counters[k] = 0
	}
	if generated {
		// A generated world exists nowhere else yet.
		s.gen = 1
	}
	return s
}

// Handler returns the emulator as an http.Handler (for httptest servers).
func (s *Server) Handler() http.Handler { return s.handler }

// Start listens on addr (empty means 127.0.0.1:0) and serves until ctx is
// done or Close is called. Only loopback addresses are accepted: the
// emulator must never be reachable from the network.
func (s *Server) Start(ctx context.Context, addr string) (string, error) {
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("xsim: listen address %q: %w", addr, err)
	}
	if host != "localhost" {
		ip := net.ParseIP(host)
		if ip == nil || !ip.IsLoopback() {
			return "", fmt.Errorf("xsim: listen address %q: host must be a loopback address", addr)
		}
	}
	s.mu.Lock()
	if s.httpSrv != nil {
		s.mu.Unlock()
		return "", errors.New("xsim: server already started")
	}
	s.mu.Unlock()
	if s.opts.StateFile != "" && s.opts.WorldLock == nil {
		l, err := LockWorld(s.opts.StateFile)
		if err != nil {
			return "", fmt.Errorf("xsim: %w", err)
		}
		s.opts.WorldLock = l
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return "", fmt.Errorf("xsim: listen: %w", err)
	}
	srv := &http.Server{Handler: s.handler, ReadHeaderTimeout: 10 * time.Second}
	base := "http://" + ln.Addr().String()
	done := make(chan struct{})
	s.mu.Lock()
	s.httpSrv = srv
	s.baseURL = base
	s.listenerDone = done
	s.mu.Unlock()
	go func() {
		defer close(done)
		_ = srv.Serve(ln)
	}()
	if l := s.opts.WorldLock; l != nil {
		if err := l.advertise(base); err != nil {
			_ = s.Close()
			return "", fmt.Errorf("xsim: %w", err)
		}
	}
	go func() {
		select {
		case <-ctx.Done():
			_ = s.Close()
		case <-s.closed:
		}
	}()
	return base, nil
}

// Close stops the listener (if any), aborts hung requests, writes the world
// to Options.StateFile one last time, durably, unless the file already
// holds it so, and releases resources. It is safe to
// call more than once.
func (s *Server) Close() error {
	var err error
	s.closeOnce.Do(func() {
		close(s.closed)
		s.mu.Lock()
		srv, done := s.httpSrv, s.listenerDone
		if s.saveTimer != nil {
			// The final write below covers what it would have written.
			s.saveTimer.Stop()
			s.saveTimer = nil
		}
		s.mu.Unlock()
		if srv != nil {
			err = srv.Close()
			<-done
		}
		err = errors.Join(err, s.save(true, true))
		// Only once the last world is in the file may another emulator
		// read it.
		err = errors.Join(err, s.opts.WorldLock.Release())
	})
	return err
}

// Save writes the world to Options.StateFile now, durably (a no-op without
// a StateFile). Changes are saved as they happen; Save is for a caller that
// needs the file to exist, such as a sandbox that has just started.
func (s *Server) Save() error {
	s.mu.Lock()
	s.gen++
	s.mu.Unlock()
	return s.save(true, false)
}

// changed records a change to the world. Runs under s.mu.
func (s *Server) changed() { s.gen++ }

// persist writes the world after a change made outside a request.
func (s *Server) persist() {
	s.mu.Lock()
	s.gen++
	s.mu.Unlock()
	s.saveChanges()
}

// saveChanges writes the world's changes now, or, with SaveEvery, makes
// sure a write is due within SaveEvery.
func (s *Server) saveChanges() {
	if s.opts.SaveEvery <= 0 || s.opts.StateFile == "" {
		_ = s.save(false, false)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.saveTimer != nil || s.gen == s.savedGen {
		return
	}
	select {
	case <-s.closed:
		// Close writes the last world itself.
		return
	default:
	}
	s.saveTimer = time.AfterFunc(s.opts.SaveEvery, func() {
		s.mu.Lock()
		s.saveTimer = nil
		s.mu.Unlock()
		// A change made from here on is either in this write or schedules
		// the next one.
		_ = s.save(false, false)
	})
}

// save makes Options.StateFile hold the world if it changed since the
// last write: it appends a record of the changes to the log or, when
// durable, when the log has grown as large as the world, or when no log
// continues the world file yet, rewrites the world file with everything in
// it and starts a new log. A record costs what the change touched; only a
// rewrite encodes the whole world. saveMu keeps the writes in order, and
// concurrent changes are covered by one write. Only a durable write waits
// for the disk: a write is in the kernel's hands before the answer, so a
// process that dies loses nothing, while an fsync per change would cost
// every emulated call milliseconds.
func (s *Server) save(durable, final bool) error {
	if s.opts.StateFile == "" {
		return nil
	}
	s.saveMu.Lock()
	defer s.saveMu.Unlock()
	if s.stopSaving {
		// The final world is written; a request that finished later must not
		// overwrite what a successor may already have changed.
		return nil
	}
	if final {
		s.stopSaving = true
		defer s.closeLog()
	}
	s.mu.Lock()
	if !s.mustSave && s.gen == s.savedGen && s.st.unchanged() && (!durable || s.gen == s.durableGen) {
		s.mu.Unlock()
		return nil
	}
	gen := s.gen
	var err error
	if !durable && s.canLog && s.logSize < s.rewriteAt() {
		rec := s.st.takeRecord()
		s.mu.Unlock()
		err = s.appendLog(rec)
	} else {
		w := s.st.snapshot(s.now())
		w.Journal = newJournal()
		var b []byte
		b, err = encodeWorld(w)
		s.st.resetChanges()
		s.mu.Unlock()
		if err == nil {
			err = s.rewrite(w.Journal, b, durable)
		}
	}
	if err != nil {
		// The changes are no longer recorded as such: the next write
		// rewrites the world, them included.
		s.canLog, s.mustSave = false, true
		if s.opts.OnSaveError != nil {
			s.opts.OnSaveError(err)
		} else {
			s.logf("xsim: %v", err)
		}
		return err
	}
	s.mustSave = false
	s.mu.Lock()
	s.savedGen = gen
	if durable {
		s.durableGen = gen
	}
	s.mu.Unlock()
	if s.opts.afterSave != nil {
		s.opts.afterSave()
	}
	return nil
}

// rewriteAt is the log size at which the world file is rewritten: as
// large as the world, so that the rewrites cost each change a constant
// share of one, whatever the world's size.
func (s *Server) rewriteAt() int64 {
	if s.opts.rewriteLogAt > 0 {
		return s.opts.rewriteLogAt
	}
	return max(minLogRewrite, s.worldSize)
}

// minLogRewrite is the log size below which the world file is not
// rewritten however small the world: replaying a log that long at the
// next start takes milliseconds.
const minLogRewrite = 1 << 20

// appendLog writes rec at the end of the log, opening it on the first
// record: the log LoadWorld read is carried on past its last whole line;
// one left from an older world file is started afresh. Runs under saveMu.
func (s *Server) appendLog(rec *logRecord) error {
	line, err := encodeLogLine(rec)
	if err != nil {
		return err
	}
	if s.wlog == nil {
		keep := int64(-1)
		if s.resume != nil && s.resume.logged {
			keep = s.resume.valid
		}
		s.resume = nil
		if err := s.openLog(keep); err != nil {
			return err
		}
	}
	n, err := s.wlog.Write(line)
	s.logSize += int64(n)
	if err != nil {
		return fmt.Errorf("save world: log: %w", err)
	}
	return nil
}

// openLog opens the log and cuts it to keep bytes or, with keep < 0,
// starts it afresh with the header for s.journal. Runs under saveMu.
func (s *Server) openLog(keep int64) error {
	f, err := os.OpenFile(WorldLogPath(s.opts.StateFile), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("save world: log: %w", err)
	}
	// The log holds OAuth grant hashes, as the world file does.
	if err := f.Chmod(0o600); err != nil {
		_ = f.Close()
		return fmt.Errorf("save world: log: %w", err)
	}
	s.wlog = f
	if keep >= 0 {
		// A last line cut short by a killed writer was never answered.
		if err := f.Truncate(keep); err != nil {
			return fmt.Errorf("save world: log: %w", err)
		}
		s.logSize = keep
		return nil
	}
	return s.startLog()
}

// startLog empties the log and writes the header naming s.journal. Runs
// under saveMu with the log open.
func (s *Server) startLog() error {
	head, err := encodeLogLine(&logRecord{Journal: s.journal})
	if err != nil {
		return err
	}
	if err := s.wlog.Truncate(0); err != nil {
		return fmt.Errorf("save world: log: %w", err)
	}
	n, err := s.wlog.Write(head)
	s.logSize = int64(n)
	if err != nil {
		return fmt.Errorf("save world: log: %w", err)
	}
	return nil
}

// rewrite replaces the world file with b, the world named journal, and
// starts a new log for it. The old log, whose header names the old world
// file, is ignored from the moment the new file is in place, so a process
// killed between the two loses nothing. Runs under saveMu.
func (s *Server) rewrite(journal string, b []byte, durable bool) error {
	if err := writeWorld(s.opts.StateFile, b, durable); err != nil {
		return err
	}
	s.journal, s.worldSize, s.resume = journal, int64(len(b)), nil
	var err error
	if s.wlog == nil {
		err = s.openLog(-1)
	} else {
		err = s.startLog()
	}
	if err != nil {
		return err
	}
	s.canLog = true
	return nil
}

// closeLog closes the log file, if open. Runs under saveMu.
func (s *Server) closeLog() {
	if s.wlog != nil {
		_ = s.wlog.Close()
		s.wlog = nil
	}
}

// URL is the base URL after Start ("" before).
func (s *Server) URL() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.baseURL
}

// DemoUserID is the id of the account tokens are issued for by default.
func (s *Server) DemoUserID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st.demoUserID
}

// DemoAccounts maps the sandbox account names to the users they act as:
// at least default, the demo user.
func (s *Server) DemoAccounts() map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := maps.Clone(s.st.demoAccounts)
	if out == nil {
		out = map[string]string{}
	}
	if _, ok := out["default"]; !ok {
		out["default"] = s.st.demoUserID
	}
	return out
}

// World returns a deep copy of the current state, for SaveWorld.
func (s *Server) World() *World {
	s.mu.Lock()
	w := s.st.snapshot(s.now())
	s.mu.Unlock()
	// snapshot copies structs, but their slices still share arrays with the
	// live state; a deep copy keeps callers from reaching into it.
	return w.Clone()
}

// SetSuspended puts an account in (or out of) X's suspended state: its
// writes answer 403 with X's suspended body.
func (s *Server) SetSuspended(userID string, v bool) {
	s.mu.Lock()
	if v {
		s.st.suspended[userID] = true
	} else {
		delete(s.st.suspended, userID)
	}
	s.st.touch(touchedSuspended, userID)
	s.mu.Unlock()
	s.persist()
}

// SetSubscription sets a user's X subscription (None, Basic, Premium or
// PremiumPlus), as a user changing their plan would.
func (s *Server) SetSubscription(userID, subscription string) {
	s.mu.Lock()
	if u := s.st.users[userID]; u != nil {
		u.SubscriptionType = subscription
		s.st.touch(touchedUser, userID)
	}
	s.mu.Unlock()
	s.persist()
}

// SetClientNotEnrolled makes every API call answer X's 403
// client-not-enrolled body, as X does for an app outside a Project.
func (s *Server) SetClientNotEnrolled(v bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.notEnrolled = v
}

// Routes lists the emulated endpoints as "METHOD /path/{param}" keys.
func (s *Server) Routes() []string {
	out := make([]string, 0, len(s.routes))
	for k := range s.routes {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func (s *Server) logf(format string, args ...any) {
	if s.opts.Logf != nil {
		s.opts.Logf(format, args...)
	}
}

// wrap runs the pipeline shared by every route: body cap, authentication,
// rate limits, fault injection, scopes, suspension, the handler, and the
// faults that act after the side effect.
func (s *Server) wrap(rt *route) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		status := s.serve(w, r, rt)
		s.logf("xsim: %s %s -> %d (%s)", r.Method, r.URL.Path, status, time.Since(start).Round(time.Microsecond))
	})
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request, rt *route) int {
	c := &call{s: s, r: r, route: rt}
	limit := rt.maxBody
	if limit <= 0 {
		limit = 64 << 10
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return s.write(w, r, reply{status: http.StatusRequestEntityTooLarge, problem: true, body: map[string]any{
				"title": "Payload Too Large", "detail": fmt.Sprintf("The request body exceeds %d bytes.", limit),
				"type": typeBlank, "status": http.StatusRequestEntityTooLarge,
			}})
		}
		return s.write(w, r, errInvalidParam("body", "", "The request body could not be read."))
	}
	c.body = body

	hdr := http.Header{}
	plan, early := s.admit(c, hdr)
	if early != nil {
		return s.write(w, r, *early)
	}

	// Faults that act before the request is processed.
	for _, arrive := range plan.arrive {
		arrive(r.Context())
	}
	if plan.latency > 0 {
		t := time.NewTimer(plan.latency)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			return 0
		case <-s.closed:
			t.Stop()
			return 0
		}
	}
	switch plan.pre {
	case faultTimeout:
		t := time.NewTimer(maxHang)
		defer t.Stop()
		select {
		case <-r.Context().Done():
		case <-s.closed:
		case <-t.C:
		}
		return 0
	case faultReset:
		resetConn(w)
		return 0
	case faultRateLimit:
		if hdr.Get("x-rate-limit-remaining") != "" {
			hdr.Set("x-rate-limit-remaining", "0")
		}
		rep := errTooManyRequests()
		rep.header = hdr
		return s.write(w, r, rep)
	case faultServerError:
		rep := errInternal(plan.status)
		rep.header = hdr
		return s.write(w, r, rep)
	case faultNotEnrolled:
		id := s.opts.ClientID
		if c.grant != nil {
			id = c.grant.ClientID
		}
		return s.write(w, r, errClientNotEnrolled(id))
	}

	rep := s.dispatch(c)
	rep.header = mergeHeader(rep.header, hdr)
	// The change is on disk before anyone hears of it (with SaveEvery, soon
	// after).
	s.saveChanges()

	// Faults that act after the side effect has been applied.
	switch plan.post {
	case faultApplyThenError:
		rep := errInternal(plan.status)
		rep.header = hdr
		return s.write(w, r, rep)
	case faultApplyThenReset:
		resetConn(w)
		return 0
	case faultTruncate:
		return s.writeMangled(w, rep, true)
	case faultMalformed:
		return s.writeMangled(w, rep, false)
	}
	return s.write(w, r, rep)
}

// admit authenticates the call, charges its rate-limit windows and plans
// its faults, all under the state lock. A non-nil reply ends the call.
func (s *Server) admit(c *call, hdr http.Header) (faultPlan, *reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rt, r := c.route, c.r
	c.now = s.now()
	if rt.api {
		g, u := s.authenticate(r, c.now)
		if g == nil {
			rep := errUnauthorized()
			return faultPlan{}, &rep
		}
		c.grant, c.user = g, u
		if s.notEnrolled {
			rep := errClientNotEnrolled(g.ClientID)
			return faultPlan{}, &rep
		}
		if s.takeRateLimit(rt, u.ID, g.ClientID, c.now, hdr) {
			rep := errTooManyRequests()
			rep.header = hdr
			return faultPlan{}, &rep
		}
	}
	return s.planFaults(rt, r.URL.Path), nil
}

// dispatch runs the handler under the state lock. The deferred unlock keeps
// a panicking handler (which net/http turns into a dropped connection) from
// wedging the whole emulator.
func (s *Server) dispatch(c *call) reply {
	s.mu.Lock()
	defer s.mu.Unlock()
	rt := c.route
	select {
	case <-s.closed:
		// Closing: a change now could never be saved, and the answer could
		// never be delivered.
		return errInternal(http.StatusServiceUnavailable)
	default:
	}
	if rt.write || !rt.api || rt.method != http.MethodGet {
		// Reads that change the world (billing, media processing) say so
		// themselves.
		s.changed()
	}
	switch {
	case rt.api && !hasScopes(c.grant.Scopes, rt.scopes):
		return errMissingScopes(missingScopes(c.grant.Scopes, rt.scopes))
	case rt.write && s.st.suspended[c.user.ID]:
		return errSuspended()
	case rt.api && removedFromSelfServe(rt.key) && s.selfServe(c):
		return errNotPermitted()
	default:
		return rt.handle(c)
	}
}

// maxHang bounds a timeout fault so a forgotten client cannot pin a
// goroutine forever.
const maxHang = 5 * time.Minute

func mergeHeader(dst, src http.Header) http.Header {
	if dst == nil {
		dst = http.Header{}
	}
	for k, v := range src {
		if _, ok := dst[k]; !ok {
			dst[k] = v
		}
	}
	return dst
}

func (s *Server) encode(rep reply) (contentType string, body []byte) {
	if rep.body == nil {
		return "", nil
	}
	b, err := json.Marshal(rep.body)
	if err != nil {
		b = []byte(`{"title":"Internal Server Error","detail":"encode failure","type":"about:blank","status":500}`)
	}
	if rep.problem {
		return "application/problem+json", b
	}
	return "application/json; charset=utf-8", b
}

func (s *Server) write(w http.ResponseWriter, _ *http.Request, rep reply) int {
	ct, body := s.encode(rep)
	for k, v := range rep.header {
		w.Header()[k] = v
	}
	if ct != "" {
		w.Header().Set("Content-Type", ct)
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	}
	if rep.status == 0 {
		rep.status = http.StatusOK
	}
	w.WriteHeader(rep.status)
	if len(body) > 0 {
		_, _ = w.Write(body)
	}
	return rep.status
}

// writeMangled sends the real status and headers with a broken body: cut in
// half (truncate) or replaced by something that is not JSON.
func (s *Server) writeMangled(w http.ResponseWriter, rep reply, truncate bool) int {
	ct, body := s.encode(rep)
	if truncate {
		body = body[:len(body)/2]
	} else {
		body = append([]byte("<html><body>upstream error"), bytes.Repeat([]byte{'}'}, 3)...)
	}
	for k, v := range rep.header {
		w.Header()[k] = v
	}
	if ct == "" {
		ct = "application/json; charset=utf-8"
	}
	w.Header().Set("Content-Type", ct)
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	if rep.status == 0 {
		rep.status = http.StatusOK
	}
	w.WriteHeader(rep.status)
	_, _ = w.Write(body)
	return rep.status
}

// resetConn drops the connection without an HTTP answer. On a real
// listener it hijacks the socket and closes it with SO_LINGER=0 so the client
// sees a TCP reset; otherwise it aborts the handler, which closes the
// connection.
func resetConn(w http.ResponseWriter) {
	if hj, ok := w.(http.Hijacker); ok {
		conn, _, err := hj.Hijack()
		if err == nil {
			if tc, ok := conn.(*net.TCPConn); ok {
				_ = tc.SetLinger(0)
			}
			_ = conn.Close()
			return
		}
	}
	panic(http.ErrAbortHandler)
}

// jsonBody decodes the request body strictly (unknown fields are errors, as
// the spec's additionalProperties:false says).
func (c *call) jsonBody(v any) *reply {
	if len(bytes.TrimSpace(c.body)) == 0 {
		rep := errInvalidParam("body", "", "The request body is empty; a JSON object is required.")
		return &rep
	}
	dec := json.NewDecoder(bytes.NewReader(c.body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		rep := errInvalidParam("body", "", fmt.Sprintf("The request body is not valid JSON for this endpoint: %v", err))
		return &rep
	}
	if dec.More() {
		rep := errInvalidParam("body", "", "The request body has trailing data after the JSON object.")
		return &rep
	}
	return nil
}
