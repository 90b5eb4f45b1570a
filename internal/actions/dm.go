package actions

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/argcheck"
	"github.com/tuitbot/tuitbot/internal/envelope"
	"github.com/tuitbot/tuitbot/internal/gateway"
	"github.com/tuitbot/tuitbot/internal/policy"
	"github.com/tuitbot/tuitbot/internal/xapi"
)

// DMParams are x_send_dm's arguments and stored parameters.
type DMParams struct {
	ParticipantID string `json:"participant_id" jsonschema:"the recipient's user id (a decimal string)"`
	Text          string `json:"text" jsonschema:"the message, 1 to 10000 characters"`
	MediaID       string `json:"media_id,omitempty" jsonschema:"a media id from x_upload_media to attach"`
}

// Limits declares the arguments' limits.
func (DMParams) Limits() argcheck.Limits {
	return argcheck.Limits{"participant_id": {ID: true}, "media_id": {ID: true}, "text": {MaxLength: xapi.MaxDMLength}}
}

// Validate checks the stored parameters, as a human may have edited them.
func (p DMParams) Validate() error {
	if strings.TrimSpace(p.Text) == "" {
		return apperr.New(apperr.InvalidInput, "text: must not be empty")
	}
	return argcheck.Check(reflectOf(p), p.Limits())
}

// SentDM is x_send_dm's data.
type SentDM struct {
	DMEventID      string `json:"dm_event_id"`
	ConversationID string `json:"dm_conversation_id"`
	ParticipantID  string `json:"participant_id"`
}

// DMEventIDParams are x_delete_dm's arguments and stored parameters.
type DMEventIDParams struct {
	DMEventID string `json:"dm_event_id" jsonschema:"the id of a direct message you sent (dm_event_id from x_send_dm)"`
}

// Limits declares the arguments' limits.
func (DMEventIDParams) Limits() argcheck.Limits { return argcheck.Limits{"dm_event_id": {ID: true}} }

// DeletedDM is x_delete_dm's data.
type DeletedDM struct {
	Deleted   bool   `json:"deleted"`
	DMEventID string `json:"dm_event_id"`
}

// dmMutations are the direct-message tools. A message is private and goes
// to one person at once, so it waits for a human unless a rule names
// x_send_dm itself: a rule that allows a whole category, or everything,
// does not send messages (see policy.Config.ApprovalUnlessNamed).
func dmMutations() []Mutation {
	return []Mutation{
		define[DMParams, SentDM](Mutation{Name: "x_send_dm", Title: "Send direct message", Category: policy.CatDM,
			ApprovalUnlessNamed: true,
			Description: "Send a private direct message to one user, optionally with one uploaded media. " +
				"Needs a login that granted the dm scopes (tuitbot auth --scopes +dm). " +
				"Always goes to approval unless a policy rule names x_send_dm; limits.max_dms_per_day caps them."},
			func(in DMParams, _ Env) (any, error) { return in, in.Validate() }, sendDMAction),
		define[DMEventIDParams, DeletedDM](Mutation{Name: "x_delete_dm", Title: "Delete direct message", Category: policy.CatDelete,
			Destructive: true, Idempotent: true, Irreversible: "Deletion is permanent.",
			Description: "Delete a direct message you sent. Deletes always need human approval."},
			same[DMEventIDParams], deleteDMAction),
	}
}

func sendDMAction(d Deps, m Mutation) *gateway.Action {
	parse := decodeValid[DMParams]
	return &gateway.Action{
		EditableText: "text",
		Validate:     func(params json.RawMessage) error { _, err := parse(params); return err },
		Cost:         func(json.RawMessage) float64 { return costOf(m) },
		Execute: func(ctx context.Context, params json.RawMessage) (gateway.Result, error) {
			p, err := parse(params)
			if err != nil {
				return gateway.Result{}, err
			}
			x, err := client(d)
			if err != nil {
				return gateway.Result{}, err
			}
			sent, info, err := x.SendDM(ctx, p.ParticipantID, p.Text, p.MediaID)
			if err != nil {
				return gateway.Result{RetryCount: info.RetryCount}, err
			}
			return gateway.Result{
				Data:       SentDM{DMEventID: sent.EventID, ConversationID: sent.ConversationID, ParticipantID: p.ParticipantID},
				Rollback:   undoOf(m, sent.EventID),
				RetryCount: info.RetryCount,
			}, nil
		},
	}
}

func deleteDMAction(d Deps, m Mutation) *gateway.Action {
	return idAction[DMEventIDParams](d, m,
		func(ctx context.Context, x *xapi.Client, id string) (any, *envelope.Rollback, xapi.CallInfo, error) {
			ok, info, err := x.DeleteDM(ctx, id)
			return DeletedDM{Deleted: ok, DMEventID: id}, irreversible(m.Irreversible), info, err
		})
}

// ApprovalUnlessNamed lists the mutation tools that need approval unless a
// policy rule names them (policy.Config.ApprovalUnlessNamed).
func ApprovalUnlessNamed() []string {
	var out []string
	for _, m := range Mutations() {
		if m.ApprovalUnlessNamed {
			out = append(out, m.Name)
		}
	}
	return out
}
