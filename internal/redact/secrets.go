package redact

import (
	"fmt"
	"log/slog"
	"strings"
	"sync"
)

// minSecretLen keeps short values out of the known-secret set: masking
// every "1" or "on" in a log would destroy it without protecting anything.
const minSecretLen = 8

// secretKeys are attribute keys whose values are credentials whatever they
// hold, so a caller that logs one by mistake still leaks nothing.
var secretKeys = map[string]bool{
	"token": true, "secret": true, "password": true, "passwd": true, "apikey": true, "key": true,
	"authorization": true, "bearer": true, "cookie": true, "credential": true, "credentials": true,
}

// Secrets masks credentials in log records: the values of attributes named
// like a credential, every known secret value (an API key from the
// configuration, the MCP bearer token) wherever it appears, and URL
// credentials (see LogAttr). Secrets become known as the process loads
// them, so it is safe for concurrent use and may grow after the logger is
// built.
type Secrets struct {
	mu     sync.RWMutex
	values []string
}

// Add makes values known; empty and very short ones are ignored.
func (s *Secrets) Add(values ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, v := range values {
		v = strings.TrimSpace(v)
		if len(v) < minSecretLen {
			continue
		}
		dup := false
		for _, have := range s.values {
			if have == v {
				dup = true
				break
			}
		}
		if !dup {
			s.values = append(s.values, v)
		}
	}
}

// Mask returns text with every known secret replaced by Mask, and URL
// credentials and approval links masked.
func (s *Secrets) Mask(text string) string {
	s.mu.RLock()
	for _, v := range s.values {
		if strings.Contains(text, v) {
			text = strings.ReplaceAll(text, v, Mask)
		}
	}
	s.mu.RUnlock()
	return ApprovalLinks(URLCredentials(text))
}

// ReplaceAttr is a slog ReplaceAttr function: it is called for the message
// too, so a secret formatted into it is masked as well.
func (s *Secrets) ReplaceAttr(groups []string, a slog.Attr) slog.Attr {
	if isSecretKey(a.Key) && a.Value.Kind() != slog.KindGroup {
		// A path to a token file is not the token; keep it readable.
		if !strings.HasSuffix(strings.ToLower(a.Key), "_file") && !strings.HasSuffix(strings.ToLower(a.Key), "_path") {
			return slog.String(a.Key, Mask)
		}
	}
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		if m := s.Mask(v.String()); m != v.String() {
			a.Value = slog.StringValue(m)
		}
	case slog.KindAny:
		var text string
		switch x := v.Any().(type) {
		case error:
			text = x.Error()
		case fmt.Stringer:
			text = x.String()
		default:
			// Structs and maps are rendered by the handler; render them here
			// first so a secret inside one is found.
			text = fmt.Sprintf("%+v", x)
		}
		if m := s.Mask(text); m != text {
			a.Value = slog.StringValue(m)
		}
	}
	return a
}

// isSecretKey reports keys with a credential word as one of their parts
// (api_key, access_token, client-secret). Only whole words count, so a
// count such as input_tokens stays visible.
func isSecretKey(key string) bool {
	parts := strings.FieldsFunc(strings.ToLower(key), func(r rune) bool {
		return !('a' <= r && r <= 'z' || '0' <= r && r <= '9')
	})
	for i, p := range parts {
		// "key" alone is too common (a map key, a limit key); only an
		// api_key or a secret_key is a credential.
		if p == "key" {
			if i > 0 && (parts[i-1] == "api" || parts[i-1] == "secret" || parts[i-1] == "private") {
				return true
			}
			continue
		}
		if secretKeys[p] {
			return true
		}
	}
	return false
}
