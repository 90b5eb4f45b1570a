// The rules in this file keep the layering honest: they read the build as
// `go list` sees it and fail naming the package and the dependency that
// broke a rule, instead of relying on review to notice an import.

package arch

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/constant"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
)

// forbiddenImport is one dependency the build must never contain: From
// must not depend on To, directly or through other packages. Paths inside
// the module are relative to it ("internal/app"); others are full import
// paths ("database/sql").
type forbiddenImport struct {
	From, To string
	Why      string
}

// forbiddenImports are the layering rules. Tests are not part of the build,
// so a test package may still reach across (mcpserver's tests build an App).
var forbiddenImports = []forbiddenImport{
	{"internal/mcpserver", "internal/xsim", "the MCP server must not be able to reach the X emulator; only cmd and app choose it"},
	{"internal/mcpserver", "internal/app", "the MCP server receives its services (mcpserver.Deps); app is the composition root above it"},
	{"internal/autopilot", "internal/app", "the autopilot receives its services (autopilot.Deps); app is the composition root above it"},
	{"internal/gateway", "internal/mcpserver", "the gateway serves every caller (MCP, autopilot, CLI) and must not know about any of them"},
	{"internal/gateway", "internal/envelope", "the gateway does not speak the MCP envelope; shared types live below both (internal/rollback)"},
	{"internal/gateway", "internal/notify", "the gateway records notices through its own Notifier interface; nothing is sent from a tool call"},
	{"internal/gateway", "internal/approvallink", "links decide through the gateway's API (ApproveWith), never the reverse"},
	{"internal/mcpserver", "internal/approvallink", "no tool may mint, read or return an approval link: an agent must never be able to approve its own request"},
	{"internal/notify", "internal/approvallink", "the dispatcher gets links through its LinkMaker interface, so it can run without links"},
	{"internal/policy", "database/sql", "the policy engine decides; its counters live with the store (internal/store/counters) behind policy.CounterTx"},
}

// listedPackage is the part of `go list -json` output the rules read.
type listedPackage struct {
	ImportPath string
	Dir        string
	GoFiles    []string
	Imports    []string
	Export     string
	Standard   bool
	Module     *struct {
		Path string
		Main bool
	}
}

// moduleGraph is the module's packages and everything they depend on, as
// `go list -deps` sees the build (no tests).
type moduleGraph struct {
	module string                    // the module path
	pkgs   map[string]*listedPackage // by import path
}

var (
	graphOnce sync.Once
	graph     *moduleGraph
	graphErr  error
)

// loadModuleGraph lists the module once per test binary; export data is
// included because the X-write rule type-checks against it.
func loadModuleGraph(t *testing.T) *moduleGraph {
	t.Helper()
	graphOnce.Do(func() { graph, graphErr = listModule() })
	if graphErr != nil {
		t.Fatal(graphErr)
	}
	return graph
}

func listModule() (*moduleGraph, error) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		return nil, fmt.Errorf("the go command is needed to list the build: %w", err)
	}
	out, err := exec.Command(goBin, "env", "GOMOD").Output()
	if err != nil {
		return nil, fmt.Errorf("go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return nil, errors.New("not inside a Go module")
	}
	cmd := exec.Command(goBin, "list", "-e", "-deps", "-export", "-json", "./...")
	cmd.Dir = filepath.Dir(gomod)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err = cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list -deps -export -json ./...: %w\n%s", err, stderr.String())
	}
	g := &moduleGraph{pkgs: map[string]*listedPackage{}}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		p := new(listedPackage)
		if err := dec.Decode(p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, fmt.Errorf("decode go list output: %w", err)
		}
		g.pkgs[p.ImportPath] = p
		if p.Module != nil && p.Module.Main {
			g.module = p.Module.Path
		}
	}
	if g.module == "" {
		return nil, errors.New("go list reported no package of the main module")
	}
	return g, nil
}

// full turns a module-relative path into an import path.
func (g *moduleGraph) full(p string) string {
	if strings.HasPrefix(p, "internal/") || strings.HasPrefix(p, "cmd/") {
		return g.module + "/" + p
	}
	return p
}

// short is the inverse of full, for messages.
func (g *moduleGraph) short(p string) string {
	return strings.TrimPrefix(p, g.module+"/")
}

// importChain returns a shortest chain of imports from one package to
// another, nil when from does not depend on to.
func (g *moduleGraph) importChain(from, to string) []string {
	prev := map[string]string{from: ""}
	queue := []string{from}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		if cur == to {
			var chain []string
			for p := cur; p != ""; p = prev[p] {
				chain = append(chain, p)
			}
			slices.Reverse(chain)
			return chain
		}
		pkg := g.pkgs[cur]
		if pkg == nil {
			continue
		}
		for _, imp := range pkg.Imports {
			if _, seen := prev[imp]; !seen {
				prev[imp] = cur
				queue = append(queue, imp)
			}
		}
	}
	return nil
}

func TestForbiddenImports(t *testing.T) {
	g := loadModuleGraph(t)
	for _, r := range forbiddenImports {
		t.Run(r.From+"_not_"+r.To, func(t *testing.T) {
			from := g.full(r.From)
			if g.pkgs[from] == nil {
				// A renamed package must not turn its rule into a silent pass.
				t.Fatalf("rule %s ↛ %s: package %s is not in the build; update the rule", r.From, r.To, from)
			}
			chain := g.importChain(from, g.full(r.To))
			if chain == nil {
				return
			}
			for i := range chain {
				chain[i] = g.short(chain[i])
			}
			t.Errorf("forbidden dependency %s ↛ %s: %s depends on %s through %s (%s)",
				r.From, r.To, r.From, r.To, strings.Join(chain, " → "), r.Why)
		})
	}
}

// TestImportChainFindsIndirectEdges proves the rule above looks through
// intermediate packages, so a forbidden dependency cannot hide one import
// away.
func TestImportChainFindsIndirectEdges(t *testing.T) {
	g := &moduleGraph{module: "m", pkgs: map[string]*listedPackage{
		"m/internal/a": {ImportPath: "m/internal/a", Imports: []string{"fmt", "m/internal/b"}},
		"m/internal/b": {ImportPath: "m/internal/b", Imports: []string{"m/internal/c"}},
		"m/internal/c": {ImportPath: "m/internal/c", Imports: []string{"database/sql"}},
		"fmt":          {ImportPath: "fmt", Standard: true},
		"database/sql": {ImportPath: "database/sql", Standard: true},
	}}
	tests := []struct {
		from, to string
		want     []string
	}{
		{"internal/a", "database/sql", []string{"m/internal/a", "m/internal/b", "m/internal/c", "database/sql"}},
		{"internal/b", "internal/c", []string{"m/internal/b", "m/internal/c"}},
		{"internal/c", "internal/a", nil},
		{"internal/a", "os", nil},
	}
	for _, tc := range tests {
		if got := g.importChain(g.full(tc.from), g.full(tc.to)); !slices.Equal(got, tc.want) {
			t.Errorf("importChain(%s, %s) = %q, want %q", tc.from, tc.to, got, tc.want)
		}
	}
}

// xWriters are the packages allowed to call the X client's write methods:
// the client itself, and the executors the mutation gateway runs (so every
// write passes policy, approval, idempotency and audit).
var xWriters = []string{"internal/xapi", "internal/actions"}

// writeVerbs are the HTTP methods that change something on X.
var writeVerbs = []string{"POST", "PUT", "PATCH", "DELETE"}

// exportImporter type-checks against the compiler's export data that
// `go list -export` produced, so no package is parsed twice.
func (g *moduleGraph) exportImporter(fset *token.FileSet) types.Importer {
	return importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		p := g.pkgs[path]
		if p == nil || p.Export == "" {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(p.Export)
	})
}

// checkPackage parses and type-checks one listed package from source.
func (g *moduleGraph) checkPackage(fset *token.FileSet, p *listedPackage) ([]*ast.File, *types.Info, error) {
	var files []*ast.File
	for _, name := range p.GoFiles {
		f, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, nil, err
		}
		files = append(files, f)
	}
	info, err := g.typeCheck(fset, p.ImportPath, files)
	return files, info, err
}

func (g *moduleGraph) typeCheck(fset *token.FileSet, path string, files []*ast.File) (*types.Info, error) {
	info := &types.Info{
		Types:      map[ast.Expr]types.TypeAndValue{},
		Uses:       map[*ast.Ident]types.Object{},
		Defs:       map[*ast.Ident]types.Object{},
		Selections: map[*ast.SelectorExpr]*types.Selection{},
	}
	conf := types.Config{Importer: g.exportImporter(fset)}
	if _, err := conf.Check(path, fset, files, info); err != nil {
		return nil, fmt.Errorf("type-check %s: %w", path, err)
	}
	return info, nil
}

// clientMethod returns the method a selection picks when it is a method of
// the X client (*xapi.Client), nil otherwise.
func (g *moduleGraph) clientMethod(sel *types.Selection) *types.Func {
	if sel == nil || (sel.Kind() != types.MethodVal && sel.Kind() != types.MethodExpr) {
		return nil
	}
	if fn, ok := sel.Obj().(*types.Func); ok && g.isClientMethod(fn) {
		return fn
	}
	return nil
}

// isClientMethod reports a method declared on xapi.Client.
func (g *moduleGraph) isClientMethod(fn *types.Func) bool {
	if fn.Pkg() == nil || fn.Pkg().Path() != g.full("internal/xapi") {
		return false
	}
	recv := fn.Type().(*types.Signature).Recv()
	if recv == nil {
		return false
	}
	t := recv.Type()
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	n, ok := t.(*types.Named)
	return ok && n.Obj().Name() == "Client"
}

// xWriteMethods derives the X client's write methods from its source: a
// method writes when its body names a write verb (a string constant such
// as "POST" or http.MethodDelete) or calls a client method that does.
// Deriving it means a new write method is covered without editing a list.
func (g *moduleGraph) xWriteMethods() (map[string]bool, error) {
	p := g.pkgs[g.full("internal/xapi")]
	if p == nil {
		return nil, errors.New("internal/xapi is not in the build")
	}
	fset := token.NewFileSet()
	files, info, err := g.checkPackage(fset, p)
	if err != nil {
		return nil, err
	}
	direct := map[string]bool{}
	calls := map[string][]string{}
	for _, f := range files {
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Recv == nil || fd.Body == nil {
				continue
			}
			self, ok := info.Defs[fd.Name].(*types.Func)
			if !ok || !g.isClientMethod(self) {
				continue
			}
			name := self.Name()
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				switch n := n.(type) {
				case ast.Expr:
					if tv, ok := info.Types[n]; ok && tv.Value != nil && tv.Value.Kind() == constant.String &&
						slices.Contains(writeVerbs, strings.ToUpper(constant.StringVal(tv.Value))) {
						direct[name] = true
					}
					if se, ok := n.(*ast.SelectorExpr); ok {
						if m := g.clientMethod(info.Selections[se]); m != nil {
							calls[name] = append(calls[name], m.Name())
						}
					}
				}
				return true
			})
		}
	}
	writes := map[string]bool{}
	var visit func(m string, seen map[string]bool) bool
	visit = func(m string, seen map[string]bool) bool {
		if direct[m] {
			return true
		}
		if seen[m] {
			return false
		}
		seen[m] = true
		for _, c := range calls[m] {
			if visit(c, seen) {
				return true
			}
		}
		return false
	}
	for m := range calls {
		if visit(m, map[string]bool{}) {
			writes[m] = true
		}
	}
	for m := range direct {
		writes[m] = true
	}
	// Unexported helpers cannot be called from outside xapi.
	for m := range writes {
		if !token.IsExported(m) {
			delete(writes, m)
		}
	}
	return writes, nil
}

// xWriteCalls lists every use of an X write method in one type-checked
// package, as "file:line: (*xapi.Client).Method".
func (g *moduleGraph) xWriteCalls(fset *token.FileSet, files []*ast.File, info *types.Info, writes map[string]bool) []string {
	var out []string
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			se, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if m := g.clientMethod(info.Selections[se]); m != nil && writes[m.Name()] {
				pos := fset.Position(se.Sel.Pos())
				out = append(out, fmt.Sprintf("%s:%d: (*xapi.Client).%s", filepath.Base(pos.Filename), pos.Line, m.Name()))
			}
			return true
		})
	}
	return out
}

// TestXWriteMethodsAreFound pins the derivation above to the client as it
// is, so the rule below cannot pass because it stopped recognising writes.
func TestXWriteMethodsAreFound(t *testing.T) {
	writes, err := loadModuleGraph(t).xWriteMethods()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"PostTweet", "DeleteTweet", "Like", "Unlike", "Retweet", "Unretweet", "Bookmark", "Unbookmark",
		"Follow", "Unfollow", "UploadMedia", "SetAltText", "Raw", "EditTweet"} {
		if !writes[m] {
			t.Errorf("(*xapi.Client).%s is not recognised as a write method", m)
		}
	}
	for _, m := range []string{"Me", "MyUserID", "GetTweet", "GetTweets", "SearchRecent", "GetUser", "Mentions", "HomeTimeline",
		"Followers", "Ready", "AccountID", "RateLimits", "EditState"} {
		if writes[m] {
			t.Errorf("(*xapi.Client).%s is a read but is recognised as a write method", m)
		}
	}
}

// TestOnlyActionsWriteToX checks that no package outside the gateway's
// executors calls an X write method, so no write can bypass the gateway.
func TestOnlyActionsWriteToX(t *testing.T) {
	g := loadModuleGraph(t)
	writes, err := g.xWriteMethods()
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for path, p := range g.pkgs {
		if p.Module != nil && p.Module.Main && !slices.Contains(xWriters, g.short(path)) {
			paths = append(paths, path)
		}
	}
	sort.Strings(paths)
	for _, path := range paths {
		fset := token.NewFileSet()
		files, info, err := g.checkPackage(fset, g.pkgs[path])
		if err != nil {
			t.Error(err)
			continue
		}
		for _, call := range g.xWriteCalls(fset, files, info, writes) {
			t.Errorf("forbidden X write %s ↛ (*xapi.Client) write methods: %s uses %s; only %s may write to X, through the gateway",
				g.short(path), g.short(path), call, strings.Join(xWriters, " and "))
		}
	}
}

// TestXWriteScanCatchesABypass feeds the scan a package that likes a tweet
// directly, through a method value and through a func field, and expects
// each use to be reported.
func TestXWriteScanCatchesABypass(t *testing.T) {
	g := loadModuleGraph(t)
	writes, err := g.xWriteMethods()
	if err != nil {
		t.Fatal(err)
	}
	src := `package bypass

import (
	"context"

	"` + g.full("internal/xapi") + `"
)

type deps struct{ X func() (*xapi.Client, error) }

func direct(ctx context.Context, c *xapi.Client) { _, _, _ = c.Like(ctx, "1") }

func value(c *xapi.Client) any { return c.DeleteTweet }

func field(ctx context.Context, d deps) {
	x, _ := d.X()
	_, _, _ = x.PostTweet(ctx, xapi.PostParams{Text: "hi"})
	_, _, _ = x.GetTweet(ctx, "1")
}
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "bypass.go", src, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	info, err := g.typeCheck(fset, "example.com/bypass", []*ast.File{f})
	if err != nil {
		t.Fatal(err)
	}
	got := g.xWriteCalls(fset, []*ast.File{f}, info, writes)
	want := []string{"bypass.go:11: (*xapi.Client).Like", "bypass.go:13: (*xapi.Client).DeleteTweet", "bypass.go:17: (*xapi.Client).PostTweet"}
	if !slices.Equal(got, want) {
		t.Errorf("scan found %q, want %q", got, want)
	}
}
