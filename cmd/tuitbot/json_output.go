package main

import (
	"time"

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
