package actions

import (
	"bytes"
	"encoding/json"
	"reflect"

	"github.com/tuitbot/tuitbot/internal/xrequest"
)

// A call's intent is what it does on X in the words of the typed tool with
// that effect (see gateway.Action.Intent): a typed tool's intent is its own
// parameters; a universal request's is the parameters of the typed tool it
// does the work of, read from the request; a thread of one post is that
// post. The gateway canonicalises and hashes it, so every spelling of one
// effect is one call for the duplicate checks.

// paramShape is the form of a typed tool's stored parameters that a
// universal request can be read into.
type paramShape int

const (
	shapeNone       paramShape = iota
	shapePost                  // PostParams
	shapeTweet                 // TweetIDParams
	shapeUser                  // UserIDParams
	shapeList                  // ListIDParams
	shapeListMember            // ListMemberParams
	shapeEdit                  // EditParams
	shapeDM                    // DMParams
	shapeDMEvent               // DMEventIDParams
)

// paramShapes gives each typed tool's parameter shape, from its arguments'
// type.
func paramShapes() map[string]paramShape {
	out := map[string]paramShape{}
	for _, m := range Mutations() {
		switch m.Input {
		case reflect.TypeFor[PostInput](), reflect.TypeFor[ReplyInput](), reflect.TypeFor[QuoteInput]():
			out[m.Name] = shapePost
		case reflect.TypeFor[TweetIDParams]():
			out[m.Name] = shapeTweet
		case reflect.TypeFor[UserIDParams]():
			out[m.Name] = shapeUser
		case reflect.TypeFor[ListIDParams]():
			out[m.Name] = shapeList
		case reflect.TypeFor[ListMemberParams]():
			out[m.Name] = shapeListMember
		case reflect.TypeFor[EditParams]():
			out[m.Name] = shapeEdit
		case reflect.TypeFor[DMParams]():
			out[m.Name] = shapeDM
		case reflect.TypeFor[DMEventIDParams]():
			out[m.Name] = shapeDMEvent
		}
	}
	return out
}

// ownIntent is a typed tool's intent: the tool and its parameters.
func ownIntent(tool string) func(json.RawMessage) (string, json.RawMessage, bool) {
	return func(params json.RawMessage) (string, json.RawMessage, bool) { return tool, params, true }
}

// requestIntent reads a universal request as the typed tool whose effect
// it has. ok is false for a write no typed tool covers and for a request
// that cannot be read as that tool's parameters; it is then only ever
// identical to itself. The host is left out: api.x.com and the upload hosts
// reach one X. So is the acting user a path names (/2/users/{id}/likes): X
// acts only for the account whose token signs the request, and a request
// naming another user is refused, with no effect.
func requestIntent(c *xrequest.Checked, shapes map[string]paramShape) (string, json.RawMessage, bool) {
	e := xrequest.ClassifyChecked(c)
	tool := e.Equivalent()
	var v any
	switch shapes[tool] {
	case shapePost:
		p, ok := postIntent(c)
		if !ok {
			return "", nil, false
		}
		v = p
	case shapeEdit:
		p, ok := editIntent(c)
		if !ok {
			return "", nil, false
		}
		v = p
	case shapeTweet:
		if e.TweetID == "" {
			return "", nil, false
		}
		v = TweetIDParams{TweetID: e.TweetID}
	case shapeUser:
		if e.TargetUserID == "" {
			return "", nil, false
		}
		v = UserIDParams{TargetUserID: e.TargetUserID}
	case shapeList:
		if e.ListID == "" {
			return "", nil, false
		}
		v = ListIDParams{ListID: e.ListID}
	case shapeListMember:
		if e.ListID == "" || e.TargetUserID == "" {
			return "", nil, false
		}
		v = ListMemberParams{ListID: e.ListID, UserID: e.TargetUserID}
	case shapeDM:
		p, ok := dmIntent(c, e.TargetUserID)
		if !ok {
			return "", nil, false
		}
		v = p
	case shapeDMEvent:
		if e.DMEventID == "" {
			return "", nil, false
		}
		v = DMEventIDParams{DMEventID: e.DMEventID}
	default:
		return "", nil, false
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "", nil, false
	}
	return tool, b, true
}

// rawPostIntent is a v2 create-post body read as PostParams, with every
// other field of the body kept beside them: a field no typed tool sends
// (a poll, reply settings) makes it another intent.
type rawPostIntent struct {
	PostParams
	Extra map[string]any `json:"x_request_extra,omitempty"`
}

// postIntent reads a POST /2/tweets body. A null field is left out, as X
// treats it; a field of the wrong type makes the request unreadable.
func postIntent(c *xrequest.Checked) (rawPostIntent, bool) {
	var p rawPostIntent
	if c.Path != "/2/tweets" || len(c.Query) > 0 || len(c.Body) == 0 {
		return p, false
	}
	dec := json.NewDecoder(bytes.NewReader(c.Body))
	dec.UseNumber()
	var body map[string]any
	if err := dec.Decode(&body); err != nil || body == nil {
		return p, false
	}
	p.Extra = map[string]any{}
	str := func(v any, dst *string) bool {
		s, ok := v.(string)
		*dst = s
		return ok
	}
	for k, v := range body {
		if v == nil {
			continue
		}
		switch k {
		case "text":
			if !str(v, &p.Text) {
				return p, false
			}
		case "quote_tweet_id":
			if !str(v, &p.QuotedTweetID) {
				return p, false
			}
		case "reply", "media":
			obj, ok := v.(map[string]any)
			if !ok {
				return p, false
			}
			rest := map[string]any{}
			for sk, sv := range obj {
				switch {
				case sv == nil:
				case k == "reply" && sk == "in_reply_to_tweet_id":
					if !str(sv, &p.InReplyToID) {
						return p, false
					}
				case k == "media" && sk == "media_ids":
					ids, ok := sv.([]any)
					if !ok {
						return p, false
					}
					for _, id := range ids {
						var s string
						if !str(id, &s) {
							return p, false
						}
						p.MediaIDs = append(p.MediaIDs, s)
					}
				default:
					rest[sk] = sv
				}
			}
			if len(rest) > 0 {
				p.Extra[k] = rest
			}
		default:
			p.Extra[k] = v
		}
	}
	return p, true
}

// rawEditIntent is a v2 edit body read as EditParams, with every other
// field of the body kept beside them, as rawPostIntent does for a post.
type rawEditIntent struct {
	EditParams
	Extra map[string]any `json:"x_request_extra,omitempty"`
}

// editIntent reads a POST /2/tweets body with edit_options: the post it
// edits, its text and media. Anything else an edit body holds (a reply or
// a quote X refuses, reply settings) makes it another intent.
func editIntent(c *xrequest.Checked) (rawEditIntent, bool) {
	p, ok := postIntent(c)
	eo, isMap := p.Extra["edit_options"].(map[string]any)
	if !ok || !isMap || p.InReplyToID != "" || p.QuotedTweetID != "" {
		return rawEditIntent{}, false
	}
	id, _ := eo["previous_post_id"].(string)
	if id == "" || len(eo) != 1 {
		return rawEditIntent{}, false
	}
	delete(p.Extra, "edit_options")
	out := rawEditIntent{EditParams: EditParams{TweetID: id, Text: p.Text, MediaIDs: p.MediaIDs}}
	if len(p.Extra) > 0 {
		out.Extra = p.Extra
	}
	return out, true
}

// threadIntent is a thread's intent: a thread of one post is that post,
// as x_post_tweet would make it; a longer thread is itself.
func threadIntent(p ThreadParams, params json.RawMessage) (string, json.RawMessage, bool) {
	if len(p.Tweets) != 1 {
		return "x_post_thread", params, true
	}
	post := PostParams{Text: p.Tweets[0]}
	if len(p.MediaIDs) > 0 {
		post.MediaIDs = p.MediaIDs[0]
	}
	b, err := json.Marshal(post)
	if err != nil {
		return "", nil, false
	}
	return "x_post_tweet", b, true
}

// dmIntent reads a POST /2/dm_conversations/with/{participant_id}/messages
// body as DMParams. A body x_send_dm could not send (another field, more
// than one attachment) is unreadable: only identical to itself.
func dmIntent(c *xrequest.Checked, participant string) (DMParams, bool) {
	var body struct {
		Text        string `json:"text"`
		Attachments []struct {
			MediaID string `json:"media_id"`
		} `json:"attachments"`
	}
	if participant == "" || len(c.Query) > 0 || len(c.Body) == 0 {
		return DMParams{}, false
	}
	dec := json.NewDecoder(bytes.NewReader(c.Body))
	dec.DisallowUnknownFields()
	if dec.Decode(&body) != nil || len(body.Attachments) > 1 {
		return DMParams{}, false
	}
	p := DMParams{ParticipantID: participant, Text: body.Text}
	if len(body.Attachments) == 1 {
		p.MediaID = body.Attachments[0].MediaID
	}
	return p, true
}
