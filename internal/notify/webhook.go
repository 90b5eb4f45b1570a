package notify

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/tuitbot/tuitbot/internal/config"
)

// Webhook posts each message as JSON signed with the Standard Webhooks
// scheme: webhook-id, webhook-timestamp and webhook-signature
// "v1,<base64 HMAC-SHA256(secret, id.timestamp.body)>".
type Webhook struct {
	name   string
	url    string
	secret string
	key    []byte
	client *http.Client
	now    func() time.Time
}

// secretPrefix starts every Standard Webhooks secret.
const secretPrefix = "whsec_"

// ParseWebhookSecret decodes a Standard Webhooks secret (whsec_ + base64).
func ParseWebhookSecret(s string) ([]byte, error) {
	rest, ok := strings.CutPrefix(strings.TrimSpace(s), secretPrefix)
	if !ok {
		return nil, errors.New("not a Standard Webhooks secret: it must start with whsec_")
	}
	key, err := base64.StdEncoding.DecodeString(rest)
	if err != nil {
		return nil, errors.New("not a Standard Webhooks secret: the part after whsec_ is not base64")
	}
	if len(key) < 16 {
		return nil, fmt.Errorf("the webhook secret is %d bytes; use at least 16 (24-64 is usual)", len(key))
	}
	return key, nil
}

// NewWebhook builds the channel; secret is the whsec_ value.
func NewWebhook(name, url, secret string, client *http.Client, now func() time.Time) (*Webhook, error) {
	key, err := ParseWebhookSecret(secret)
	if err != nil {
		return nil, err
	}
	return &Webhook{name: name, url: url, secret: strings.TrimSpace(secret), key: key, client: client, now: now}, nil
}

// credentials are the signing secret (whole, and its base64 part) and what
// the URL's user info and query carry.
func (w *Webhook) credentials() []string {
	return append(urlCredentials(w.url, false), w.secret, strings.TrimPrefix(w.secret, secretPrefix))
}

func (w *Webhook) Name() string { return w.name }
func (w *Webhook) Type() string { return config.ChannelWebhook }

// webhookData is an item as the webhook body carries it.
type webhookData struct {
	Account string `json:"account"`
	ItemID  int64  `json:"item_id,omitempty"`
	Tool    string `json:"tool"`
	Text    string `json:"text"`
	// Action, Effect and Target are the review page's words for the
	// item; Posts its texts one by one (a thread's in order) and Options
	// its settings in words.
	Action        string   `json:"action,omitempty"`
	Effect        string   `json:"effect,omitempty"`
	Target        string   `json:"target,omitempty"`
	Posts         []string `json:"posts,omitempty"`
	Options       []string `json:"options,omitempty"`
	ParamsHash    string   `json:"params_hash,omitempty"`
	Rule          string   `json:"rule,omitempty"`
	Caller        string   `json:"caller,omitempty"`
	CreatedAt     string   `json:"created_at,omitempty"`
	ExpiresAt     string   `json:"expires_at,omitempty"`
	ViewURL       string   `json:"view_url,omitempty"`
	ApproveURL    string   `json:"approve_url,omitempty"`
	RejectURL     string   `json:"reject_url,omitempty"`
	Status        string   `json:"status,omitempty"`
	ReviewedBy    string   `json:"reviewed_by,omitempty"`
	CorrelationID string   `json:"correlation_id,omitempty"`
	Error         string   `json:"error,omitempty"`
	DraftID       int64    `json:"draft_id,omitempty"`
	// HandOffID and IntentURL are a hand-off's (handoff.created): X's
	// page where a person does it; ViewURL is then its phone page.
	HandOffID int64  `json:"handoff_id,omitempty"`
	IntentURL string `json:"intent_url,omitempty"`
}

func dataOf(it Item, l Links) webhookData {
	d := webhookData{Account: it.Account, ItemID: it.ItemID, Tool: it.Tool, Text: it.Text, ParamsHash: it.ParamsHash, Rule: it.Rule,
		Caller: it.Caller, CreatedAt: it.CreatedAt, ExpiresAt: it.ExpiresAt, ViewURL: l.View, ApproveURL: l.Approve, RejectURL: l.Reject,
		Status: it.Status, ReviewedBy: it.ReviewedBy, CorrelationID: it.CorrelationID, Error: it.Error, DraftID: it.DraftID,
		HandOffID: it.HandOffID, IntentURL: it.IntentURL}
	if len(it.Params) > 0 {
		s := shownOf(it)
		d.Action, d.Effect, d.Target, d.Posts, d.Options = nameOf(it), s.effect, s.target, s.posts, s.options
	}
	return d
}

// WebhookBody is the JSON a webhook receives. A digest's data holds the
// items (and how many more the hourly cap held back) instead of one item.
func WebhookBody(m Message) ([]byte, error) {
	body := struct {
		Type      string `json:"type"`
		Timestamp string `json:"timestamp"`
		Data      any    `json:"data"`
	}{Type: m.Event, Timestamp: m.Timestamp.UTC().Format(time.RFC3339)}
	if !m.Digest() {
		body.Data = dataOf(m.Items[0], m.Links[0])
	} else {
		items := make([]webhookData, len(m.Items))
		for i := range m.Items {
			items[i] = dataOf(m.Items[i], m.Links[i])
		}
		body.Data = struct {
			Account string        `json:"account"`
			Items   []webhookData `json:"items"`
			More    int           `json:"more,omitempty"`
		}{m.Account, items, m.More}
	}
	return json.Marshal(body)
}

// Sign returns the webhook-signature value for a message.
func Sign(key []byte, id string, ts int64, body []byte) string {
	mac := hmac.New(sha256.New, key)
	fmt.Fprintf(mac, "%s.%d.", id, ts)
	mac.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

func (w *Webhook) Send(ctx context.Context, m Message) (string, error) {
	body, err := WebhookBody(m)
	if err != nil {
		return "", &SendError{Permanent: true, Err: err}
	}
	ts := w.now().Unix()
	_, err = postJSON(ctx, w.client, w.url, body, map[string]string{
		"webhook-id":        m.ID,
		"webhook-timestamp": strconv.FormatInt(ts, 10),
		"webhook-signature": Sign(w.key, m.ID, ts, body),
	}, w.now)
	return "", err
}
