package app

import (
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"path/filepath"
	"time"

	"github.com/tuitbot/tuitbot/internal/actions"
	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/config"
	"github.com/tuitbot/tuitbot/internal/content"
	"github.com/tuitbot/tuitbot/internal/discovery"
	"github.com/tuitbot/tuitbot/internal/gateway"
	"github.com/tuitbot/tuitbot/internal/policy"
	"github.com/tuitbot/tuitbot/internal/safefetch"
	"github.com/tuitbot/tuitbot/internal/scoring"
	"github.com/tuitbot/tuitbot/internal/store/counters"
	"github.com/tuitbot/tuitbot/internal/workflow"
	"github.com/tuitbot/tuitbot/internal/xapi"
	"github.com/tuitbot/tuitbot/internal/xauth"
)

// policyService joins the pure engine with the stored counters.
type policyService struct {
	eng *policy.Engine
	ctr *counters.Store
}

func (p policyService) Reserve(ctx context.Context, tx *sql.Tx, req policy.Request) (policy.Decision, policy.Reservation, error) {
	return p.eng.ReserveTx(ctx, p.ctr.Tx(tx), req)
}

func (p policyService) Release(ctx context.Context, r policy.Reservation) error {
	return p.ctr.Release(ctx, r)
}

// PolicyConfig converts the [mcp_policy] section.
func PolicyConfig(c *config.Config) policy.Config {
	p := c.MCPPolicy
	out := policy.Config{
		EnforceForMutations: p.EnforceForMutations,
		RequireApprovalFor:  p.RequireApprovalFor,
		// A list only counts as the user's when they wrote it.
		RequireApprovalForSet: p.RequireApprovalForSet,
		BlockedTools:          p.BlockedTools,
		DryRunMutations:       p.DryRunMutations,
		MaxMutationsPerHour:   p.MaxMutationsPerHour,
		Template:              p.Template,
		DailyBudgetUSD:        p.DailyBudgetUSD,
		ApprovalUnlessNamed:   actions.ApprovalUnlessNamed(),
	}
	// A copy: the engine must not see later edits of the configuration.
	maxDMs := c.Limits.MaxDMsPerDay
	out.MaxDMsPerDay = &maxDMs
	for _, r := range p.Rules {
		rule := policy.Rule{ID: r.ID, Priority: r.Priority, Label: r.Label, Enabled: r.Enabled == nil || *r.Enabled,
			Action: policy.Action{Type: r.Action.Type, Reason: r.Action.Reason}}
		rule.Conditions.Tools = r.Conditions.Tools
		rule.Conditions.Modes = r.Conditions.Modes
		for _, cat := range r.Conditions.Categories {
			rule.Conditions.Categories = append(rule.Conditions.Categories, policy.Category(cat))
		}
		if w := r.Conditions.ScheduleWindow; w != nil {
			rule.Conditions.Schedule = &policy.Schedule{StartHour: w.StartHour, EndHour: w.EndHour, Timezone: w.Timezone, Days: w.Days}
		}
		out.Rules = append(out.Rules, rule)
	}
	for _, l := range p.RateLimits {
		out.RateLimits = append(out.RateLimits, policy.Limit{Key: l.Key, Dimension: l.Dimension, MatchValue: l.MatchValue,
			Max: l.MaxCount, PeriodSeconds: l.PeriodSeconds})
	}
	return out
}

// MutationTools are the tools the gateway can execute or admit; policy
// names are checked against them. Each mutation's action is registered
// under its name, so the names are read from the table rather than by
// building every action (the gateway builds them once, at registration).
func MutationTools() map[string]bool {
	known := map[string]bool{}
	for _, m := range actions.Mutations() {
		known[m.Name] = true
	}
	for _, w := range actions.Wrappers() {
		known[w.Tool] = true
	}
	return known
}

// NewPolicyEngine validates and compiles the policy.
func NewPolicyEngine(c *config.Config) (*policy.Engine, error) {
	known := MutationTools()
	eng, err := policy.NewEngine(PolicyConfig(c), func(t string) bool { return known[t] })
	if err != nil {
		e := apperr.As(err)
		return nil, &apperr.Error{Code: apperr.ConfigError, Message: "mcp_policy: " + e.Message}
	}
	return eng, nil
}

// startX builds the token manager and the X client. A missing token is not
// fatal: X tools answer x_not_configured with the next step.
func (a *App) startX(ctx context.Context, bases map[string]string, httpClient *http.Client) {
	cfg := a.Cfg
	mgr, err := xauth.NewManager(xauth.Options{
		ClientID: cfg.XAPI.ClientID, ClientSecret: cfg.XAPI.ClientSecret,
		AuthURL: cfg.XAPI.AuthorizeURL, TokenURL: cfg.XAPI.TokenURL,
		TokenPath: cfg.TokenFileFor(a.Account), Now: a.Now, HTTPClient: httpClient,
	})
	if err != nil {
		a.XErr = err
		return
	}
	var usage xapi.UsageRecorder
	var senders xapi.DMSenderRecorder
	var mentions xapi.MentionRecorder
	if a.DB != nil {
		usage = workflow.UsageLedger{DB: a.DB}
		senders, mentions = dmReads{a: a}, dmReads{a: a}
	}
	usage = meteredX{next: usage, m: a.Metrics}
	if bases == nil {
		bases = map[string]string{
			"api.x.com": cfg.XAPI.APIBaseURL, "upload.x.com": cfg.XAPI.UploadBaseURL, "upload.twitter.com": cfg.XAPI.LegacyUploadURL,
		}
	}
	client, err := xapi.New(xapi.Options{
		BaseURLs: bases, Tokens: mgr, Usage: usage, DMSenders: senders, Mentions: mentions, AccountID: a.Account,
		Timeout: time.Duration(cfg.XAPI.TimeoutSeconds) * time.Second, MaxBodyBytes: cfg.XAPI.MaxBodyBytes,
		MaxAttempts: cfg.XAPI.MaxAttempts, MaxRateLimitWait: time.Duration(cfg.XAPI.MaxRateLimitWaitS) * time.Second,
		Now: a.Now, Logger: a.Log, HTTPClient: httpClient, Sleep: a.sleep,
	})
	if err != nil {
		a.XErr = err
		return
	}
	if _, err := mgr.AccessToken(ctx); err != nil {
		// Keep the client: the token may appear later (`tuitbot auth` in
		// another terminal) and the manager re-reads the file.
		a.Log.Info("X not authenticated yet", "reason", err)
	}
	a.xc = client
}

// XClient returns the X client or why there is none.
func (a *App) XClient() (*xapi.Client, error) {
	if a.xc != nil {
		return a.xc, nil
	}
	if a.XErr != nil {
		return nil, apperr.Wrap(apperr.XNotConfigured, a.XErr, "X is not configured").WithHints(apperr.SignIn()...)
	}
	return nil, apperr.New(apperr.XNotConfigured, "X is not configured").WithHints(apperr.SignIn()...)
}

// startGateway builds the policy and the gateway.
func (a *App) startGateway(ctx context.Context) error {
	eng, err := NewPolicyEngine(a.Cfg)
	if err != nil {
		return err
	}
	ctr := counters.New(a.DB.DB, a.Account, a.Now)
	if err := ctr.Sync(ctx, eng.Limits()); err != nil {
		return fmt.Errorf("policy limits: %w", err)
	}
	a.Policy, a.Counters = eng, ctr
	cfg := a.Cfg
	// The actions record what X took in workflow's and discovery's ledgers.
	wf, err := a.Workflow()
	if err != nil {
		return err
	}
	g, err := gateway.New(ctx, gateway.Options{
		DB: a.DB, Policy: policyService{eng, ctr}, AccountID: a.Account, Now: a.Now, Logger: a.Log,
		Mode:                func() (string, bool) { return cfg.Mode, cfg.EffectiveApprovalMode() },
		MemoryWindow:        time.Duration(cfg.Gateway.MemoryWindowSeconds) * time.Second,
		DBWindow:            time.Duration(cfg.Gateway.DBWindowSeconds) * time.Second,
		ApprovalTTL:         time.Duration(cfg.Gateway.ApprovalExpiryHours) * time.Hour,
		MaxPendingApprovals: cfg.MCPPolicy.MaxPendingApprovals,
		AuditRetention:      time.Duration(cfg.Storage.AuditRetentionDays) * 24 * time.Hour,
		LockDir:             filepath.Join(cfg.Home, "locks"),
		OnDecision:          a.Metrics.ObserveDecision,
		Notifier:            a.notifier(),
		Platform:            a.platformRules(wf),
		IntentBase:          a.intentBase,
		HandOffWindow:       time.Duration(cfg.XAPI.HandOffWindowH) * time.Hour,
		HandOffCheckEvery:   time.Duration(cfg.XAPI.HandOffCheckS) * time.Second,
		Username:            a.username(wf),
	})
	if err != nil {
		return err
	}
	actions.Register(g, actions.Deps{X: a.XClient, DB: a.DB, MediaDirs: cfg.MediaDirs(), AccountID: a.Account, Now: a.Now,
		URLFetcher: a.mediaFetcher(cfg), MaxURLBytes: cfg.Media.MaxURLBytes, PostLimit: a.PostLimit(),
		Recorder: postLedger{wf: wf, disc: wf.Discovery}})
	a.Gateway = g
	a.OnClose(g.Close)
	return nil
}

// mediaFetcher downloads media from URLs under the media.url_* keys.
func (a *App) mediaFetcher(cfg *config.Config) *safefetch.Fetcher {
	o := safefetch.Options{Policy: safefetch.Policy{AllowHTTP: cfg.Media.URLAllowHTTP, AllowHosts: cfg.Media.URLAllowHosts,
		AllowPrivate: cfg.MediaURLPrivate()}}
	if a.mediaFetch != nil {
		a.mediaFetch(&o)
	}
	return safefetch.New(o)
}

// RequireGateway returns the gateway or why it is unavailable.
func (a *App) RequireGateway() (*gateway.Gateway, error) {
	if a.Gateway != nil {
		return a.Gateway, nil
	}
	if a.GatewayErr != nil {
		return nil, apperr.Wrap(apperr.DBError, a.GatewayErr, "the mutation gateway is unavailable: %v", a.GatewayErr)
	}
	return nil, apperr.New(apperr.DBError, "the mutation gateway is unavailable: no database")
}

// Workflow returns the workflow operations service.
func (a *App) Workflow() (*workflow.Service, error) {
	db, err := a.RequireDB()
	if err != nil {
		return nil, apperr.Wrap(apperr.DBError, err, "database unavailable: %v", err)
	}
	d, err := a.Discovery()
	if err != nil {
		return nil, err
	}
	s := &workflow.Service{DB: db, X: a.XClient, AccountID: a.Account, Now: a.Now, Discovery: d, PostLimit: a.PostLimit()}
	if out := a.top().outbox; out != nil {
		s.Moves = moveNotices{out}
	}
	return s, nil
}

// ScoringWeights converts the [scoring] section.
func (a *App) ScoringWeights() scoring.Weights {
	s := a.Cfg.Scoring
	return scoring.Weights{Keyword: s.Keyword, Follower: s.Follower, Recency: s.Recency, Engagement: s.Engagement,
		ReplyCount: s.ReplyCount, ContentType: s.ContentType}
}

// Keywords are what discovery and scoring look for.
func (a *App) Keywords() []string {
	b := a.Cfg.Business
	out := append([]string{}, b.ProductKeywords...)
	out = append(out, b.CompetitorKeywords...)
	return append(out, b.IndustryTopics...)
}

// Discovery returns the discovery service.
func (a *App) Discovery() (*discovery.Service, error) {
	db, err := a.RequireDB()
	if err != nil {
		return nil, apperr.Wrap(apperr.DBError, err, "database unavailable: %v", err)
	}
	return &discovery.Service{DB: db, X: a.XClient, Keywords: a.Keywords(), Weights: a.ScoringWeights(),
		Threshold: a.Cfg.Scoring.Threshold, AccountID: a.Account, Now: a.Now}, nil
}

// Profile converts the [business] section for content generation.
func (a *App) Profile() content.Profile {
	b := a.Cfg.Business
	return content.Profile{ProductName: b.ProductName, ProductDescription: b.ProductDescription, ProductURL: b.ProductURL,
		TargetAudience: b.TargetAudience, BrandVoice: b.BrandVoice, ReplyStyle: b.ReplyStyle, ContentStyle: b.ContentStyle,
		PersonaOpinions: b.PersonaOpinions, PersonaExperiences: b.PersonaExperiences, ContentPillars: b.ContentPillars,
		ProductKeywords: b.ProductKeywords, CompetitorKeywords: b.CompetitorKeywords, IndustryTopics: b.IndustryTopics,
		BannedPhrases: a.Cfg.Limits.BannedPhrases}
}

// Generator returns the content generator or why there is none.
func (a *App) Generator() (*content.Generator, error) {
	p, err := a.LLM()
	if err != nil {
		return nil, err
	}
	return content.NewGenerator(p, a.Profile()), nil
}

// Composer returns the draft and compose service.
func (a *App) Composer() (*workflow.Composer, error) {
	s, err := a.Workflow()
	if err != nil {
		return nil, err
	}
	g, err := a.RequireGateway()
	if err != nil {
		return nil, err
	}
	return &workflow.Composer{Service: s, Gateway: g, Generator: a.Generator,
		ComposerMode: func() bool { return a.Cfg.Mode == "composer" }}, nil
}

// Replier returns the reply pipeline for caller (mcp, or autopilot with a
// loop name).
func (a *App) Replier(caller, loop string) (*workflow.Replier, error) {
	s, err := a.Workflow()
	if err != nil {
		return nil, err
	}
	g, err := a.RequireGateway()
	if err != nil {
		return nil, err
	}
	return &workflow.Replier{Service: s, Gateway: g, Generator: a.Generator,
		BannedPhrases: a.Cfg.Limits.BannedPhrases, Caller: caller, Loop: loop, OptedOut: a.optedOut}, nil
}
