package apperr

import (
	"errors"
	"testing"
)

// TestHints: the hints are part of every text a reader sees on its own
// (Error, Detail) and absent from Unhinted; Applicable drops those whose
// flag was given and keeps the rest in order.
func TestHints(t *testing.T) {
	cause := errors.New("open tokens.json: no such file")
	e := Wrap(XNotConfigured, cause, "no X token file").WithHints(SignIn()...)
	const hints = "run `tuitbot auth` to sign in, or use --sandbox to work against the built-in emulator"
	for _, tc := range []struct{ name, got, want string }{
		{"Error", e.Error(), "x_not_configured: no X token file: open tokens.json: no such file; " + hints},
		{"Unhinted", e.Unhinted(), "x_not_configured: no X token file: open tokens.json: no such file"},
		{"Detail", e.Detail(), "no X token file; " + hints},
		{"no hints", New(NotFound, "no item 9").Error(), "not_found: no item 9"},
		{"repeats dropped", JoinHints([]Hint{{Do: "a"}, {Do: "b"}, {Do: "a"}, {Do: ""}}), "a, or b"},
	} {
		if tc.got != tc.want {
			t.Errorf("%s = %q, want %q", tc.name, tc.got, tc.want)
		}
	}

	mixed := []Hint{{Do: "keep"}, {Do: "ask for --x", Unless: "--x"}, {Do: "ask for --y", Unless: "--y"}}
	for _, tc := range []struct {
		name  string
		given []string
		want  string
	}{
		{"none given", nil, "keep, or ask for --x, or ask for --y"},
		{"--x given", []string{"--x"}, "keep, or ask for --y"},
		{"both given", []string{"--x", "--y"}, "keep"},
		{"another flag", []string{"--z"}, "keep, or ask for --x, or ask for --y"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			given := func(f string) bool {
				for _, g := range tc.given {
					if g == f {
						return true
					}
				}
				return false
			}
			if got := JoinHints(Applicable(mixed, given)); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}
