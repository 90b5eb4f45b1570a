// Package approvallink issues and checks signed one-time links that show,
// approve or reject one approval item from a phone, or show one hand-off
// (what X's API may not do, for a person to do on x.com) with its Do it
// on X link.
//
// A link is /a/TOKEN. The token names the account, the item, the action
// (view, approve or reject), an expiry and a random nonce, and ends in an
// HMAC under a key kept 0600 in the home. The MAC also covers the item's
// content hash as it was when the link was issued, and every check compares
// that hash with the item's current content: any edit (web, CLI, agent)
// kills every outstanding link for the item. A GET only shows; a POST acts,
// carrying a CSRF value bound to the link, and marks the link used in the
// same transaction that decides the item, so a link acts at most once.
//
// The package owns the approval_links table (one row per issued link).
// Nothing here is reachable from a tool: no tool output ever holds a link.
package approvallink

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/gateway"
	"github.com/tuitbot/tuitbot/internal/notify"
	"github.com/tuitbot/tuitbot/internal/store"
)

// Actions a link grants.
const (
	View    = "view"
	Approve = "approve"
	Reject  = "reject"
	// HandOff shows a hand-off (what X's API may not do, handed to a
	// person) with its Do it on X link, and lets the person say they did
	// it, which looks on X; it decides no approval item.
	HandOff = "handoff"
)

var actionCode = map[string]byte{View: 1, Approve: 2, Reject: 3, HandOff: 4}

func actionOf(b byte) string {
	for a, c := range actionCode {
		if c == b {
			return a
		}
	}
	return ""
}

// KeyFile is the link key's file name in the home.
const KeyFile = "approval_link.key"

// Queue reads and decides approval items for a link.
type Queue interface {
	Item(ctx context.Context, account string, id int64) (*gateway.ApprovalItem, error)
	// Decide approves or rejects the item as d says (d.Shown: only while
	// it has that content; d.Hook runs in the deciding transaction).
	Decide(ctx context.Context, account string, id int64, approve bool, d gateway.Decision) (*gateway.ApprovalItem, error)
}

// HandOffs reads an account's hand-offs for a link, and looks on X now
// whether a person did its open ones (the phone's "I did it").
type HandOffs interface {
	HandOff(ctx context.Context, account string, id int64) (*gateway.HandOff, error)
	Check(ctx context.Context, account string) ([]gateway.HandOff, error)
}

// Options configure a Service.
type Options struct {
	DB *store.DB
	// KeyPath is the HMAC key's file (created 0600 when missing).
	KeyPath string
	// BaseURL is where a phone reaches the links (notify.public_base_url).
	BaseURL string
	TTL     time.Duration
	Queue   Queue
	// HandOffs, when set, lets hand-offs have links (HandOffLink).
	HandOffs HandOffs
	Now      func() time.Time
}

// Service issues, checks and acts on links.
type Service struct {
	o Options
}

// New returns the service; the key is created on first use.
func New(o Options) (*Service, error) {
	if o.DB == nil || o.Queue == nil || o.KeyPath == "" {
		return nil, errors.New("approvallink: DB, Queue and KeyPath are required")
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.TTL <= 0 {
		o.TTL = time.Hour
	}
	o.BaseURL = strings.TrimRight(o.BaseURL, "/")
	return &Service{o: o}, nil
}

// key reads the link key, creating it when missing. It is read at every
// use, so a rotation by another process takes effect at once.
func (s *Service) key() ([]byte, error) {
	b, err := os.ReadFile(s.o.KeyPath)
	if errors.Is(err, os.ErrNotExist) {
		if err := writeKey(s.o.KeyPath, false); err != nil && !errors.Is(err, os.ErrExist) {
			return nil, err
		}
		b, err = os.ReadFile(s.o.KeyPath)
	}
	if err != nil {
		return nil, fmt.Errorf("read the approval link key: %w", err)
	}
	if len(b) != keyLen {
		return nil, fmt.Errorf("approval link key %s is %d bytes, want %d: run `tuitbot approve links rotate-key`", s.o.KeyPath, len(b), keyLen)
	}
	if st, err := os.Stat(s.o.KeyPath); err == nil && st.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("approval link key %s is readable by others (mode %v); run `chmod 600 %s` or rotate it", s.o.KeyPath, st.Mode().Perm(), s.o.KeyPath)
	}
	return b, nil
}

const keyLen = 32

// writeKey writes a fresh key, 0600; without replace it fails when a key
// exists (two processes creating it at once keep the first).
func writeKey(path string, replace bool) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("approval link key: %w", err)
	}
	k := make([]byte, keyLen)
	if _, err := rand.Read(k); err != nil {
		return fmt.Errorf("approval link key: %w", err)
	}
	if !replace {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return err
		}
		if _, err := f.Write(k); err != nil {
			f.Close()
			return fmt.Errorf("approval link key: %w", err)
		}
		return f.Close()
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".approval_link.key-*")
	if err != nil {
		return fmt.Errorf("approval link key: %w", err)
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return fmt.Errorf("approval link key: %w", err)
	}
	if _, err := tmp.Write(k); err != nil {
		tmp.Close()
		return fmt.Errorf("approval link key: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("approval link key: %w", err)
	}
	return os.Rename(tmp.Name(), path)
}

// token is a link's signed content.
type token struct {
	action  string
	item    int64
	expires time.Time
	nonce   [16]byte
	account string
	mac     []byte
}

const (
	tokenVersion = 1
	macLen       = 16
	fixedLen     = 1 + 1 + 8 + 8 + 16 + 1
)

func (t token) body() []byte {
	b := make([]byte, 0, fixedLen+len(t.account))
	b = append(b, tokenVersion, actionCode[t.action])
	b = binary.BigEndian.AppendUint64(b, uint64(t.item))
	b = binary.BigEndian.AppendUint64(b, uint64(t.expires.Unix()))
	b = append(b, t.nonce[:]...)
	b = append(b, byte(len(t.account)))
	return append(b, t.account...)
}

func sign(key, body []byte, contentHash string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("tuitbot approval link v1\x00"))
	m.Write(body)
	m.Write([]byte{0})
	m.Write([]byte(contentHash))
	return m.Sum(nil)[:macLen]
}

func (t token) encode(key []byte, contentHash string) string {
	body := t.body()
	return base64.RawURLEncoding.EncodeToString(append(body, sign(key, body, contentHash)...))
}

func decode(s string) (token, bool) {
	var t token
	if len(s) > 200 {
		return t, false
	}
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) < fixedLen+macLen || b[0] != tokenVersion {
		return t, false
	}
	n := int(b[fixedLen-1])
	if len(b) != fixedLen+n+macLen || n == 0 {
		return t, false
	}
	t.action = actionOf(b[1])
	t.item = int64(binary.BigEndian.Uint64(b[2:10]))
	t.expires = time.Unix(int64(binary.BigEndian.Uint64(b[10:18])), 0)
	copy(t.nonce[:], b[18:34])
	t.account = string(b[fixedLen : fixedLen+n])
	t.mac = b[fixedLen+n:]
	if t.action == "" || t.item <= 0 {
		return t, false
	}
	return t, true
}

func nonceText(n [16]byte) string { return base64.RawURLEncoding.EncodeToString(n[:]) }

// csrfFor is the CSRF value a POST to the link must carry.
func csrfFor(key []byte, nonce string) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("tuitbot approval link csrf\x00"))
	m.Write([]byte(nonce))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil)[:16])
}

// Links issues the view, approve and reject links of it for channel (it
// implements notify.LinkMaker). Each expires after the TTL, never after
// the item does.
func (s *Service) Links(ctx context.Context, account string, it *gateway.ApprovalItem, channel string) (notify.Links, error) {
	key, err := s.key()
	if err != nil {
		return notify.Links{}, err
	}
	if len(account) == 0 || len(account) > 255 {
		return notify.Links{}, fmt.Errorf("account name %q cannot be put in a link", account)
	}
	now := s.o.Now()
	exp := now.Add(s.o.TTL)
	if itemExp, err := store.ParseTime(it.ExpiresAt); err == nil && itemExp.Before(exp) {
		exp = itemExp
	}
	hash := notify.ContentHash(it.Tool, it.Params)
	var out notify.Links
	err = s.o.DB.Tx(ctx, func(tx *sql.Tx) error {
		for _, action := range []string{View, Approve, Reject} {
			t := token{action: action, item: it.ID, expires: exp.Truncate(time.Second), account: account}
			if _, err := rand.Read(t.nonce[:]); err != nil {
				return err
			}
			n := nonceText(t.nonce)
			if _, err := tx.ExecContext(ctx, `INSERT INTO approval_links (nonce, account_id, item_id, action, channel, content_hash, created_at, expires_at)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, n, account, it.ID, action, channel, hash, store.FormatTime(now), store.FormatTime(t.expires)); err != nil {
				return fmt.Errorf("record the link: %w", err)
			}
			u := s.o.BaseURL + "/a/" + t.encode(key, hash)
			switch action {
			case View:
				out.View = u
			case Approve:
				out.Approve, out.ApproveCSRF = u, csrfFor(key, n)
			case Reject:
				out.Reject, out.RejectCSRF = u, csrfFor(key, n)
			}
		}
		return nil
	})
	return out, err
}

// HandOffLink issues the link of open hand-off id for channel: the phone
// page that shows its card with Do it on X (it implements
// notify.HandOffLinker). Signed, recorded and checked as an approval
// link is, over the hand-off's content; it expires after the TTL, never
// after tuitbot stops looking for the hand-off.
func (s *Service) HandOffLink(ctx context.Context, account string, id int64, channel string) (string, error) {
	if s.o.HandOffs == nil {
		return "", errors.New("hand-off links are not available here")
	}
	key, err := s.key()
	if err != nil {
		return "", err
	}
	if len(account) == 0 || len(account) > 255 {
		return "", fmt.Errorf("account name %q cannot be put in a link", account)
	}
	h, err := s.o.HandOffs.HandOff(ctx, account, id)
	if err != nil {
		return "", err
	}
	if h.Status != gateway.HandOffOpen {
		return "", fmt.Errorf("hand-off %d is %s: no link for it", id, h.Status)
	}
	now := s.o.Now()
	exp := now.Add(s.o.TTL)
	if due, err := store.ParseTime(h.DueAt); err == nil && due.Before(exp) {
		exp = due
	}
	hash := notify.ContentHash(h.Effect, h.Params())
	t := token{action: HandOff, item: id, expires: exp.Truncate(time.Second), account: account}
	if _, err := rand.Read(t.nonce[:]); err != nil {
		return "", err
	}
	if _, err := s.o.DB.ExecContext(ctx, `INSERT INTO approval_links (nonce, account_id, item_id, action, channel, content_hash, created_at, expires_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, nonceText(t.nonce), account, id, HandOff, channel, hash, store.FormatTime(now), store.FormatTime(t.expires)); err != nil {
		return "", fmt.Errorf("record the link: %w", err)
	}
	return s.o.BaseURL + "/a/" + t.encode(key, hash), nil
}

// callbackMAC signs a Telegram button press over the item's content.
func callbackMAC(key []byte, account string, it *gateway.ApprovalItem, row int64, approve bool) string {
	m := hmac.New(sha256.New, key)
	fmt.Fprintf(m, "tuitbot telegram callback v1\x00%s\x00%d\x00%s\x00%d\x00%t", account, it.ID, notify.ContentHash(it.Tool, it.Params), row, approve)
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil)[:12])
}

// SignCallback returns the callback data of a Telegram button (at most 64
// bytes): the press, the outbox row and a MAC over the item's content.
func (s *Service) SignCallback(account string, it *gateway.ApprovalItem, row int64, approve bool) (string, error) {
	key, err := s.key()
	if err != nil {
		return "", err
	}
	return notify.CallbackData(approve, row, callbackMAC(key, account, it, row, approve)), nil
}

// CheckCallback reports whether mac signs this press over the item's
// current content.
func (s *Service) CheckCallback(account string, it *gateway.ApprovalItem, row int64, approve bool, mac string) bool {
	key, err := s.key()
	if err != nil {
		return false
	}
	return hmac.Equal([]byte(mac), []byte(callbackMAC(key, account, it, row, approve)))
}

// Refusal is why a link does not work, as the page answers it: 404 for a
// link that is not ours, 410 with a sentence for one that no longer works.
type Refusal struct {
	Status  int
	Message string
}

func (r *Refusal) Error() string { return r.Message }

var notFound = &Refusal{Status: http.StatusNotFound, Message: "This link is not valid."}

func gone(format string, args ...any) *Refusal {
	return &Refusal{Status: http.StatusGone, Message: fmt.Sprintf(format, args...)}
}

// Link is a verified link with its item as it is now.
type Link struct {
	Account string
	Action  string
	Channel string
	Item    *gateway.ApprovalItem
	// HandOff is the hand-off of a HandOff link (Item is then its card).
	HandOff *gateway.HandOff
	Expires time.Time
	// CSRF is the value the page's form posts back.
	CSRF  string
	nonce string
	// hash is the content the link was issued for, and so what the
	// notice showed: the decision holds only for it.
	hash string
}

// Check verifies tok: a *Refusal says why it does not work.
func (s *Service) Check(ctx context.Context, tok string) (*Link, error) {
	t, ok := decode(tok)
	if !ok {
		return nil, notFound
	}
	key, err := s.key()
	if err != nil {
		return nil, err
	}
	n := nonceText(t.nonce)
	var row struct {
		account, action, channel, hash string
		item                           int64
		used, revoked                  sql.NullString
	}
	err = s.o.DB.QueryRowContext(ctx, `SELECT account_id, item_id, action, channel, content_hash, used_at, revoked_at
		FROM approval_links WHERE nonce = ?`, n).Scan(&row.account, &row.item, &row.action, &row.channel, &row.hash, &row.used, &row.revoked)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound
	}
	if err != nil {
		return nil, fmt.Errorf("read the link: %w", err)
	}
	if !hmac.Equal(t.mac, sign(key, t.body(), row.hash)) || row.account != t.account || row.item != t.item || row.action != t.action {
		return nil, notFound
	}
	if row.revoked.Valid {
		return nil, gone("This link was revoked. Ask for a new one, or review the item in tuitbot.")
	}
	if row.used.Valid {
		return nil, gone("This link was already used.")
	}
	if !s.o.Now().Before(t.expires) {
		return nil, gone("This link expired at %s.", t.expires.UTC().Format("2006-01-02 15:04 UTC"))
	}
	if t.action == HandOff {
		return s.checkHandOff(ctx, t, key, n, row.channel, row.hash)
	}
	it, err := s.o.Queue.Item(ctx, t.account, t.item)
	if apperr.CodeOf(err) == apperr.NotFound {
		return nil, gone("This item no longer exists.")
	}
	if err != nil {
		return nil, err
	}
	if it.Status != gateway.ApprovalPending {
		who := ""
		if it.ReviewedBy != "" {
			who = " by " + it.ReviewedBy
		}
		return nil, gone("This item was already decided (%s%s).", it.Status, who)
	}
	if notify.ContentHash(it.Tool, it.Params) != row.hash {
		return nil, gone("This post was edited after the link was sent, so the link no longer works. Use the link in the newer message.")
	}
	return &Link{Account: t.account, Action: t.action, Channel: row.channel, Item: it, Expires: t.expires, CSRF: csrfFor(key, n), nonce: n,
		hash: row.hash}, nil
}

// checkHandOff is Check for a verified hand-off link: the hand-off must
// still be open, with the content the link was issued for.
func (s *Service) checkHandOff(ctx context.Context, t token, key []byte, nonce, channel, hash string) (*Link, error) {
	if s.o.HandOffs == nil {
		return nil, notFound
	}
	h, err := s.o.HandOffs.HandOff(ctx, t.account, t.item)
	if apperr.CodeOf(err) == apperr.NotFound {
		return nil, gone("This hand-off no longer exists.")
	}
	if err != nil {
		return nil, err
	}
	switch h.Status {
	case gateway.HandOffOpen:
	case gateway.HandOffDone:
		return nil, gone("This was already done on X.")
	default:
		return nil, gone("tuitbot stopped looking for this on X (%s).", h.Status)
	}
	if notify.ContentHash(h.Effect, h.Params()) != hash {
		return nil, gone("This hand-off changed after the link was sent.")
	}
	it := h.Item()
	return &Link{Account: t.account, Action: HandOff, Channel: channel, Item: &it, HandOff: h, Expires: t.expires, CSRF: csrfFor(key, nonce),
		nonce: nonce, hash: hash}, nil
}

// CheckHandOff is the phone's "I did it" on a hand-off link: csrf must be
// the link's. It looks on X now for the account's open hand-offs and
// returns the hand-off as it is then; once it is settled the link is
// used, so it works until the person's act is found.
func (s *Service) CheckHandOff(ctx context.Context, tok, csrf string) (*gateway.HandOff, error) {
	l, err := s.Check(ctx, tok)
	if err != nil {
		return nil, err
	}
	if l.Action != HandOff {
		return nil, &Refusal{Status: http.StatusBadRequest, Message: "This link cannot do that."}
	}
	if csrf == "" || !hmac.Equal([]byte(csrf), []byte(l.CSRF)) {
		return nil, &Refusal{Status: http.StatusForbidden, Message: "The form is missing its check value; open the link again."}
	}
	if _, err := s.o.HandOffs.Check(ctx, l.Account); err != nil {
		return nil, err
	}
	h, err := s.o.HandOffs.HandOff(ctx, l.Account, l.HandOff.ID)
	if err != nil {
		return nil, err
	}
	if h.Status != gateway.HandOffOpen {
		if _, err := s.o.DB.ExecContext(ctx, `UPDATE approval_links SET used_at = ?, used_by = ? WHERE nonce = ? AND used_at IS NULL`,
			store.FormatTime(s.o.Now()), "link:"+l.Channel, l.nonce); err != nil {
			return nil, fmt.Errorf("mark the link used: %w", err)
		}
	}
	return h, nil
}

// Act decides the link's item: approve or reject (a view link may do
// either; an approve or reject link only its own). csrf must be the link's.
// The link is marked used in the decision's transaction.
func (s *Service) Act(ctx context.Context, tok, csrf, decision string) (*gateway.ApprovalItem, error) {
	l, err := s.Check(ctx, tok)
	if err != nil {
		return nil, err
	}
	if csrf == "" || !hmac.Equal([]byte(csrf), []byte(l.CSRF)) {
		return nil, &Refusal{Status: http.StatusForbidden, Message: "The form is missing its check value; open the link again."}
	}
	if l.Action == HandOff {
		// A hand-off link decides nothing: its number is a hand-off's.
		return nil, &Refusal{Status: http.StatusBadRequest, Message: "This link cannot do that."}
	}
	if decision == "" {
		decision = l.Action
	}
	if decision != Approve && decision != Reject || (l.Action != View && decision != l.Action) {
		return nil, &Refusal{Status: http.StatusBadRequest, Message: "This link cannot do that."}
	}
	reviewer := "link:" + l.Channel
	used := false
	// The decision is bound to the content the link was issued for, not
	// to what Check read: an edit landing after Check is caught inside
	// the decision's transaction.
	mark := func(ctx context.Context, tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE approval_links SET used_at = ?, used_by = ? WHERE nonce = ? AND used_at IS NULL AND revoked_at IS NULL`,
			store.FormatTime(s.o.Now()), reviewer, l.nonce)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n != 1 {
			used = true
			return apperr.New(apperr.ApprovalNotPending, "this link was already used")
		}
		return nil
	}
	it, err := s.o.Queue.Decide(ctx, l.Account, l.Item.ID, decision == Approve, gateway.Decision{Reviewer: reviewer, Shown: l.hash, Hook: mark})
	if used {
		return nil, gone("This link was already used.")
	}
	if apperr.CodeOf(err) == apperr.ApprovalChanged {
		return nil, gone("This post was edited after the link was sent, so nothing was decided. Use the link in the newer message.")
	}
	if apperr.CodeOf(err) == apperr.ApprovalNotPending {
		// Another device decided first.
		return nil, gone("This item was already decided.")
	}
	if err != nil && it == nil {
		return nil, err
	}
	return it, err
}

// Revoke kills every unused link of account's approval item id (not a
// hand-off's of the same number); it returns how many were still open.
func (s *Service) Revoke(ctx context.Context, account string, id int64) (int64, error) {
	now := store.FormatTime(s.o.Now())
	res, err := s.o.DB.ExecContext(ctx, `UPDATE approval_links SET revoked_at = ? WHERE account_id = ? AND item_id = ? AND action <> ? AND used_at IS NULL
		AND revoked_at IS NULL AND expires_at > ?`, now, account, id, HandOff, now)
	if err != nil {
		return 0, fmt.Errorf("revoke the links of item %d: %w", id, err)
	}
	return res.RowsAffected()
}

// RotateKey replaces the key, which kills every link issued so far, and
// marks them revoked; it returns how many were still open.
func (s *Service) RotateKey(ctx context.Context) (int64, error) {
	if err := writeKey(s.o.KeyPath, true); err != nil {
		return 0, err
	}
	now := store.FormatTime(s.o.Now())
	res, err := s.o.DB.ExecContext(ctx, `UPDATE approval_links SET revoked_at = ? WHERE used_at IS NULL AND revoked_at IS NULL AND expires_at > ?`, now, now)
	if err != nil {
		return 0, fmt.Errorf("the key is rotated, but marking the old links revoked failed: %w", err)
	}
	return res.RowsAffected()
}
