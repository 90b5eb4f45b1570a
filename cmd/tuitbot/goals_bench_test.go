package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The benchmarks below measure the start-up goals where a user waits: a
// client spawns the server and lists its tools before its agent can work.
// Each runs tuitbot built as it is released (stripped, trimmed) beside a
// minimal go-sdk server (testdata/echoserver), interleaved, and reports
// both medians and their ratio. They build binaries and start processes,
// so only -bench runs them:
//
//	go test ./cmd/tuitbot -run '^$' -bench 'Goal' -benchtime 20x

// releaseBins are tuitbot and the echo server built like a release.
type releaseBins struct {
	tuitbot, echo string
	err           error
}

var buildRelease = sync.OnceValue(func() releaseBins {
	dir, err := os.MkdirTemp("", "tuitbot-release-bench-")
	if err != nil {
		return releaseBins{err: err}
	}
	r := releaseBins{tuitbot: filepath.Join(dir, "tuitbot"), echo: filepath.Join(dir, "echoserver")}
	for out, pkg := range map[string]string{r.tuitbot: ".", r.echo: "./testdata/echoserver"} {
		build := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", out, pkg)
		build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=amd64")
		if msg, err := build.CombinedOutput(); err != nil {
			r.err = fmt.Errorf("build %s: %v\n%s", pkg, err, msg)
		}
	}
	return r
})

func release(b *testing.B) releaseBins {
	b.Helper()
	r := buildRelease()
	if r.err != nil {
		b.Fatal(r.err)
	}
	return r
}

// mcpProc is a stdio MCP server process spoken to line by line.
type mcpProc struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
}

func spawnMCP(b *testing.B, env []string, bin string, args ...string) *mcpProc {
	b.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	return &mcpProc{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 1<<20)}
}

// ask writes lines and returns the answer to the last one, which must be
// the only request among them.
func (p *mcpProc) ask(b *testing.B, lines ...string) []byte {
	b.Helper()
	if _, err := io.WriteString(p.in, strings.Join(lines, "\n")+"\n"); err != nil {
		b.Fatal(err)
	}
	ans, err := p.out.ReadBytes('\n')
	if err != nil {
		b.Fatalf("no answer to %.80s: %v", lines[len(lines)-1], err)
	}
	if bytes.Contains(ans, []byte(`"error":{`)) || bytes.Contains(ans, []byte(`"isError":true`)) {
		b.Fatalf("answer to %.80s: %.300s", lines[len(lines)-1], ans)
	}
	return ans
}

func (p *mcpProc) stop(b *testing.B) {
	b.Helper()
	p.in.Close()
	io.Copy(io.Discard, p.out)
	if err := p.cmd.Wait(); err != nil {
		b.Fatalf("server exit: %v", err)
	}
}

const (
	initializedLine = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
	listLine        = `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
	echoCallLine    = `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`
	healthCallLine  = `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"health_check","arguments":{}}}`
)

// listed spawns a server and initializes it, then lists its tools.
func listed(b *testing.B, env []string, bin string, args ...string) *mcpProc {
	b.Helper()
	p := spawnMCP(b, env, bin, args...)
	p.ask(b, initLine)
	p.ask(b, initializedLine, listLine)
	return p
}

// sandboxHome is a home with a configuration file whose sandbox has been
// prepared, as a user who tried `tuitbot mcp serve --sandbox` has.
func sandboxHome(b *testing.B) *home {
	b.Helper()
	h := newHome(b)
	for _, args := range [][]string{{"config", "init"}, {"doctor", "--sandbox"}} {
		cmd := exec.Command(binPath, args...)
		cmd.Env = h.env
		if out, err := cmd.CombinedOutput(); err != nil && args[0] == "config" {
			b.Fatalf("%v: %v\n%s", args, err, out)
		}
	}
	return h
}

// pair collects the interleaved samples of tuitbot and the echo server.
type pair struct{ tuitbot, echo []float64 }

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	return s[len(s)/2]
}

func (p pair) report(b *testing.B, unit string) {
	t, e := median(p.tuitbot), median(p.echo)
	b.ReportMetric(t, "tuitbot-"+unit)
	b.ReportMetric(e, "echo-"+unit)
	if e > 0 {
		b.ReportMetric(t/e, "ratio")
	}
	b.ReportMetric(0, "ns/op") // the custom metrics are the result
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// BenchmarkGoalSpawnToolsList: spawn -> tools/list answered, tuitbot
// `mcp serve --sandbox` on a configured home against the echo server
// (goal: at most 3x).
func BenchmarkGoalSpawnToolsList(b *testing.B) {
	r := release(b)
	h := sandboxHome(b)
	var p pair
	for range b.N {
		start := time.Now()
		e := listed(b, h.env, r.echo)
		p.echo = append(p.echo, ms(time.Since(start)))
		e.stop(b)
		start = time.Now()
		t := listed(b, h.env, r.tuitbot, "mcp", "serve", "--sandbox")
		p.tuitbot = append(p.tuitbot, ms(time.Since(start)))
		t.stop(b)
	}
	p.report(b, "ms")
}

// BenchmarkGoalWarmToolsList: one tools/list round trip over stdio to a
// running server (goal: at most 5 ms).
func BenchmarkGoalWarmToolsList(b *testing.B) {
	r := release(b)
	h := sandboxHome(b)
	t := listed(b, h.env, r.tuitbot, "mcp", "serve", "--sandbox")
	defer t.stop(b)
	e := listed(b, h.env, r.echo)
	defer e.stop(b)
	var p pair
	for range b.N {
		start := time.Now()
		e.ask(b, listLine)
		p.echo = append(p.echo, ms(time.Since(start)))
		start = time.Now()
		t.ask(b, listLine)
		p.tuitbot = append(p.tuitbot, ms(time.Since(start)))
	}
	p.report(b, "ms")
}

// BenchmarkGoalToolCall: a tools/call round trip of health_check against
// the echo server's echo (goal: at most 1.3x).
func BenchmarkGoalToolCall(b *testing.B) {
	r := release(b)
	h := sandboxHome(b)
	t := listed(b, h.env, r.tuitbot, "mcp", "serve", "--sandbox")
	defer t.stop(b)
	e := listed(b, h.env, r.echo)
	defer e.stop(b)
	t.ask(b, healthCallLine) // the services are up and warm
	e.ask(b, echoCallLine)
	var p pair
	for range b.N {
		start := time.Now()
		e.ask(b, echoCallLine)
		p.echo = append(p.echo, float64(time.Since(start).Microseconds()))
		start = time.Now()
		t.ask(b, healthCallLine)
		p.tuitbot = append(p.tuitbot, float64(time.Since(start).Microseconds()))
	}
	p.report(b, "us")
}

// BenchmarkGoalRssAnon: private memory (RssAnon) after tools/list and 35
// calls (goal: at most 1.5x).
func BenchmarkGoalRssAnon(b *testing.B) {
	r := release(b)
	h := sandboxHome(b)
	var p pair
	for range b.N {
		for _, s := range []struct {
			into *[]float64
			call string
			args []string
			bin  string
		}{{&p.echo, echoCallLine, nil, r.echo}, {&p.tuitbot, healthCallLine, []string{"mcp", "serve", "--sandbox"}, r.tuitbot}} {
			proc := listed(b, h.env, s.bin, s.args...)
			for range 35 {
				proc.ask(b, s.call)
			}
			*s.into = append(*s.into, rssAnonMB(b, proc.cmd.Process.Pid))
			proc.stop(b)
		}
	}
	p.report(b, "MB")
}

// rssAnonMB reads RssAnon from /proc/PID/status.
func rssAnonMB(b *testing.B, pid int) float64 {
	b.Helper()
	st, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Skipf("no /proc here: %v", err)
	}
	for line := range strings.SplitSeq(string(st), "\n") {
		if rest, ok := strings.CutPrefix(line, "RssAnon:"); ok {
			kb, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
			if err != nil {
				b.Fatalf("RssAnon line %q: %v", line, err)
			}
			return float64(kb) / 1024
		}
	}
	b.Fatal("no RssAnon in /proc/PID/status")
	return 0
}

// BenchmarkGoalFreshStart: spawn -> first tool call answered (the
// database open, migrated and checked) on a fresh home against the same
// on a home that has started before (goal: at most 1.5x). The "echo"
// columns are the warm starts.
func BenchmarkGoalFreshStart(b *testing.B) {
	r := release(b)
	warm := newHome(b)
	listed(b, warm.env, r.tuitbot, "mcp", "serve").stop(b)
	var p pair
	for range b.N {
		fresh := newHome(b)
		for _, s := range []struct {
			into *[]float64
			h    *home
		}{{&p.echo, warm}, {&p.tuitbot, fresh}} {
			start := time.Now()
			proc := listed(b, s.h.env, r.tuitbot, "mcp", "serve")
			proc.ask(b, healthCallLine)
			*s.into = append(*s.into, ms(time.Since(start)))
			proc.stop(b)
		}
	}
	p.report(b, "ms")
}

// BenchmarkGoalBinarySize: the stripped linux/amd64 release binary
// (goal: at most 30 MB).
func BenchmarkGoalBinarySize(b *testing.B) {
	r := release(b)
	var sizes pair
	for _, s := range []struct {
		into *[]float64
		bin  string
	}{{&sizes.tuitbot, r.tuitbot}, {&sizes.echo, r.echo}} {
		st, err := os.Stat(s.bin)
		if err != nil {
			b.Fatal(err)
		}
		*s.into = append(*s.into, float64(st.Size())/1e6)
	}
	for range b.N {
	}
	sizes.report(b, "MB")
}
