package xauth

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/tuitbot/tuitbot/internal/apperr"
)

// maxTokenFileSize bounds what LoadToken reads; a real file is well under
// 1 KiB.
const maxTokenFileSize = 64 << 10

// maxTokenLen bounds a single token or code value.
const maxTokenLen = 4096

// Token is an OAuth token pair. It formats, logs and JSON-encodes without
// the token values; only SaveToken writes them.
type Token struct {
	AccessToken  string
	RefreshToken string
	TokenType    string
	// ExpiresAt is zero when X gave no lifetime; such a token is never
	// refreshed automatically.
	ExpiresAt time.Time
	Scopes    []string
}

// tokenFile is the on-disk shape of tokens.json.
type tokenFile struct {
	AccessToken  string   `json:"access_token"`
	RefreshToken string   `json:"refresh_token,omitempty"`
	TokenType    string   `json:"token_type,omitempty"`
	ExpiresAt    string   `json:"expires_at,omitempty"`
	Scopes       []string `json:"scopes"`
}

// summary is the secret-free description used by every printed form.
func (t Token) summary() string {
	exp := "none"
	if !t.ExpiresAt.IsZero() {
		exp = t.ExpiresAt.UTC().Format(time.RFC3339)
	}
	return fmt.Sprintf("xauth.Token{access_token:[redacted] refresh_token:%s token_type:%q expires_at:%s scopes:%q}",
		presence(t.RefreshToken), t.TokenType, exp, t.Scopes)
}

func presence(s string) string {
	if s == "" {
		return "none"
	}
	return "[redacted]"
}

// String describes the token without its values.
func (t Token) String() string { return t.summary() }

// Format makes every fmt verb (%v, %+v, %#v, %s, %d, ...) print the redacted
// summary; without it %d or %+v would print the fields.
func (t Token) Format(f fmt.State, _ rune) { io.WriteString(f, t.summary()) }

// LogValue keeps the values out of slog output.
func (t Token) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("access_token", "[redacted]"),
		slog.String("refresh_token", presence(t.RefreshToken)),
		slog.String("token_type", t.TokenType),
		slog.Time("expires_at", t.ExpiresAt),
		slog.Any("scopes", t.Scopes),
	)
}

// MarshalJSON encodes the token without its values, so a Token placed in an
// envelope or a database row by mistake leaks nothing.
func (t Token) MarshalJSON() ([]byte, error) {
	v := struct {
		AccessToken     string    `json:"access_token"`
		HasRefreshToken bool      `json:"has_refresh_token"`
		TokenType       string    `json:"token_type,omitempty"`
		ExpiresAt       time.Time `json:"expires_at,omitzero"`
		Scopes          []string  `json:"scopes"`
	}{"[redacted]", t.RefreshToken != "", t.TokenType, t.ExpiresAt, t.Scopes}
	return json.Marshal(v)
}

// validate checks what would otherwise end up in an Authorization header or
// a form body. Errors name the field, never the value.
func (t *Token) validate() error {
	if t.AccessToken == "" {
		return errors.New("access_token is empty")
	}
	if err := checkTokenChars(t.AccessToken); err != nil {
		return fmt.Errorf("access_token %w", err)
	}
	if t.RefreshToken != "" {
		if err := checkTokenChars(t.RefreshToken); err != nil {
			return fmt.Errorf("refresh_token %w", err)
		}
	}
	if t.TokenType != "" && !strings.EqualFold(t.TokenType, "bearer") {
		return fmt.Errorf("token_type is %q, want bearer", t.TokenType)
	}
	for i, s := range t.Scopes {
		if s == "" || strings.ContainsFunc(s, func(r rune) bool { return r <= ' ' || r > '~' }) {
			return fmt.Errorf("scopes[%d] is not a valid scope", i)
		}
	}
	return nil
}

func checkTokenChars(s string) error {
	if len(s) > maxTokenLen {
		return fmt.Errorf("is longer than %d bytes", maxTokenLen)
	}
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] > '~' {
			return errors.New("contains a character outside printable ASCII")
		}
	}
	return nil
}

func (t *Token) clone() *Token {
	if t == nil {
		return nil
	}
	c := *t
	c.Scopes = slices.Clone(t.Scopes)
	return &c
}

// encodeToken produces the file contents.
func encodeToken(t *Token) ([]byte, error) {
	f := tokenFile{
		AccessToken:  t.AccessToken,
		RefreshToken: t.RefreshToken,
		TokenType:    t.TokenType,
		Scopes:       t.Scopes,
	}
	if f.Scopes == nil {
		f.Scopes = []string{}
	}
	if !t.ExpiresAt.IsZero() {
		f.ExpiresAt = t.ExpiresAt.UTC().Format(time.RFC3339)
	}
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// parseToken decodes file contents. name is only used in error messages.
func parseToken(data []byte, name string) (*Token, error) {
	bad := func(err error, format string, args ...any) error {
		return apperr.Wrap(apperr.ConfigError, err, "token file %s is invalid: %s; run `tuitbot auth` to write a new one", name, fmt.Sprintf(format, args...))
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, bad(nil, "it is empty")
	}
	var f tokenFile
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&f); err != nil {
		return nil, bad(err, "not a JSON token object")
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, bad(nil, "unexpected data after the JSON object")
	}
	t := &Token{
		AccessToken:  f.AccessToken,
		RefreshToken: f.RefreshToken,
		TokenType:    f.TokenType,
		Scopes:       f.Scopes,
	}
	if f.ExpiresAt != "" {
		at, err := time.Parse(time.RFC3339, f.ExpiresAt)
		if err != nil {
			return nil, bad(err, "expires_at is not an RFC 3339 time")
		}
		t.ExpiresAt = at.UTC()
	}
	if err := t.validate(); err != nil {
		return nil, bad(err, "%v", err)
	}
	return t, nil
}

// readTokenFile opens, checks and parses the file, returning the FileInfo of
// the very file it read so change detection cannot race with a rename.
func readTokenFile(path string) (*Token, os.FileInfo, error) {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil, apperr.Wrap(apperr.XNotConfigured, err, "no X token file at %s", path).WithHints(apperr.SignIn()...)
		}
		return nil, nil, apperr.Wrap(apperr.ConfigError, err, "cannot open token file %s", path)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, nil, apperr.Wrap(apperr.ConfigError, err, "cannot stat token file %s", path)
	}
	if !info.Mode().IsRegular() {
		return nil, nil, apperr.New(apperr.ConfigError, "token file %s is not a regular file", path)
	}
	if perm := info.Mode().Perm(); perm&0o077 != 0 {
		return nil, nil, apperr.New(apperr.ConfigError,
			"token file %s is accessible by other users (mode %04o); refusing to use it. Fix: chmod 600 %s", path, perm, path)
	}
	if info.Size() > maxTokenFileSize {
		return nil, nil, apperr.New(apperr.ConfigError, "token file %s is too large (%d bytes); run `tuitbot auth` to write a new one", path, info.Size())
	}
	data, err := io.ReadAll(io.LimitReader(f, maxTokenFileSize+1))
	if err != nil {
		return nil, nil, apperr.Wrap(apperr.ConfigError, err, "cannot read token file %s", path)
	}
	if len(data) > maxTokenFileSize {
		return nil, nil, apperr.New(apperr.ConfigError, "token file %s is too large; run `tuitbot auth` to write a new one", path)
	}
	t, err := parseToken(data, path)
	if err != nil {
		return nil, nil, err
	}
	return t, info, nil
}

// LoadToken reads tokens.json. A missing file is apperr.XNotConfigured; a
// file other users can read, or a malformed one, is apperr.ConfigError with
// the fix in the message.
func LoadToken(path string) (*Token, error) {
	t, _, err := readTokenFile(path)
	return t, err
}

// SaveToken writes t to path atomically with mode 0600, creating the
// directory with mode 0700 when missing. It holds the cross-process token
// lock while writing so it cannot interleave with a refresh.
func SaveToken(ctx context.Context, path string, t *Token) error {
	if path == "" {
		return apperr.New(apperr.ConfigError, "token file path (Options.TokenPath) is empty")
	}
	if t == nil {
		return apperr.New(apperr.InvalidInput, "token is nil")
	}
	if err := t.validate(); err != nil {
		return apperr.Wrap(apperr.InvalidInput, err, "token is not valid: %v", err)
	}
	if err := ensureDir(path); err != nil {
		return err
	}
	unlock, err := lockTokenFile(ctx, path, nil)
	if err != nil {
		return err
	}
	defer unlock()
	_, err = writeTokenFile(path, t)
	return err
}

func ensureDir(path string) error {
	dir := filepath.Dir(path)
	// An existing directory is left as it is: it may be the product's home,
	// whose mode is not ours to change; the file itself is 0600.
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return apperr.Wrap(apperr.ConfigError, err, "cannot create directory %s for the token file", dir)
	}
	return nil
}

// writeTokenFile replaces path atomically: a 0600 temp file in the same
// directory is written, fsynced and renamed over the target, then the
// directory is fsynced so the rename survives a crash. The caller holds the
// lock. It returns the FileInfo of the new file.
func writeTokenFile(path string, t *Token) (os.FileInfo, error) {
	data, err := encodeToken(t)
	if err != nil {
		return nil, apperr.Wrap(apperr.SerializationError, err, "cannot encode the token file")
	}
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return nil, apperr.Wrap(apperr.ConfigError, err, "cannot create a temporary token file in %s", dir)
	}
	tmpName := tmp.Name()
	committed := false
	defer func() {
		if !committed {
			tmp.Close()
			os.Remove(tmpName)
		}
	}()
	// CreateTemp already uses 0600; the explicit chmod documents the intent
	// and holds even if that default ever changes.
	if err := tmp.Chmod(0o600); err != nil {
		return nil, apperr.Wrap(apperr.ConfigError, err, "cannot set mode 0600 on the temporary token file")
	}
	if _, err := tmp.Write(data); err != nil {
		return nil, apperr.Wrap(apperr.ConfigError, err, "cannot write the temporary token file")
	}
	if err := tmp.Sync(); err != nil {
		return nil, apperr.Wrap(apperr.ConfigError, err, "cannot flush the temporary token file")
	}
	if err := tmp.Close(); err != nil {
		return nil, apperr.Wrap(apperr.ConfigError, err, "cannot close the temporary token file")
	}
	if err := os.Rename(tmpName, path); err != nil {
		return nil, apperr.Wrap(apperr.ConfigError, err, "cannot replace token file %s", path)
	}
	committed = true
	if d, err := os.Open(dir); err == nil {
		// Best effort: some filesystems refuse fsync on directories.
		_ = d.Sync()
		d.Close()
	}
	info, err := os.Stat(path)
	if err != nil {
		return nil, apperr.Wrap(apperr.ConfigError, err, "cannot stat token file %s after writing it", path)
	}
	return info, nil
}

// StatusInfo describes the stored token without its values.
type StatusInfo struct {
	Path            string
	TokenType       string
	Scopes          []string
	ExpiresAt       time.Time // zero when no expiry is recorded
	Expired         bool
	Remaining       time.Duration // time to expiry at the moment Status ran; negative when expired
	HasRefreshToken bool
}

// Status reports on the token file at path as of now. It never returns the
// token values.
func Status(path string, now time.Time) (StatusInfo, error) {
	t, err := LoadToken(path)
	if err != nil {
		return StatusInfo{}, err
	}
	s := StatusInfo{
		Path:            path,
		TokenType:       t.TokenType,
		Scopes:          slices.Clone(t.Scopes),
		ExpiresAt:       t.ExpiresAt,
		HasRefreshToken: t.RefreshToken != "",
	}
	if !t.ExpiresAt.IsZero() {
		s.Remaining = t.ExpiresAt.Sub(now)
		s.Expired = !now.Before(t.ExpiresAt)
	}
	return s, nil
}

// String renders the status for the CLI.
func (s StatusInfo) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "token file:    %s\n", s.Path)
	scopes := strings.Join(s.Scopes, " ")
	if scopes == "" {
		scopes = "(none recorded)"
	}
	fmt.Fprintf(&b, "scopes:        %s\n", scopes)
	switch {
	case s.ExpiresAt.IsZero():
		b.WriteString("access token:  no expiry recorded\n")
	case s.Expired:
		fmt.Fprintf(&b, "access token:  expired at %s (%s ago)\n", s.ExpiresAt.UTC().Format(time.RFC3339), (-s.Remaining).Round(time.Second))
	default:
		fmt.Fprintf(&b, "access token:  valid until %s (%s left)\n", s.ExpiresAt.UTC().Format(time.RFC3339), s.Remaining.Round(time.Second))
	}
	if s.HasRefreshToken {
		b.WriteString("refresh token: present (renewed automatically)\n")
	} else {
		b.WriteString("refresh token: absent (run `tuitbot auth` when the access token expires)\n")
	}
	return b.String()
}
