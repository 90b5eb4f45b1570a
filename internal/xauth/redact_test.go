package xauth

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestTokenValuesNeverPrinted(t *testing.T) {
	tok := sampleToken()
	secrets := []string{tok.AccessToken, tok.RefreshToken}

	var logBuf bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&logBuf, nil))
	logger.Info("token", "tok", tok, "val", *tok)
	logText := slog.New(slog.NewTextHandler(&logBuf, nil))
	logText.Info("token", "tok", tok)

	js, err := json.Marshal(tok)
	if err != nil {
		t.Fatal(err)
	}
	jsv, _ := json.Marshal(struct{ T Token }{*tok})

	outputs := map[string]string{
		"%v ptr":         fmt.Sprintf("%v", tok),
		"%+v ptr":        fmt.Sprintf("%+v", tok),
		"%#v ptr":        fmt.Sprintf("%#v", tok),
		"%s":             fmt.Sprintf("%s", *tok),
		"%d":             fmt.Sprintf("%d", *tok),
		"%q":             fmt.Sprintf("%q", *tok),
		"%x":             fmt.Sprintf("%x", *tok),
		"nested":         fmt.Sprintf("%+v", struct{ T *Token }{tok}),
		"String":         tok.String(),
		"slog":           logBuf.String(),
		"json":           string(js),
		"json in struct": string(jsv),
	}
	for name, out := range outputs {
		for _, s := range secrets {
			if strings.Contains(out, s) {
				t.Errorf("%s output contains a token value: %s", name, out)
			}
		}
		if !strings.Contains(out, "redacted") {
			t.Errorf("%s output does not show the redaction: %s", name, out)
		}
	}
	if !strings.Contains(outputs["%v ptr"], "offline.access") {
		t.Error("redacted form should still describe the scopes")
	}
}

func TestOptionsAndManagerNeverPrintSecrets(t *testing.T) {
	fx := newFakeX(t)
	fx.clientSecret = "client-secret-value-42"
	clk := newFakeClock()
	path := filepath.Join(t.TempDir(), "tokens.json")
	tok := seed(t, fx, path, clk, time.Hour)
	m := newManager(t, fx, path, clk)
	if _, err := m.AccessToken(context.Background()); err != nil {
		t.Fatal(err)
	}
	lo := LoginOptions{Options: fx.options(path)}
	for name, out := range map[string]string{
		"options %+v":       fmt.Sprintf("%+v", fx.options(path)),
		"options %#v":       fmt.Sprintf("%#v", fx.options(path)),
		"login options %+v": fmt.Sprintf("%+v", lo),
		"manager %+v":       fmt.Sprintf("%+v", m),
		"manager %#v":       fmt.Sprintf("%#v", m),
	} {
		if leaks(out, fx.clientSecret, tok.AccessToken, tok.RefreshToken) {
			t.Errorf("%s leaks a secret: %s", name, out)
		}
	}
}
