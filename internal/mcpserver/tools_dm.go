package mcpserver

import (
	"context"
	"strings"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/argcheck"
	"github.com/tuitbot/tuitbot/internal/envelope"
	"github.com/tuitbot/tuitbot/internal/xapi"
)

// DMEventsInput is x_get_dm_events' input.
type DMEventsInput struct {
	ParticipantID   string   `json:"participant_id,omitempty" jsonschema:"only the conversation with this user (a decimal id); all conversations when empty"`
	MaxResults      int      `json:"max_results,omitempty" jsonschema:"1-100, default 20 (clamped)"`
	PaginationToken string   `json:"pagination_token,omitempty" jsonschema:"next_token of the previous page"`
	EventTypes      []string `json:"event_types,omitempty" jsonschema:"MessageCreate, ParticipantsJoin or ParticipantsLeave; all when empty"`
}

// Limits declares the arguments' limits.
func (DMEventsInput) Limits() argcheck.Limits {
	return argcheck.Limits{"participant_id": {ID: true}, "event_types": {MaxItems: len(xapi.DMEventTypes)}}
}

// DMEventList is x_get_dm_events' data.
type DMEventList struct {
	Events []xapi.DMEvent `json:"events"`
	Errors []xapi.Problem `json:"errors,omitempty"`
}

// CommunitySearchInput is x_search_communities' input.
type CommunitySearchInput struct {
	Query           string `json:"query" jsonschema:"words to find in a community's name or description"`
	MaxResults      int    `json:"max_results,omitempty" jsonschema:"10-100, default 10 (clamped)"`
	PaginationToken string `json:"pagination_token,omitempty" jsonschema:"next_token of the previous page"`
}

// Limits declares the arguments' limits.
func (CommunitySearchInput) Limits() argcheck.Limits {
	return argcheck.Limits{"query": {MaxLength: 4096}}
}

// CommunityList is x_search_communities' data.
type CommunityList struct {
	Communities []xapi.Community `json:"communities"`
	Errors      []xapi.Problem   `json:"errors,omitempty"`
}

func dmEvents(p *xapi.Page[xapi.DMEvent], m envelope.Meta) (Result, error) {
	return Result{Data: DMEventList{Events: p.Data, Errors: p.Errors}, Meta: pageMeta(p, m)}, nil
}

func communities(p *xapi.Page[xapi.Community], m envelope.Meta) (Result, error) {
	return Result{Data: CommunityList{Communities: p.Data, Errors: p.Errors}, Meta: pageMeta(p, m)}, nil
}

// dmReadTools are the direct-message and community reads. Messages are
// private, so reading them is for the workflow profile only.
func dmReadTools() []*Tool {
	return []*Tool{
		def(readSpec("x_get_dm_events", "Get direct messages",
			"Get the account's direct-message events, newest first: all conversations, or the one with participant_id. "+
				"Needs a login that granted the dm scopes (tuitbot auth --scopes +dm).", workflowOnly, DMEventList{}),
			func(ctx context.Context, c *Call, in DMEventsInput) (Result, error) {
				var m envelope.Meta
				n := clamp("max_results", in.MaxResults, 20, 1, 100, &m)
				return page(c, m, dmEvents, func(x *xapi.Client) (*xapi.Page[xapi.DMEvent], error) {
					// The client hands every DM read to the home's records:
					// who wrote first, and who said stop.
					return x.DMEvents(ctx, xapi.DMEventParams{ParticipantID: in.ParticipantID, MaxResults: n,
						PaginationToken: in.PaginationToken, EventTypes: in.EventTypes})
				})
			}),
		def(readSpec("x_search_communities", "Search communities",
			"Find X communities by words in their name or description; a post goes to one with x_post_tweet's options.community_id.", allProfiles, CommunityList{}),
			func(ctx context.Context, c *Call, in CommunitySearchInput) (Result, error) {
				q := strings.TrimSpace(in.Query)
				if q == "" {
					return Result{}, apperr.New(apperr.InvalidInput, "query: required")
				}
				var m envelope.Meta
				n := clamp("max_results", in.MaxResults, 10, 10, 100, &m)
				return page(c, m, communities, func(x *xapi.Client) (*xapi.Page[xapi.Community], error) {
					return x.SearchCommunities(ctx, q, n, in.PaginationToken)
				})
			}),
	}
}
