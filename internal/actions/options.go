package actions

import (
	"cmp"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/argcheck"
	"github.com/tuitbot/tuitbot/internal/xapi"
)

// PostOptions are the optional settings of a new post. They are part of the
// stored parameters, so the intent fingerprint, idempotency and approval
// cover them.
type PostOptions struct {
	ReplySettings   string    `json:"reply_settings,omitempty" jsonschema:"who may reply"`
	Poll            *PollSpec `json:"poll,omitempty" jsonschema:"a poll; a post with a poll takes no media and no quote"`
	CommunityID     string    `json:"community_id,omitempty" jsonschema:"id of a community to post in"`
	MadeWithAI      bool      `json:"made_with_ai,omitempty" jsonschema:"disclose AI-generated media"`
	PaidPartnership bool      `json:"paid_partnership,omitempty" jsonschema:"disclose a paid partnership"`
}

// PollSpec is a poll to attach to a new post.
type PollSpec struct {
	Options         []string `json:"options" jsonschema:"the choices"`
	DurationMinutes int      `json:"duration_minutes" jsonschema:"minutes voting stays open"`
}

// Limits declares the options' limits.
func (PostOptions) Limits() argcheck.Limits {
	return argcheck.Limits{"reply_settings": {Enum: xapi.ReplySettings}, "community_id": {ID: true}}
}

// Limits declares the poll's limits: X's.
func (PollSpec) Limits() argcheck.Limits {
	return argcheck.Limits{
		"options":          {MinItems: xapi.MinPollOptions, MaxItems: xapi.MaxPollOptions, MaxLength: xapi.MaxPollOptionLength},
		"duration_minutes": argcheck.Between(xapi.MinPollMinutes, xapi.MaxPollMinutes),
	}
}

// normalized returns o in its one canonical spelling: nil when it sets
// nothing, and no reply_settings for X's default, so two spellings of the
// same intent are the same request.
func (o *PostOptions) normalized() *PostOptions {
	if o == nil {
		return nil
	}
	n := *o
	if n.ReplySettings == "everyone" {
		n.ReplySettings = ""
	}
	if n.Poll != nil {
		p := PollSpec{Options: slices.Clone(n.Poll.Options), DurationMinutes: n.Poll.DurationMinutes}
		n.Poll = &p
	}
	if n == (PostOptions{}) {
		return nil
	}
	return &n
}

// Checked returns o in its canonical spelling after checking it for a
// post with no media that quotes nothing (a draft's post or thread);
// errors name the field under field.
func (o *PostOptions) Checked(field string) (*PostOptions, error) {
	if err := o.validate(field, 0, false); err != nil {
		return nil, err
	}
	return o.normalized(), nil
}

// Validate checks o for a post with mediaCount media that quotes or not;
// errors name the field under field.
func (o *PostOptions) Validate(field string, mediaCount int, quote bool) error {
	return o.validate(field, mediaCount, quote)
}

// validate checks o for a post with mediaCount media that quotes or not;
// errors name the field under field ("options").
func (o *PostOptions) validate(field string, mediaCount int, quote bool) error {
	if o == nil {
		return nil
	}
	if err := argcheck.CheckAt(field, reflect.ValueOf(o), o.Limits()); err != nil {
		return err
	}
	p := o.Poll
	if p == nil {
		return nil
	}
	bad := func(sub, format string, args ...any) error {
		return apperr.New(apperr.InvalidInput, "%s.%s: %s", field, sub, fmt.Sprintf(format, args...))
	}
	if mediaCount > 0 {
		return bad("poll", "a post with a poll cannot carry media; drop media_ids or the poll")
	}
	if quote {
		return bad("poll", "a quote cannot carry a poll")
	}
	for i, c := range p.Options {
		if strings.TrimSpace(c) == "" {
			return bad(fmt.Sprintf("poll.options[%d]", i), "must not be empty")
		}
	}
	return nil
}

// apply copies o onto the X request.
func (o *PostOptions) apply(p *xapi.PostParams) {
	if o == nil {
		return
	}
	p.ReplySettings, p.CommunityID, p.MadeWithAI, p.PaidPartnership = o.ReplySettings, o.CommunityID, o.MadeWithAI, o.PaidPartnership
	if o.Poll != nil {
		p.Poll = &xapi.Poll{Options: slices.Clone(o.Poll.Options), DurationMinutes: o.Poll.DurationMinutes}
	}
}

// replyAudience says who may reply, for a reviewer.
var replyAudience = map[string]string{
	"following":      "people you follow",
	"mentionedUsers": "people you mention",
	"subscribers":    "your subscribers",
	"verified":       "verified accounts",
}

// DescribeOptions renders the options in stored post or thread parameters
// for a human deciding on them ("Poll: A / B, 1 day", "Replies: people you
// follow"); nil when there are none.
func DescribeOptions(params json.RawMessage) []string {
	var p struct {
		Options *PostOptions `json:"options"`
	}
	if json.Unmarshal(params, &p) != nil {
		return nil
	}
	return p.Options.Describe()
}

// ReplyAudience says who may reply under reply setting v, in the words
// DescribeOptions uses ("people you follow"; "everyone" for X's default).
func ReplyAudience(v string) string {
	if v == "" || v == "everyone" {
		return "everyone"
	}
	return cmp.Or(replyAudience[v], v)
}

// Describe renders o for a human deciding on it ("Poll: A / B, 1 day",
// "Replies: people you follow"); nil when it sets nothing.
func (o *PostOptions) Describe() []string {
	if o == nil {
		return nil
	}
	var out []string
	if o.Poll != nil {
		out = append(out, fmt.Sprintf("Poll: %s, %s", strings.Join(o.Poll.Options, " / "), PollDuration(o.Poll.DurationMinutes)))
	}
	if o.ReplySettings != "" && o.ReplySettings != "everyone" {
		out = append(out, "Replies: "+ReplyAudience(o.ReplySettings))
	}
	if o.CommunityID != "" {
		out = append(out, "Community: "+o.CommunityID)
	}
	if o.MadeWithAI {
		out = append(out, "Made with AI")
	}
	if o.PaidPartnership {
		out = append(out, "Paid partnership")
	}
	return out
}

// PollDuration renders a poll's duration of m minutes in days, hours and
// minutes ("1 day 6 hours").
func PollDuration(m int) string {
	unit := func(n int, name string) string {
		if n == 1 {
			return "1 " + name
		}
		return fmt.Sprintf("%d %ss", n, name)
	}
	var parts []string
	if d := m / (24 * 60); d > 0 {
		parts = append(parts, unit(d, "day"))
	}
	if h := m % (24 * 60) / 60; h > 0 {
		parts = append(parts, unit(h, "hour"))
	}
	if r := m % 60; r > 0 || len(parts) == 0 {
		parts = append(parts, unit(r, "minute"))
	}
	return strings.Join(parts, " ")
}

// CheckOptions is o in its canonical spelling, checked as the options of a
// new post (or a thread's first post) that carries no media and quotes
// nothing: what an item stored for later posting may hold. Errors name
// the field under field.
func CheckOptions(field string, o *PostOptions) (*PostOptions, error) {
	n := o.normalized()
	if err := n.validate(field, 0, false); err != nil {
		return nil, err
	}
	return n, nil
}
