package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"testing"

	"github.com/tuitbot/tuitbot/internal/apperr"
)

// oneJSONDocument decodes stdout as exactly one JSON object.
func oneJSONDocument(t *testing.T, stdout string, into any) {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(stdout))
	if err := dec.Decode(into); err != nil {
		t.Fatalf("stdout is not a JSON object: %v\n%s", err, stdout)
	}
	var extra json.RawMessage
	if err := dec.Decode(&extra); err != io.EOF {
		t.Fatalf("stdout holds more than one JSON document:\n%s", stdout)
	}
}

// jsonFailure is the object a --json command prints when it fails.
type jsonFailure struct {
	Error *struct {
		Code    *string `json:"code"`
		Message *string `json:"message"`
		Hint    *string `json:"hint"`
	} `json:"error"`
}

// TestJSONErrors: with --json, a failure is one JSON object on stdout,
// {"error": {"code", "message", "hint"}}, and the exit code is the one
// README's table documents, whatever the command and wherever it failed
// (flag parsing, argument checks, the command itself).
func TestJSONErrors(t *testing.T) {
	h := newHome(t)
	for _, tc := range []struct {
		args     []string
		exit     int
		code     string
		message  string // part of the message
		hint     string // part of the hint; "" means the hint is empty
		notInMsg string // hint text that must not be repeated in the message
	}{
		{[]string{"approve", "show", "999", "--json", "--sandbox"}, 1, "not_found", "999", "", ""},
		{[]string{"approve", "show", "abc", "--json"}, 2, "usage", `"abc" is not an approval id`, "`tuitbot approve show --help`", ""},
		{[]string{"approve", "list", "--json", "--limit", "0"}, 2, "usage", "--limit", "`tuitbot approve list --help`", ""},
		{[]string{"approve", "list", "--json", "--no-such-flag"}, 2, "usage", "--no-such-flag", "--help", ""},
		// Parsing stops at the unknown flag, before --json.
		{[]string{"approve", "list", "--no-such-flag", "--json"}, 2, "usage", "--no-such-flag", "--help", ""},
		{[]string{"approve", "show", "--json"}, 2, "usage", "needs an id", "--help", ""},
		{[]string{"audit", "recent", "--json", "--limit", "500"}, 2, "usage", "--limit 500", "--help", ""},
		{[]string{"status", "--json", "--account", "nosuch"}, 2, "usage", "nosuch", "--help", ""},
		{[]string{"tick", "--json", "--loop", "nosuch"}, 2, "usage", "nosuch", "--help", ""},
		// A real account without a token: both ways out, apart from the message.
		{[]string{"auth", "status", "--json"}, 1, "x_not_configured", "no X token file", "run `tuitbot auth` to sign in, or use --sandbox", "tuitbot auth"},
		{[]string{"audit", "show", "no-such-id", "--json"}, 1, "not_found", "no-such-id", "", ""},
		{[]string{"mcp", "manifest", "--json", "--profile", "admin"}, 2, "usage", "admin", "--help", ""},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			r := h.run(t, tc.args...)
			if r.code != tc.exit {
				t.Errorf("exit %d, want %d\n%s", r.code, tc.exit, r)
			}
			var got jsonFailure
			oneJSONDocument(t, r.stdout, &got)
			e := got.Error
			if e == nil || e.Code == nil || e.Message == nil || e.Hint == nil {
				t.Fatalf("want {\"error\": {\"code\", \"message\", \"hint\"}}, got:\n%s", r.stdout)
			}
			if *e.Code != tc.code {
				t.Errorf("code %q, want %q", *e.Code, tc.code)
			}
			mustContain(t, "message", *e.Message, tc.message)
			if strings.HasPrefix(*e.Message, *e.Code+":") {
				t.Errorf("message repeats the code: %q", *e.Message)
			}
			if tc.hint == "" && *e.Hint != "" || !strings.Contains(*e.Hint, tc.hint) {
				t.Errorf("hint %q, want %q", *e.Hint, tc.hint)
			}
			if tc.notInMsg != "" && strings.Contains(*e.Message, tc.notInMsg) {
				t.Errorf("the message repeats the hint: %q", *e.Message)
			}
		})
	}

	// A command that printed its JSON report before failing keeps it the
	// only document on stdout (with a token but X unreachable, doctor
	// exits 1).
	t.Run("doctor --json", func(t *testing.T) {
		d := newHome(t)
		tok := `{"access_token":"access-0123456789","refresh_token":"refresh-0123456789","token_type":"bearer","expires_at":"2099-01-01T00:00:00Z","scopes":["tweet.read"]}`
		if err := os.WriteFile(d.path("tokens.json"), []byte(tok), 0o600); err != nil {
			t.Fatal(err)
		}
		r := d.run(t, "doctor", "--json")
		if r.code != 1 {
			t.Fatalf("exit %d, want 1\n%s", r.code, r)
		}
		var rep map[string]json.RawMessage
		oneJSONDocument(t, r.stdout, &rep)
		if _, ok := rep["checks"]; !ok {
			t.Errorf("stdout is not doctor's report:\n%s", r.stdout)
		}
		mustContain(t, "stderr", r.stderr, "error: doctor found errors")
	})

	// Without --json nothing changes on stdout: the error and its hint go
	// to stderr.
	t.Run("without --json", func(t *testing.T) {
		r := h.run(t, "auth", "status")
		if r.code != 1 || r.stdout != "" {
			t.Fatalf("want exit 1 and nothing on stdout\n%s", r)
		}
		mustContain(t, "stderr", r.stderr, "error: x_not_configured: no X token file", "\nhint: run `tuitbot auth` to sign in")
	})
}

// TestHintsLeaveOutGivenFlags: a hint that asks for a flag, or does not
// apply with it, is left out when the command line has that flag, however
// deep the error carrying it is wrapped; the message never repeats the
// hints, and one that the flag does not touch stays.
func TestHintsLeaveOutGivenFlags(t *testing.T) {
	signIn := func() error {
		return fmt.Errorf("open the X client: %w",
			apperr.Wrap(apperr.XNotConfigured, fs.ErrNotExist, "no X token file at /h/tokens.json").WithHints(apperr.SignIn()...))
	}
	nested := func() error {
		inner := apperr.New(apperr.ConfigError, "bad account").WithHints(apperr.Hint{Do: "drop --account to act for the default", Unless: ""},
			apperr.Hint{Do: "pass --account NAME", Unless: "--account"})
		return errors.Join(errors.New("first"), apperr.Wrap(apperr.InvalidInput, inner, "cannot act").WithHints(apperr.Hint{Do: "check the config"}))
	}
	for _, tc := range []struct {
		name      string
		args      []string // the command line after `tuitbot auth status`
		err       error
		wantHint  string
		notInHint []string
		code      string
	}{
		{"real account", nil, signIn(), "run `tuitbot auth` to sign in, or use --sandbox to work against the built-in emulator", nil, "x_not_configured"},
		{"sandbox", []string{"--sandbox"}, signIn(), "", []string{"--sandbox", "tuitbot auth"}, "x_not_configured"},
		{"sandbox=true", []string{"--sandbox=true"}, signIn(), "", []string{"--sandbox"}, "x_not_configured"},
		{"sandbox=false", []string{"--sandbox=false"}, signIn(), "run `tuitbot auth` to sign in, or use --sandbox to work against the built-in emulator", nil, "x_not_configured"},
		{"after --", []string{"--", "--sandbox"}, signIn(), "run `tuitbot auth` to sign in, or use --sandbox to work against the built-in emulator", nil, "x_not_configured"},
		{"nested, flag given", []string{"--account", "b"}, nested(), "check the config, or drop --account to act for the default", []string{"pass --account"}, "invalid_input"},
		{"nested, no flag", nil, nested(), "check the config, or drop --account to act for the default, or pass --account NAME", nil, "invalid_input"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := newRoot(io.Discard, io.Discard, strings.NewReader(""))
			cmd, args, err := root.Find([]string{"auth", "status"})
			if err != nil || len(args) != 0 {
				t.Fatalf("find auth status: %v %v", args, err)
			}
			if err := cmd.ParseFlags(tc.args); err != nil {
				t.Fatal(err)
			}
			f := describeFailure(cmd, append([]string{"auth", "status"}, tc.args...), tc.err)
			if f.body.Hint != tc.wantHint {
				t.Errorf("hint %q, want %q", f.body.Hint, tc.wantHint)
			}
			for _, no := range tc.notInHint {
				if strings.Contains(f.body.Hint, no) {
					t.Errorf("hint %q mentions %s", f.body.Hint, no)
				}
			}
			for _, h := range []string{"run `tuitbot auth`", "use --sandbox", "check the config", "--account"} {
				if strings.Contains(f.body.Message, h) || strings.Contains(f.text, h) {
					t.Errorf("message %q or text %q repeats a hint (%s)", f.body.Message, f.text, h)
				}
			}
			if f.body.Code != tc.code {
				t.Errorf("code %q, want %q", f.body.Code, tc.code)
			}
		})
	}
}

// TestSandboxAnswersNeverAskForTheSandbox: a --sandbox command that still
// finds no token (it was removed while a sandbox server runs, so nothing
// writes it again) says so without telling the user to sign in or to use
// --sandbox, in its error and in doctor's report alike.
func TestSandboxAnswersNeverAskForTheSandbox(t *testing.T) {
	h := newHome(t)
	p := startStdio(t, h, "--sandbox")
	p.started(t)
	defer p.stop(t)
	if err := os.Remove(h.path("sandbox/tokens.json")); err != nil {
		t.Fatal(err)
	}
	r := h.run(t, "auth", "status", "--json", "--sandbox")
	d := h.run(t, "doctor", "--json", "--sandbox")
	for what, out := range map[string]string{"auth status": r.stdout + r.stderr, "doctor": d.stdout} {
		for _, no := range []string{"use --sandbox", "or --sandbox", "run `tuitbot auth`"} {
			if strings.Contains(out, no) {
				t.Errorf("%s suggests %q under --sandbox:\n%s", what, no, out)
			}
		}
	}
	if r.code != 1 {
		t.Fatalf("exit %d, want 1\n%s", r.code, r)
	}
	var got jsonFailure
	oneJSONDocument(t, r.stdout, &got)
	if got.Error == nil || got.Error.Code == nil || *got.Error.Code != "x_not_configured" {
		t.Fatalf("want x_not_configured:\n%s", r.stdout)
	}
	var rep struct {
		Checks []struct{ Name, Status, Message string } `json:"checks"`
	}
	oneJSONDocument(t, d.stdout, &rep)
	var token string
	for _, c := range rep.Checks {
		if c.Name == "token" {
			token = c.Message
		}
	}
	if !strings.Contains(token, "no token file at") {
		t.Errorf("doctor's token check does not say what is missing: %q\n%s", token, d.stdout)
	}
}
