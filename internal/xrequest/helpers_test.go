package xrequest

import (
	"errors"
	"strings"
	"testing"

	"github.com/tuitbot/tuitbot/internal/apperr"
)

// wantBlocked asserts err is an x_request_blocked *apperr.Error that names
// param (in the message prefix and in Extra["param"]) and whose message
// contains every fragment in want.
func wantBlocked(t *testing.T, err error, param string, want ...string) *apperr.Error {
	t.Helper()
	if err == nil {
		t.Fatalf("want %s error, got nil", param)
	}
	var ae *apperr.Error
	if !errors.As(err, &ae) {
		t.Fatalf("want *apperr.Error, got %T: %v", err, err)
	}
	if ae.Code != apperr.XRequestBlocked {
		t.Fatalf("code = %q, want %q (%v)", ae.Code, apperr.XRequestBlocked, err)
	}
	if !strings.HasPrefix(ae.Message, param+": ") {
		t.Fatalf("message %q does not start with %q", ae.Message, param+": ")
	}
	if got := ae.Extra["param"]; got != param {
		t.Fatalf("Extra[param] = %v, want %q", got, param)
	}
	for _, w := range want {
		if !strings.Contains(ae.Message, w) {
			t.Fatalf("message %q does not contain %q", ae.Message, w)
		}
	}
	return ae
}

// mustCheck runs Check and fails the test on error.
func mustCheck(t *testing.T, r Request) *Checked {
	t.Helper()
	c, err := Check(r)
	if err != nil {
		t.Fatalf("Check(%+v): unexpected error: %v", r, err)
	}
	return c
}
