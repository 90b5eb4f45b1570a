package main

import (
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/tuitbot/tuitbot/internal/config"
	"github.com/tuitbot/tuitbot/internal/gateway"
	"github.com/tuitbot/tuitbot/internal/mcpserver"
	"github.com/tuitbot/tuitbot/internal/xauth"
)

// ApprovalPage is `tuitbot approve list --json`: list_pending_approvals'
// fields (items, count) and where the page sits in the queue.
type ApprovalPage struct {
	mcpserver.ApprovalList
	TotalPending int `json:"total_pending"`
	Offset       int `json:"offset"`
	Limit        int `json:"limit"`
}

func approvalPage(items []gateway.ApprovalItem, total, offset, limit int) ApprovalPage {
	if items == nil {
		items = []gateway.ApprovalItem{}
	}
	return ApprovalPage{ApprovalList: mcpserver.ApprovalList{Items: items, Count: len(items)}, TotalPending: total, Offset: offset, Limit: limit}
}

// TokenStatus is `tuitbot auth status --json`. It never carries a token.
type TokenStatus struct {
	TokenFile        string    `json:"token_file"`
	TokenType        string    `json:"token_type,omitempty"`
	Scopes           []string  `json:"scopes"`
	ExpiresAt        time.Time `json:"expires_at,omitzero"`
	Expired          bool      `json:"expired"`
	RemainingSeconds int64     `json:"remaining_seconds,omitempty"`
	HasRefreshToken  bool      `json:"has_refresh_token"`
}

func tokenStatus(s xauth.StatusInfo) TokenStatus {
	scopes := s.Scopes
	if scopes == nil {
		scopes = []string{}
	}
	return TokenStatus{TokenFile: s.Path, TokenType: s.TokenType, Scopes: scopes, ExpiresAt: s.ExpiresAt,
		Expired: s.Expired, RemainingSeconds: int64(s.Remaining / time.Second), HasRefreshToken: s.HasRefreshToken}
}

// jsonFlag gives cmd the --json flag that every command printing data
// takes; fields names what the document holds, for the help.
func jsonFlag(cmd *cobra.Command, fields string) *bool {
	return cmd.Flags().Bool("json", false, "print JSON: "+fields)
}

// answer prints v as the command's one JSON document when asJSON is
// set, else with what text prints for a person.
func (c *cli) answer(asJSON bool, v any, text func(w io.Writer)) error {
	if asJSON {
		return writeJSON(c.stdout, v)
	}
	text(c.stdout)
	return nil
}

// ConfigCheck is `tuitbot config validate --json`.
type ConfigCheck struct {
	Valid    bool     `json:"valid"`
	Warnings []string `json:"warnings"`
}

// ExportSummary is `tuitbot export --out FILE --json`.
type ExportSummary struct {
	What   string `json:"what"`
	Format string `json:"format"`
	Rows   int64  `json:"rows"`
	Out    string `json:"out"`
}

// SandboxReset is `tuitbot sandbox reset --json`.
type SandboxReset struct {
	Removed []string `json:"removed"`
}

// LinksRevoked is `tuitbot approve links rotate-key|revoke --json`: how
// many open links stopped working, and for revoke the item's id.
type LinksRevoked struct {
	ID      int64 `json:"id,omitempty"`
	Revoked int64 `json:"revoked_links"`
}

// ChannelAdded is `tuitbot notify add --json`: the file written and the
// entry added to it.
type ChannelAdded struct {
	File    string               `json:"file"`
	Channel config.NotifyChannel `json:"channel"`
}

// OutboxChange is `tuitbot notify outbox retry|drop --json`.
type OutboxChange struct {
	ID     int64  `json:"id"`
	Status string `json:"status"`
}
