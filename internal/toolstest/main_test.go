package toolstest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/store/pgtest"
)

// cli is the tuitbot binary TestMain builds once for the tests that drive
// the real command line (a human approving in a terminal).
var cli struct {
	path string
	err  error
}

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "toolstest-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "toolstest:", err)
		os.Exit(1)
	}
	cli.path, cli.err = buildCLI(dir)
	// Main also stops the PostgreSQL cluster the account tests start.
	code := pgtest.Main(m)
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

func buildCLI(dir string) (string, error) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		root := os.Getenv("GOROOT")
		if root == "" {
			return "", fmt.Errorf("no go tool on PATH and GOROOT unset: %w", err)
		}
		goTool = filepath.Join(root, "bin", "go")
	}
	bin := filepath.Join(dir, "tuitbot")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, goTool, "build", "-o", bin, "github.com/tuitbot/tuitbot/cmd/tuitbot")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go build ./cmd/tuitbot: %w\n%s", err, out.String())
	}
	return bin, nil
}

// cliResult is one finished tuitbot command.
type cliResult struct {
	stdout, stderr string
	code           int
}

// runCLI runs tuitbot with args as a human would, with TUITBOT_HOME set to
// the test's home and no other tuitbot setting inherited.
func (e *env) runCLI(args ...string) cliResult {
	e.t.Helper()
	if cli.err != nil {
		e.t.Fatalf("the tuitbot binary is unavailable: %v", cli.err)
	}
	ctx, cancel := context.WithTimeout(e.ctx, 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, cli.path, args...)
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "TUITBOT_") && !strings.HasPrefix(kv, "HOME=") {
			env = append(env, kv)
		}
	}
	cmd.Env = append(env, "TUITBOT_HOME="+e.Home, "HOME="+e.Home)
	if e.Cfg != nil {
		// The CLI reads no configuration file here: the access level the
		// test chose (envOptions.access) is the one setting it must share.
		cmd.Env = append(cmd.Env, "TUITBOT_X_API__ACCESS="+string(e.Cfg.XAPI.Access))
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			e.t.Fatalf("tuitbot %s: %v", strings.Join(args, " "), err)
		}
		code = ee.ExitCode()
	}
	return cliResult{stdout: stdout.String(), stderr: stderr.String(), code: code}
}
