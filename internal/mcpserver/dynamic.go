package mcpserver

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tuitbot/tuitbot/internal/apperr"
)

// Dynamic says when a session finds toolsets on demand: it then starts
// with the selection (the default one when none is given) and the tools
// list_toolsets, find_tools and enable_toolset, and enabling a toolset
// sends notifications/tools/list_changed.
type Dynamic string

// The dynamic modes. Off is the zero value.
const (
	DynamicOff Dynamic = ""
	// DynamicAuto turns it on for a session whose client declares that it
	// handles notifications/tools/list_changed (it opens
	// subscriptions/listen with toolsListChanged).
	DynamicAuto Dynamic = "auto"
	DynamicOn   Dynamic = "on"
)

// ParseDynamic accepts auto, on and off.
func ParseDynamic(s string) (Dynamic, error) {
	switch s {
	case "off", "false":
		return DynamicOff, nil
	case "", "auto":
		return DynamicAuto, nil
	case "on", "true":
		return DynamicOn, nil
	}
	return "", fmt.Errorf("dynamic toolsets %q: allowed values: auto, on, off", s)
}

// The HTTP request headers that select a session's tools, read when the
// session starts. Each is a comma-separated list, as the flags take.
const (
	HeaderToolsets     = "X-MCP-Toolsets"
	HeaderTools        = "X-MCP-Tools"
	HeaderExcludeTools = "X-MCP-Exclude-Tools"
)

// surfaces keeps what each session lists. The server registers every tool
// a session may hold (the profile's, without the excluded ones); a
// session lists, and may call, only its own part of them.
type surfaces struct {
	mode       Dynamic
	registered map[string]*Tool
	order      []string // registered names, in registry order
	// static is what a session lists without a header or dynamic toolsets;
	// start is what a dynamic session starts with.
	static, start []string
	// tools are the registered tools as they are listed, with their
	// handlers: the middleware lists and calls them (see build).
	tools map[string]servedTool
	srv   *mcp.Server

	mu       sync.Mutex
	sessions map[*mcp.ServerSession]*sessionSurface
}

type sessionSurface struct {
	dynamic bool
	listed  map[string]bool
	// seen records that the session has listed the tools.
	seen bool
	// header is the session's own selection, when its headers gave one.
	header []string
}

func newSurfaces(mode Dynamic, registered, static []*Tool, hasSelection bool) *surfaces {
	s := &surfaces{mode: mode, registered: map[string]*Tool{}, sessions: map[*mcp.ServerSession]*sessionSurface{}}
	for _, t := range registered {
		s.registered[t.Name] = t
		s.order = append(s.order, t.Name)
	}
	for _, t := range static {
		s.static = append(s.static, t.Name)
	}
	s.start = s.static
	if !hasSelection {
		s.start = s.within(defaultTools())
	}
	return s
}

// servedTool is a registered tool as tools/list shows it, and its handler.
type servedTool struct {
	listed *mcp.Tool
	h      mcp.ToolHandler
}

// notify tells the sessions that the tool list changed. The SDK sends
// notifications/tools/list_changed when a tool is added to it, even one it
// has; its own list of tools is never answered (the middleware answers
// tools/list), so the first tool in registry order serves.
func (s *surfaces) notify() {
	if len(s.order) == 0 {
		return
	}
	t := s.tools[s.order[0]]
	s.srv.AddTool(t.listed, t.h)
}

// within keeps the names this server registered.
func (s *surfaces) within(names []string) []string {
	var out []string
	for _, n := range names {
		if s.registered[n] != nil && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// headerSelection reads the session's selection from its HTTP headers;
// nil when they name none.
func (s *surfaces) headerSelection(h http.Header) ([]string, error) {
	list := func(k string) []string {
		var out []string
		for _, v := range h.Values(k) {
			for _, n := range strings.Split(v, ",") {
				if n = strings.TrimSpace(n); n != "" {
					out = append(out, n)
				}
			}
		}
		return out
	}
	sel := Selection{Toolsets: list(HeaderToolsets), Tools: list(HeaderTools), ExcludeTools: list(HeaderExcludeTools)}
	if err := CheckToolsets("header "+HeaderToolsets, sel.Toolsets); err != nil {
		return nil, err
	}
	if err := CheckTools("header "+HeaderTools, sel.Tools); err != nil {
		return nil, err
	}
	if err := CheckTools("header "+HeaderExcludeTools, sel.ExcludeTools); err != nil {
		return nil, err
	}
	var outside []string
	for _, n := range sel.Tools {
		if s.registered[n] == nil {
			outside = append(outside, n)
		}
	}
	if len(outside) > 0 {
		return nil, fmt.Errorf("header %s: %s not served here (the profile or the server's exclusions leave it out)", HeaderTools, quoteList(outside))
	}
	if sel.Empty() && len(sel.ExcludeTools) == 0 {
		return nil, nil
	}
	base := s.static
	if !sel.Empty() {
		in, err := sel.names()
		if err != nil {
			return nil, err
		}
		base = nil
		for _, n := range s.order {
			if in[n] {
				base = append(base, n)
			}
		}
	}
	out := []string{}
	for _, n := range base {
		if !slices.Contains(sel.ExcludeTools, n) {
			out = append(out, n)
		}
	}
	return out, nil
}

// session returns ss's surface, creating it from the request's headers on
// the session's first request.
func (s *surfaces) session(ss *mcp.ServerSession, extra *mcp.RequestExtra) (*sessionSurface, error) {
	s.mu.Lock()
	st := s.sessions[ss]
	s.mu.Unlock()
	if st != nil {
		return st, nil
	}
	st = &sessionSurface{}
	if extra != nil && extra.Header != nil {
		h, err := s.headerSelection(extra.Header)
		if err != nil {
			return nil, err
		}
		st.header = h
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	// A concurrent request of the same session may have come first.
	if first := s.sessions[ss]; first != nil {
		return first, nil
	}
	s.setListed(st, s.mode == DynamicOn)
	s.prune()
	s.sessions[ss] = st
	return st, nil
}

// setListed fills st's listed tools for dynamic or static use.
func (s *surfaces) setListed(st *sessionSurface, dynamic bool) {
	st.dynamic = dynamic
	base := s.static
	switch {
	case st.header != nil:
		base = st.header
	case dynamic:
		base = s.start
	}
	st.listed = map[string]bool{}
	for _, n := range base {
		st.listed[n] = true
	}
	if dynamic {
		names, _ := toolsetTools(dynamicToolset)
		for _, n := range s.within(names) {
			st.listed[n] = true
		}
	}
}

// prune forgets sessions that have ended; called with mu held.
func (s *surfaces) prune() {
	if len(s.sessions) < 32 || s.srv == nil {
		return
	}
	live := map[*mcp.ServerSession]bool{}
	for ss := range s.srv.Sessions() {
		live[ss] = true
	}
	for ss := range s.sessions {
		if !live[ss] {
			delete(s.sessions, ss)
		}
	}
}

// middleware lists and calls only the session's tools.
func (s *surfaces) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch method {
		case "initialize", "tools/list", "tools/call", "subscriptions/listen":
		default:
			return next(ctx, method, req)
		}
		ss, _ := req.GetSession().(*mcp.ServerSession)
		if ss == nil {
			return next(ctx, method, req)
		}
		st, err := s.session(ss, req.GetExtra())
		if err != nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
		}
		switch method {
		case "subscriptions/listen":
			if p, ok := req.GetParams().(*mcp.SubscriptionsListenParams); ok && s.mode == DynamicAuto &&
				p.Notifications != nil && p.Notifications.ToolsListChanged {
				s.mu.Lock()
				changed := !st.dynamic && st.seen
				if !st.dynamic {
					s.setListed(st, true)
				}
				s.mu.Unlock()
				if changed {
					s.notify()
				}
			}
		case "tools/list":
			// The SDK answers (its paging and caching fields), and the
			// session's tools replace the ones it holds, in its order: by
			// name.
			res, err := next(ctx, method, req)
			if lr, ok := res.(*mcp.ListToolsResult); ok && err == nil {
				s.mu.Lock()
				st.seen = true
				kept := make([]*mcp.Tool, 0, len(st.listed))
				for n := range st.listed {
					kept = append(kept, s.tools[n].listed)
				}
				dynamic := st.dynamic
				s.mu.Unlock()
				slices.SortFunc(kept, func(a, b *mcp.Tool) int { return strings.Compare(a.Name, b.Name) })
				lr.Tools = kept
				// The list is the session's (its selection, its profile),
				// and it only changes when the session enables a toolset,
				// which a dynamic session is told of: a fixed selection may
				// be cached for the hour, a dynamic one is re-read.
				lr.CacheScope = "private"
				if lr.TTLMs = listTTL; dynamic {
					lr.TTLMs = 0
				}
			}
			return res, err
		case "tools/call":
			call, ok := req.(*mcp.CallToolRequest)
			if !ok || call.Params == nil || s.registered[call.Params.Name] == nil {
				// The SDK answers a tool it does not know.
				return next(ctx, method, req)
			}
			s.mu.Lock()
			listed, dynamic := st.listed[call.Params.Name], st.dynamic
			s.mu.Unlock()
			if !listed {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: notListed(dynamic, call.Params.Name)}
			}
			res, err := s.tools[call.Params.Name].h(ctx, call)
			if err == nil && res != nil && res.Content == nil {
				// As the SDK answers: an empty list, never null.
				res.Content = []mcp.Content{}
			}
			return res, err
		}
		return next(ctx, method, req)
	}
}

// listTTL is how long a client may keep a fixed selection's tools/list:
// it changes only with a new server, which starts a new session.
const listTTL = int(time.Hour / time.Millisecond)

// notListed says why a registered tool is not the session's and how to
// get it.
func notListed(dynamic bool, name string) string {
	ts := ToolsetOf(name)
	if dynamic {
		return fmt.Sprintf("tool %s is in toolset %s, which this session has not enabled; call enable_toolset with name %q first", name, ts, ts)
	}
	return fmt.Sprintf("tool %s (toolset %s) is not in this session's selection", name, ts)
}

// enable lists toolset name's tools in ss's session. It returns the
// tools it added, those already listed, and those the profile or the
// server's exclusions leave out.
func (s *surfaces) enable(ss *mcp.ServerSession, name string) (ToolsetEnabled, error) {
	tools, ok := toolsetTools(name)
	if !ok || name == dynamicToolset {
		return ToolsetEnabled{}, apperr.New(apperr.InvalidInput, "name: unknown toolset %q; list_toolsets lists them", name)
	}
	out := ToolsetEnabled{Toolset: name, Added: []string{}, AlreadyListed: []string{}, NotServed: []string{}}
	s.mu.Lock()
	st := s.sessions[ss]
	if st == nil || !st.dynamic {
		s.mu.Unlock()
		return out, apperr.New(apperr.InvalidInput, "this session does not find toolsets on demand; start the server with --dynamic-toolsets")
	}
	for _, n := range tools {
		switch {
		case s.registered[n] == nil:
			out.NotServed = append(out.NotServed, n)
		case st.listed[n]:
			out.AlreadyListed = append(out.AlreadyListed, n)
		default:
			st.listed[n] = true
			out.Added = append(out.Added, n)
		}
	}
	s.mu.Unlock()
	if len(out.Added) > 0 {
		s.notify()
	}
	return out, nil
}

// ToolsetEnabled is enable_toolset's data.
type ToolsetEnabled struct {
	Toolset       string   `json:"toolset"`
	Added         []string `json:"added"`
	AlreadyListed []string `json:"already_listed"`
	// NotServed are the toolset's tools this server's profile or
	// exclusions leave out: enabling never widens them.
	NotServed []string `json:"not_served"`
}

// ToolsetInfo is one toolset in list_toolsets.
type ToolsetInfo struct {
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Enabled     bool     `json:"enabled"`
	Tools       []string `json:"tools"`
}

// toolsetsOf lists the toolsets with the tools this server serves.
func (s *surfaces) toolsetsOf(ss *mcp.ServerSession) []ToolsetInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.sessions[ss]
	var out []ToolsetInfo
	for _, ts := range Toolsets() {
		served := s.within(ts.Tools)
		if len(served) == 0 || ts.Name == dynamicToolset {
			continue
		}
		enabled := st != nil
		for _, n := range served {
			if st == nil || !st.listed[n] {
				enabled = false
			}
		}
		out = append(out, ToolsetInfo{Name: ts.Name, Description: ts.Description, Enabled: enabled, Tools: served})
	}
	return out
}

// FoundTool is one result of find_tools.
type FoundTool struct {
	Name        string `json:"name"`
	Title       string `json:"title"`
	Toolset     string `json:"toolset"`
	Listed      bool   `json:"listed"`
	Description string `json:"description"`
}

// find ranks the served tools against query. Each word of the query
// scores where it is found best: in the tool's name, then its title, then
// its description; the first word, which usually names the action
// ("schedule a post"), counts double.
func (s *surfaces) find(ss *mcp.ServerSession, query string, limit int) []FoundTool {
	words := queryWords(query)
	type scored struct {
		t     *Tool
		score int
	}
	var hits []scored
	for _, n := range s.order {
		t := s.registered[n]
		if t.OnDemand {
			continue
		}
		name := strings.Fields(strings.ReplaceAll(t.Name, "_", " "))
		title := queryWords(t.Title)
		desc := queryWords(t.Description)
		score := 0
		for i, w := range words {
			best := 0
			switch {
			case matches(name, w) > 0:
				best = 6
			case matches(title, w) > 0:
				best = 4
			case matches(desc, w) > 0:
				best = min(matches(desc, w), 2)
			}
			if i == 0 {
				best *= 2
			}
			score += best
		}
		if score > 0 {
			hits = append(hits, scored{t, score})
		}
	}
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].score > hits[j].score })
	if len(hits) > limit {
		hits = hits[:limit]
	}
	s.mu.Lock()
	st := s.sessions[ss]
	var listed map[string]bool
	if st != nil {
		listed = maps.Clone(st.listed)
	}
	s.mu.Unlock()
	out := []FoundTool{}
	for _, h := range hits {
		out = append(out, FoundTool{Name: h.t.Name, Title: h.t.Title, Toolset: ToolsetOf(h.t.Name),
			Listed: listed[h.t.Name], Description: firstSentence(h.t.Description)})
	}
	return out
}

// firstSentence keeps a description short in find_tools' answer; the
// whole of it is listed once the toolset is enabled.
func firstSentence(s string) string {
	if i := strings.Index(s, ". "); i >= 0 {
		return s[:i+1]
	}
	return s
}

// stopWord reports a word that carries no meaning in a query.
func stopWord(w string) bool {
	switch w {
	case "a", "an", "the", "to", "of", "for", "in", "on", "my", "and", "or", "with", "is":
		return true
	}
	return false
}

func queryWords(s string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9')
	}) {
		if !stopWord(w) {
			out = append(out, w)
		}
	}
	return out
}

// matches counts the words equal to w or that w is a stem of ("post"
// matches "posts", "posting").
func matches(words []string, w string) int {
	n := 0
	for _, x := range words {
		if x == w || len(w) >= 4 && strings.HasPrefix(x, w) {
			n++
		}
	}
	return n
}
