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

// credentialWords are the words that make a name a credential's name:
// a log attribute's key (api_key, access_token, client-secret) or a URL's
// query parameter (?password=, ?X-Amz-Signature=). It is the one list
// both use.
var credentialWords = map[string]bool{
	"token": true, "secret": true, "password": true, "passwd": true, "pwd": true, "apikey": true, "key": true,
	"authorization": true, "auth": true, "bearer": true, "cookie": true, "credential": true, "credentials": true,
	"signature": true, "sig": true,
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

// isSecretKey reports log attribute keys with a credential word as one of
// their parts (api_key, access_token, clientSecret). Only whole words
// count, so a count such as input_tokens stays visible. A bare "key" is
// too common in logs (a map key, a limit key) to count.
func isSecretKey(key string) bool { return isCredentialName(key, false) }

// SecretParam reports whether a URL query or fragment parameter named name
// carries a credential, by the same words as a log attribute's key. In a
// URL a bare "key" is an API key too: Google's APIs, Gemini's
// OpenAI-compatible endpoint among them, take one as ?key=.
func SecretParam(name string) bool { return isCredentialName(name, true) }

func isCredentialName(name string, bareKey bool) bool {
	parts := nameWords(name)
	for i, p := range parts {
		if p == "key" {
			if bareKey && len(parts) == 1 ||
				i > 0 && (parts[i-1] == "api" || parts[i-1] == "secret" || parts[i-1] == "private" || parts[i-1] == "access") {
				return true
			}
			continue
		}
		if credentialWords[p] {
			return true
		}
	}
	return false
}

// nameWords splits a name into lower-case words at every character that is
// not a letter or digit and where camelCase turns to upper case:
// "X-Amz-Signature" and "accessToken" both give their words.
func nameWords(name string) []string {
	var words []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			words = append(words, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	prevLower := false
	for _, r := range name {
		switch {
		case 'a' <= r && r <= 'z' || '0' <= r && r <= '9':
			cur = append(cur, r)
			prevLower = true
		case 'A' <= r && r <= 'Z':
			if prevLower {
				flush()
			}
			cur = append(cur, r)
			prevLower = false
		default:
			flush()
			prevLower = false
		}
	}
	flush()
	return words
}
