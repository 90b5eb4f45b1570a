package web

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/tuitbot/tuitbot/internal/actions"
	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/gateway"
	"github.com/tuitbot/tuitbot/internal/xapi"
)

// optionsField is the parameter of a post that holds its options.
const optionsField = "options"

// optionsForm is the edit form's view of a queued post's options, each
// field prefilled with what the item holds.
type optionsForm struct {
	// Reply is the chosen reply setting; Replies its choices in words.
	Reply   string
	Replies []replyChoice
	// Choices are the poll's choice boxes (as many as X allows), Minutes
	// its duration ("" when there is no poll).
	Choices          []string
	Minutes          string
	MinMinutes       string
	MaxMinutes       string
	MaxLen           string
	Community        string
	MadeWithAI, Paid bool
	// Bad marks the control a refused edit named.
	Bad struct{ Reply, Poll, Minutes, Community bool }
	// ChoiceRows are the Choices as the form shows them (set by place).
	ChoiceRows []pollChoice
}

// replyChoice is one reply setting; Selected marks the chosen one (set by
// place).
type replyChoice struct {
	Value, Label string
	Selected     bool
}

// pollChoice is one poll choice box: its element id, its number as shown
// (from 1) and its text.
type pollChoice struct{ ElemID, Number, Value string }

// place computes what the form of item id (its decimal id) shows from the
// form's values, once, so the template only prints them.
func (f *optionsForm) place(id string) {
	for i := range f.Replies {
		f.Replies[i].Selected = f.Replies[i].Value == f.Reply
	}
	f.ChoiceRows = make([]pollChoice, len(f.Choices))
	for i, c := range f.Choices {
		f.ChoiceRows[i] = pollChoice{ElemID: "poll-" + id + "-" + strconv.Itoa(i), Number: strconv.Itoa(i + 1), Value: c}
	}
}

// optionsFormOf is the form of the options in stored params, or nil when
// the action does not let a human change them.
func optionsFormOf(act *gateway.Action, params json.RawMessage) *optionsForm {
	if act == nil || !slices.Contains(act.Editable, optionsField) {
		return nil
	}
	var p struct {
		Options actions.PostOptions `json:"options"`
	}
	_ = json.Unmarshal(params, &p)
	o := p.Options
	f := &optionsForm{Reply: o.ReplySettings, Choices: make([]string, xapi.MaxPollOptions), Community: o.CommunityID,
		MadeWithAI: o.MadeWithAI, Paid: o.PaidPartnership,
		MinMinutes: strconv.Itoa(xapi.MinPollMinutes), MaxMinutes: strconv.Itoa(xapi.MaxPollMinutes), MaxLen: strconv.Itoa(xapi.MaxPollOptionLength)}
	if f.Reply == "" {
		f.Reply = "everyone"
	}
	for _, v := range xapi.ReplySettings {
		f.Replies = append(f.Replies, replyChoice{Value: v, Label: actions.ReplyAudience(v)})
	}
	if o.Poll != nil {
		copy(f.Choices, o.Poll.Options)
		f.Minutes = strconv.Itoa(o.Poll.DurationMinutes)
	}
	return f
}

// optionsFromForm reads the options the edit form sent, as the JSON the
// gateway's edit takes (null when they set nothing). Only what the form
// cannot spell is refused here; the gateway validates the rest, naming
// the field, as it does for every other way of editing.
func optionsFromForm(r *http.Request) (json.RawMessage, error) {
	o := actions.PostOptions{
		ReplySettings:   r.PostFormValue("reply_settings"),
		CommunityID:     strings.TrimSpace(r.PostFormValue("community_id")),
		MadeWithAI:      r.PostFormValue("made_with_ai") != "",
		PaidPartnership: r.PostFormValue("paid_partnership") != "",
	}
	if o.ReplySettings == "everyone" {
		o.ReplySettings = ""
	}
	var choices []string
	for _, c := range r.PostForm["poll_option"] {
		if c = strings.TrimSpace(c); c != "" {
			choices = append(choices, c)
		}
	}
	minutes := strings.TrimSpace(r.PostFormValue("poll_minutes"))
	if len(choices) > 0 || minutes != "" {
		p := &actions.PollSpec{Options: choices}
		if minutes != "" {
			n, err := strconv.Atoi(minutes)
			if err != nil {
				return nil, apperr.New(apperr.InvalidInput, "options.poll.duration_minutes: %q is not a whole number of minutes", minutes)
			}
			p.DurationMinutes = n
		}
		o.Poll = p
	}
	if o.ReplySettings == "" && o.Poll == nil && o.CommunityID == "" && !o.MadeWithAI && !o.PaidPartnership {
		return json.RawMessage("null"), nil
	}
	raw, err := json.Marshal(o)
	if err != nil {
		return nil, apperr.Wrap(apperr.InternalError, err, "options: cannot encode: %v", err)
	}
	return raw, nil
}

// refill puts the values a refused edit sent back in the form, with the
// control the refusal named (field, as "options.poll.options[1]") marked.
func (f *optionsForm) refill(r *http.Request, field string) {
	f.Reply, f.Community = r.PostFormValue("reply_settings"), r.PostFormValue("community_id")
	f.MadeWithAI, f.Paid = r.PostFormValue("made_with_ai") != "", r.PostFormValue("paid_partnership") != ""
	f.Minutes = r.PostFormValue("poll_minutes")
	f.Choices = make([]string, xapi.MaxPollOptions)
	copy(f.Choices, r.PostForm["poll_option"])
	switch {
	case field == "options.reply_settings":
		f.Bad.Reply = true
	case field == "options.community_id":
		f.Bad.Community = true
	case field == "options.poll.duration_minutes":
		f.Bad.Minutes = true
	case strings.HasPrefix(field, "options.poll"):
		f.Bad.Poll = true
	}
}

// fieldOf is the parameter an error message names before its colon
// ("options.poll: a post with a poll cannot carry media"), or "".
func fieldOf(msg string) string {
	name, _, ok := strings.Cut(msg, ": ")
	if !ok || strings.ContainsAny(name, " \t") {
		return ""
	}
	return name
}
