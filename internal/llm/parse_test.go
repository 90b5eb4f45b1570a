package llm

import (
	"bytes"
	"errors"
	"io"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestParseRetryAfter(t *testing.T) {
	tests := []struct {
		name   string
		header map[string]string
		want   time.Duration
		ok     bool
	}{
		{"none", nil, 0, false},
		{"seconds", map[string]string{"Retry-After": "3"}, 3 * time.Second, true},
		{"fractional seconds", map[string]string{"Retry-After": "0.5"}, 500 * time.Millisecond, true},
		{"ms wins", map[string]string{"Retry-After-Ms": "250", "Retry-After": "9"}, 250 * time.Millisecond, true},
		{"bad ms falls back", map[string]string{"Retry-After-Ms": "soon", "Retry-After": "9"}, 9 * time.Second, true},
		{"http date", map[string]string{"Retry-After": fixedNow.Add(time.Minute).Format(http.TimeFormat)}, time.Minute, true},
		{"past date", map[string]string{"Retry-After": fixedNow.Add(-time.Minute).Format(http.TimeFormat)}, 0, true},
		{"negative", map[string]string{"Retry-After": "-4"}, 0, false},
		{"nan", map[string]string{"Retry-After": "NaN"}, 0, false},
		{"huge", map[string]string{"Retry-After": "1e300"}, 0, false},
		{"garbage", map[string]string{"Retry-After": "tomorrow"}, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{}
			for k, v := range tt.header {
				h.Set(k, v)
			}
			got, ok := parseRetryAfter(h, fixedNow)
			if got != tt.want || ok != tt.ok {
				t.Errorf("got %v,%v want %v,%v", got, ok, tt.want, tt.ok)
			}
		})
	}
}

func FuzzParseRetryAfter(f *testing.F) {
	for _, s := range []string{"3", "0.5", "-1", "NaN", "Inf", "1e400", "Wed, 21 Oct 2015 07:28:00 GMT", ""} {
		f.Add(s, "")
		f.Add("", s)
	}
	f.Fuzz(func(t *testing.T, retryAfter, retryAfterMs string) {
		h := http.Header{}
		h.Set("Retry-After", retryAfter)
		h.Set("Retry-After-Ms", retryAfterMs)
		d, ok := parseRetryAfter(h, fixedNow)
		if d < 0 {
			t.Fatalf("negative wait %v", d)
		}
		if !ok && d != 0 {
			t.Fatalf("not ok but wait %v", d)
		}
	})
}

func TestSanitize(t *testing.T) {
	tests := []struct {
		name, in, key, want string
	}{
		{"plain", "Rate limit reached", testKey, "Rate limit reached"},
		{"configured key", "bad key " + testKey + " given", testKey, "bad key [redacted] given"},
		{"non-standard key", "bad key abcd-1234-efgh given", "abcd-1234-efgh", "bad key [redacted] given"},
		{"key-shaped", "use sk-proj-AAAAAAAAAAAAAAAA now", "", "use [redacted] now"},
		{"bearer", "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.x", "", "Authorization: [redacted]"},
		{"control chars", "line1\nline2\r\n\tend\x00", "", "line1 line2 end"},
		{"invalid utf8", "bad \xff byte", "", "bad \uFFFD byte"},
		{"url credentials", "proxy http://u:pw-1234@proxy.example:3128 refused", "", "proxy http://******@proxy.example:3128 refused"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := sanitize(tt.in, tt.key); got != tt.want {
				t.Errorf("sanitize(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
	long := strings.Repeat("日本", 400)
	got := sanitize(long, "")
	if n := utf8.RuneCountInString(got); n != maxMessageRunes+1 || !strings.HasSuffix(got, "…") || !utf8.ValidString(got) {
		t.Errorf("long message: %d runes, %q...", n, got[:20])
	}
}

func FuzzSanitize(f *testing.F) {
	f.Add("Incorrect API key provided: sk-abc", "sk-abc")
	f.Add("日本語\n\x00\xff", "key1")
	f.Add(strings.Repeat("é", 500), "")
	f.Fuzz(func(t *testing.T, msg, key string) {
		got := sanitize(msg, key)
		if !utf8.ValidString(got) {
			t.Fatalf("invalid UTF-8: %q", got)
		}
		if utf8.RuneCountInString(got) > maxMessageRunes+1 {
			t.Fatalf("too long: %d runes", utf8.RuneCountInString(got))
		}
		k := strings.TrimSpace(key)
		// A key is hidden whenever it survives whitespace folding intact
		// (keys never contain whitespace or control characters).
		if len(k) >= 4 && utf8.ValidString(k) && !strings.ContainsFunc(k, func(r rune) bool { return r < 0x20 || r == 0x7f || r == ' ' || r >= 0x80 }) &&
			strings.Contains(got, k) && !strings.Contains("[redacted]…", k) {
			t.Fatalf("key %q survives in %q", k, got)
		}
		for _, r := range got {
			if r == '\n' || r == '\r' || r == 0 {
				t.Fatalf("control character in %q", got)
			}
		}
	})
}

func TestLookupPrice(t *testing.T) {
	tests := []struct {
		model  string
		family string
		ok     bool
	}{
		{"gpt-4o-mini", "gpt-4o-mini", true},
		{"gpt-4o-mini-2024-07-18", "gpt-4o-mini", true},
		{"gpt-4o-2024-08-06", "gpt-4o", true},
		{"openai/gpt-4o-mini", "gpt-4o-mini", true},
		{"GPT-4.1-mini", "gpt-4.1-mini", true},
		{"o3-mini", "o3-mini", true},
		{"claude-sonnet-4-5-20250929", "claude-sonnet", true},
		{"anthropic/claude-3.5-sonnet", "claude-sonnet", true},
		{"claude-3-opus-20240229", "claude-opus", true},
		{"claude-opus-4-5-20251101", "claude-opus-4.5", true},
		{"claude-3-haiku-20240307", "claude-3-haiku", true},
		{"claude-3-5-haiku-latest", "claude-3.5-haiku", true},
		{"claude-haiku-4-5", "claude-haiku", true},
		{"llama3.1", "", false},
		{"llama-3.3-70b-versatile", "", false},
		{"", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.model, func(t *testing.T) {
			p, ok := LookupPrice(tt.model)
			if ok != tt.ok || p.Family != tt.family {
				t.Errorf("LookupPrice(%q) = %+v,%v; want family %q,%v", tt.model, p, ok, tt.family, tt.ok)
			}
		})
	}
}

func TestEstimateCostUnknownModelIsZero(t *testing.T) {
	if c, known := EstimateCost("llama3.1", 1e6, 1e6); c != 0 || known {
		t.Errorf("got %v,%v", c, known)
	}
	c, known := EstimateCost("claude-opus-4-1", 1_000_000, 1_000_000)
	if !known || math.Abs(c-90) > 1e-9 {
		t.Errorf("opus 1M/1M = %v,%v; want 90", c, known)
	}
}

func TestCappedBody(t *testing.T) {
	tests := []struct {
		size    int
		limit   int64
		wantErr bool
	}{{10, 10, false}, {9, 10, false}, {11, 10, true}, {1000, 10, true}}
	for _, tt := range tests {
		b := &cappedBody{rc: io.NopCloser(bytes.NewReader(make([]byte, tt.size))), left: tt.limit + 1}
		got, err := io.ReadAll(b)
		if tt.wantErr {
			if !errors.Is(err, errResponseTooLarge) || int64(len(got)) > tt.limit {
				t.Errorf("size %d limit %d: read %d err %v", tt.size, tt.limit, len(got), err)
			}
		} else if err != nil || len(got) != tt.size {
			t.Errorf("size %d limit %d: read %d err %v", tt.size, tt.limit, len(got), err)
		}
	}
}
