package redact_test

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/tuitbot/tuitbot/internal/redact"
)

func TestSecretsInTextAndJSONLogs(t *testing.T) {
	const (
		apiKey = "sk-live-abcdefghijklmnop"
		bearer = "0123456789abcdef0123456789abcdef"
	)
	var s redact.Secrets
	s.Add(apiKey, bearer, "", "short")
	type cfg struct{ Key string }
	for _, format := range []string{"text", "json"} {
		t.Run(format, func(t *testing.T) {
			var buf bytes.Buffer
			opts := &slog.HandlerOptions{ReplaceAttr: s.ReplaceAttr}
			var h slog.Handler = slog.NewTextHandler(&buf, opts)
			if format == "json" {
				h = slog.NewJSONHandler(&buf, opts)
			}
			log := slog.New(h)
			log.Info("calling with key "+apiKey,
				"header", "Bearer "+bearer,
				"err", errors.New("refused: "+apiKey),
				"cfg", cfg{Key: apiKey},
				"url", "http://user:pass-word@127.0.0.1:9/v1",
				slog.Group("llm", "api_key", "anything-at-all"),
				"access_token", "opaque-token-value",
				"clientSecret", "camel-case-secret",
				"token_file", "/home/u/.tuitbot/mcp_token",
				"input_tokens", 1234,
			)
			out := buf.String()
			for _, leak := range []string{apiKey, bearer, "pass-word", "anything-at-all", "opaque-token-value", "camel-case-secret"} {
				if strings.Contains(out, leak) {
					t.Errorf("log leaks %q:\n%s", leak, out)
				}
			}
			for _, keep := range []string{"/home/u/.tuitbot/mcp_token", "1234", "calling with key"} {
				if !strings.Contains(out, keep) {
					t.Errorf("log lost %q:\n%s", keep, out)
				}
			}
		})
	}
}
