package mcpserver

import (
	"context"
	"log/slog"
	"time"

	"github.com/tuitbot/tuitbot/internal/actions"
	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/config"
	"github.com/tuitbot/tuitbot/internal/content"
	"github.com/tuitbot/tuitbot/internal/discovery"
	"github.com/tuitbot/tuitbot/internal/export"
	"github.com/tuitbot/tuitbot/internal/gateway"
	"github.com/tuitbot/tuitbot/internal/llm"
	"github.com/tuitbot/tuitbot/internal/notify"
	"github.com/tuitbot/tuitbot/internal/optouts"
	"github.com/tuitbot/tuitbot/internal/policy"
	"github.com/tuitbot/tuitbot/internal/scoring"
	"github.com/tuitbot/tuitbot/internal/workflow"
	"github.com/tuitbot/tuitbot/internal/xapi"
)

// Deps are the services the tools use. The composition root (internal/app)
// fills them, so this package depends on what the tools need and not on
// how the process was put together (a real X, the sandbox emulator, no
// database). A service that failed to start answers with the reason, so
// tools degrade honestly.
type Deps struct {
	Cfg *config.Config
	Log *slog.Logger
	Now func() time.Time

	// Gateway returns the mutation gateway or why it is unavailable.
	Gateway func() (*gateway.Gateway, error)
	// CheckHandOffs looks on X (owned reads) whether a person did the
	// account's open hand-offs now, and records what it finds.
	CheckHandOffs func(ctx context.Context) ([]gateway.HandOff, error)
	// X returns the X client or why there is none.
	X func() (*xapi.Client, error)
	// RecordOptOut puts the author of a message to the account that says
	// an opt-out phrase on its suppression list; nil records nothing.
	RecordOptOut func(ctx context.Context, m optouts.Message) (bool, error)
	// Workflow returns the workflow operations service.
	Workflow func() (*workflow.Service, error)
	// Discovery returns the discovery service.
	Discovery func() (*discovery.Service, error)
	// Composer returns the draft and compose service.
	Composer func() (*workflow.Composer, error)
	// Replier returns the reply pipeline for a caller and loop.
	Replier func(caller, loop string) (*workflow.Replier, error)
	// Generator returns the content generator or why there is none.
	Generator func() (*content.Generator, error)
	// LLM returns the provider or why there is none.
	LLM func() (llm.Provider, error)
	// Profile is the [business] section as content generation reads it.
	Profile func() content.Profile
	// Keywords and ScoringWeights are what scoring looks for and how it
	// weighs it.
	Keywords       func() []string
	ScoringWeights func() scoring.Weights

	// Health checks every service, one line each.
	Health func(ctx context.Context) []Check
	// Policy is the running policy with its live counters; nil when there
	// is none (no database).
	Policy Policy
	// ApprovalOverrides names the rules that decide calls before approval
	// mode can route them; empty when approval mode is off.
	ApprovalOverrides func() []string
	// ValidateConfig validates a configuration including the parts other
	// packages own (policy rules, templates, limits).
	ValidateConfig func(*config.Config) error
	// PolicyWarnings lists policy configuration that can never take effect.
	PolicyWarnings func(*config.Config) []string

	// AccountName is the X account these services act for: the one a
	// call that names no account uses.
	AccountName string
	// Accounts lists every account of the home; nil means this one only.
	Accounts func() []string
	// Account returns the services of another account of the home, for a
	// call that names it; nil means there is no other.
	Account func(name string) (*Deps, error)
	// XHealth checks X for this account (token and reachability); nil
	// means get_capabilities reads X's line of Health.
	XHealth func(ctx context.Context) Check
	// XSubscription is the X subscription of the account's user (Basic,
	// Premium, PremiumPlus or None, as /2/users/me says); empty when X
	// cannot be asked. Nil means unknown.
	XSubscription func(ctx context.Context) string
	// PostLimit tells how long the account's posts may be; nil allows
	// ordinary posts only.
	PostLimit actions.PostLimiter
	// ObserveTool, when set, is told every tool call's outcome: the error
	// code of a failed call (empty on success) and how long it took.
	ObserveTool func(tool, code string, elapsed time.Duration)
	// NotificationStatus reports the notification channels (no secrets,
	// no links) and their deliveries; nil means none are configured.
	NotificationStatus func(ctx context.Context) (notify.Report, error)
	// ExportData writes one export of this account to a new file in the
	// home and returns its path and row count.
	ExportData func(ctx context.Context, r export.Request) (path string, rows int64, err error)
}

// forAccount returns the services of account name ("" or this account: d).
func (d *Deps) forAccount(name string) (*Deps, error) {
	if name == "" || name == d.AccountName {
		return d, nil
	}
	if d.Account == nil {
		return nil, apperr.New(apperr.InvalidInput, "account: unknown account %q; this server has one account (%s)", name, d.accountName())
	}
	ad, err := d.Account(name)
	if err != nil {
		return nil, err
	}
	// The account's services answer like this server's.
	if ad.Now == nil {
		ad.Now = d.Now
	}
	if ad.Log == nil {
		ad.Log = d.Log
	}
	return ad, nil
}

func (d *Deps) accountName() string {
	if d.AccountName == "" {
		return "default"
	}
	return d.AccountName
}

// Policy is the running policy engine joined with its live counters: what
// the tools report about the policy and how they ask it about a call
// without reserving anything.
type Policy interface {
	// Check decides req against the live counters without reserving.
	Check(ctx context.Context, req policy.Request) (policy.Decision, error)
	// Snapshot reads the live counters.
	Snapshot(ctx context.Context) (map[string]policy.Usage, error)
	ApprovalOverrides(mode string) []string
	Warnings() []string
	Rules() []policy.Rule
	Limits() []policy.Limit
}

// Check is one line of a health report.
type Check struct {
	Name    string `json:"name"`
	Status  string `json:"status"` // ok, degraded, not_configured, error
	Message string `json:"message,omitempty"`
}
