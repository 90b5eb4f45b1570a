package main

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestLogFileJSONNeverHoldsSecrets runs a sandbox stdio server with JSON
// logs in a file, a configured LLM key and X client secret, and a metrics
// listener (which loads the bearer token): the file is JSON lines, 0600,
// and none of the credentials appear in it or on stderr.
func TestLogFileJSONNeverHoldsSecrets(t *testing.T) {
	const (
		llmKey  = "sk-test-llm-key-0123456789"
		xSecret = "x-client-secret-0123456789"
	)
	h := newHome(t).with("TUITBOT_LLM__API_KEY="+llmKey, "TUITBOT_X_API__CLIENT_SECRET="+xSecret)
	logFile := h.path("logs/tuitbot.log")
	cmd := exec.Command(binPath, "--log-format", "json", "--log-file", logFile, "--log-level", "debug",
		"mcp", "serve", "--sandbox", "--metrics-listen", "127.0.0.1:0")
	cmd.Env = h.env
	cmd.Stdin = strings.NewReader(initLine + "\n")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("serve: %v\n%s", err, out)
	}
	st, err := os.Stat(logFile)
	if err != nil {
		t.Fatalf("no log file: %v", err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("log file mode %o, want 600", st.Mode().Perm())
	}
	raw, err := os.ReadFile(logFile)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := os.ReadFile(h.path("sandbox/mcp_token"))
	if err != nil {
		t.Fatalf("the metrics listener did not load the token: %v", err)
	}
	secrets := []string{llmKey, xSecret, strings.TrimSpace(string(tok))}
	for _, s := range secrets {
		if strings.Contains(string(raw), s) || strings.Contains(string(out), s) {
			t.Errorf("a credential (%.6s...) was logged", s)
		}
	}
	var sawStart, sawMetrics bool
	sc := bufio.NewScanner(strings.NewReader(string(raw)))
	for sc.Scan() {
		var rec map[string]any
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatalf("log line is not JSON: %v: %s", err, sc.Text())
		}
		switch rec["msg"] {
		case "mcp server starting":
			sawStart = true
		case "metrics listening":
			sawMetrics = true
		}
	}
	if !sawStart || !sawMetrics {
		t.Errorf("log file lacks the start (%v) or metrics (%v) line:\n%s", sawStart, sawMetrics, raw)
	}
}

func TestLogFormatUsage(t *testing.T) {
	h := newHome(t)
	r := h.run(t, "--log-format", "yaml", "mcp", "serve", "--profile", "readonly")
	if r.code != 2 || !strings.Contains(r.stderr, "--log-format") {
		t.Errorf("bad --log-format: %s", r)
	}
	r = h.run(t, "mcp", "serve", "--profile", "readonly", "--metrics-listen", "0.0.0.0:9464")
	if r.code == 0 || !strings.Contains(r.stderr, "loopback only") {
		t.Errorf("non-loopback --metrics-listen: %s", r)
	}
}
