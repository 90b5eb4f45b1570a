// Package postlimit decides how long a post an account may write: 280
// weighted characters, or 25,000 for an account with an X subscription
// (Basic, Premium or PremiumPlus). x_api.max_post_length says so outright
// (280 or 25000) or asks X (auto): the account's subscription_type from
// /2/users/me, kept in a file in the home and asked again once a day.
package postlimit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/tuitbot/tuitbot/internal/tweettext"
)

// RefreshAfter is how long a subscription X told is trusted before X is
// asked again.
const RefreshAfter = 24 * time.Hour

// The values of x_api.max_post_length.
const (
	Auto  = "auto"
	Short = "280"
	Long  = "25000"
)

// Limit is the longest post an account may write and why.
type Limit struct {
	// Max is in twitter-text weighted characters.
	Max int `json:"max_weighted_length"`
	// Reason says where Max comes from: "25000: account is Premium
	// (checked 2026-11-26)" or "280: x_api.max_post_length".
	Reason string `json:"reason"`
}

// Fixed is the limit of an account whose setting names a number, or
// ordinary posts when nothing else is known.
func Fixed(setting string) Limit {
	if setting == Long {
		return Limit{Max: tweettext.MaxLongWeightedLength, Reason: "25000: x_api.max_post_length"}
	}
	return Limit{Max: tweettext.MaxWeightedLength, Reason: "280: x_api.max_post_length"}
}

// ForSubscription is the limit of an account with X subscription sub,
// checked at the time given.
func ForSubscription(sub string, checked time.Time) Limit {
	day := checked.UTC().Format(time.DateOnly)
	switch sub {
	case "Basic", "Premium", "PremiumPlus":
		return Limit{Max: tweettext.MaxLongWeightedLength, Reason: fmt.Sprintf("25000: account is %s (checked %s)", sub, day)}
	case "":
		sub = "None"
	}
	return Limit{Max: tweettext.MaxWeightedLength, Reason: fmt.Sprintf("280: account is %s, without an X subscription (checked %s)", sub, day)}
}

// Resolver gives one account its limit. It is safe for concurrent use.
type Resolver struct {
	// Setting is x_api.max_post_length.
	Setting string
	// File keeps what X told (0600); empty keeps it in memory only.
	File string
	// Now is the clock that ages what X told.
	Now func() time.Time
	// Ask asks X for the account's subscription_type.
	Ask func(ctx context.Context) (string, error)

	mu   sync.Mutex
	seen *record
}

// record is what the file holds.
type record struct {
	Subscription string    `json:"subscription_type"`
	CheckedAt    time.Time `json:"checked_at"`
}

// Limit returns the account's limit. With auto it asks X when it has not
// in RefreshAfter; when X cannot be asked it keeps using an older answer,
// and without one it fails.
func (r *Resolver) Limit(ctx context.Context) (Limit, error) {
	if r == nil {
		return Fixed(Short), nil
	}
	if r.Setting != Auto {
		return Fixed(r.Setting), nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.Now()
	if r.seen == nil {
		r.seen = r.load()
	}
	if r.seen != nil && now.Sub(r.seen.CheckedAt) < RefreshAfter && !r.seen.CheckedAt.After(now) {
		return ForSubscription(r.seen.Subscription, r.seen.CheckedAt), nil
	}
	sub, err := r.Ask(ctx)
	if err != nil {
		if r.seen != nil {
			l := ForSubscription(r.seen.Subscription, r.seen.CheckedAt)
			l.Reason += "; X could not be asked again"
			return l, nil
		}
		return Limit{}, fmt.Errorf("ask X for the account's subscription_type (x_api.max_post_length = auto): %w", err)
	}
	r.seen = &record{Subscription: sub, CheckedAt: now.UTC()}
	r.save()
	return ForSubscription(sub, now), nil
}

// Known is the limit as last learned, without asking X: the setting's,
// or with auto what X said last (however old), or an ordinary post's
// when X was never asked.
func (r *Resolver) Known() Limit {
	if r == nil {
		return Fixed(Short)
	}
	if r.Setting != Auto {
		return Fixed(r.Setting)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.seen == nil {
		r.seen = r.load()
	}
	if r.seen == nil {
		return Limit{Max: tweettext.MaxWeightedLength, Reason: "280: the account's subscription_type is not known yet"}
	}
	return ForSubscription(r.seen.Subscription, r.seen.CheckedAt)
}

// load reads the file; a missing or unreadable one is no answer.
func (r *Resolver) load() *record {
	if r.File == "" {
		return nil
	}
	b, err := os.ReadFile(r.File)
	if err != nil {
		return nil
	}
	var rec record
	if json.Unmarshal(b, &rec) != nil || rec.CheckedAt.IsZero() {
		return nil
	}
	return &rec
}

// save writes the file whole or not at all; failing to keep the answer
// only means asking X again next time.
func (r *Resolver) save() {
	if r.File == "" {
		return
	}
	b, err := json.Marshal(r.seen)
	if err != nil {
		return
	}
	if err := os.MkdirAll(filepath.Dir(r.File), 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return
	}
	tmp, err := os.CreateTemp(filepath.Dir(r.File), ".subscription-*")
	if err != nil {
		return
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return
	}
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return
	}
	if tmp.Close() != nil {
		return
	}
	_ = os.Rename(tmp.Name(), r.File)
}
