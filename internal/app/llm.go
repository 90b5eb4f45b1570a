package app

import (
	"context"
	"sync"
	"time"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/llm"
	"github.com/tuitbot/tuitbot/internal/workflow"
)

// LLMConfig converts the [llm] section.
func (a *App) LLMConfig() llm.Config {
	c := a.Cfg.LLM
	return llm.Config{Provider: c.Provider, Model: c.Model, BaseURL: c.BaseURL, APIKey: c.APIKey, APIKeyEnv: c.APIKeyEnv,
		Timeout: time.Duration(c.TimeoutSeconds) * time.Second, MaxTokens: c.MaxTokens, Temperature: c.Temperature}
}

func (a *App) startLLM() {
	if a.Cfg.LLM.Provider == "" {
		if a.Sim != nil && a.Cfg.Sandbox.LLMStandIn {
			// The sandbox shows what the content tools and drafting loops
			// would do; the stand-in labels every text, calls nothing and
			// records no usage, so the spend ledger and budgets stay real.
			a.llm = llm.NewStandIn()
			a.Log.Debug("no LLM configured: drafting with the sandbox stand-in", "label", llm.StandInLabel)
			return
		}
		a.LLMErr = apperr.New(apperr.LLMNotConfigured, "no LLM configured; set llm.provider and llm.model (and llm.api_key_env)")
		return
	}
	var rec llm.UsageRecorder
	if a.DB != nil {
		rec = workflow.UsageLedger{DB: a.DB, AccountID: a.Account}
	}
	rec = meteredLLM{next: rec, m: a.Metrics}
	p, err := llm.New(a.LLMConfig(), rec, a.Now, llm.WithLogger(a.Log))
	if err != nil {
		a.LLMErr = err
		return
	}
	a.llm = p
}

// StandInMessage is the llm check's message while the sandbox stand-in
// drafts: it says that no model is called and how to change that.
const StandInMessage = "sandbox stand-in: deterministic local drafts labelled " + llm.StandInLabel +
	", no model called and no spend; set llm.provider for a real LLM, or sandbox.llm_stand_in = false to turn it off"

// UsingStandIn reports whether drafts come from the sandbox stand-in.
func (a *App) UsingStandIn() bool { return a.llm != nil && llm.IsStandIn(a.llm) }

// LLM returns the provider or why there is none.
func (a *App) LLM() (llm.Provider, error) {
	if a.llm != nil {
		return a.llm, nil
	}
	if a.LLMErr != nil {
		return nil, a.LLMErr
	}
	return nil, apperr.New(apperr.LLMNotConfigured, "no LLM configured; set llm.provider and llm.model")
}

// probeCache caches a reachability probe (LLM or X): the LLM probe costs a
// few tokens, the X probe a rate-limited call, and agents may call
// health_check often.
type probeCache struct {
	mu    sync.Mutex
	at    time.Time
	check Check
	// subscription is what the X probe learnt of the account's X
	// subscription; empty when X did not answer.
	subscription string
	// bio is the account's bio as the X probe read it.
	bio string
}

const probeCacheTTL = 5 * time.Minute

func (a *App) llmCheck(ctx context.Context) Check {
	p, err := a.LLM()
	if err != nil {
		status := "error"
		if apperr.CodeOf(err) == apperr.LLMNotConfigured {
			status = "not_configured"
		}
		return Check{Name: "llm", Status: status, Message: apperr.As(err).Message}
	}
	if llm.IsStandIn(p) {
		return Check{Name: "llm", Status: "ok", Message: StandInMessage}
	}
	a.probe.mu.Lock()
	defer a.probe.mu.Unlock()
	if !a.probe.at.IsZero() && a.Now().Sub(a.probe.at) < probeCacheTTL {
		return a.probe.check
	}
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	_, err = p.Complete(ctx, llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "Reply with OK."}}, MaxTokens: 5, Operation: "health_check"})
	chk := Check{Name: "llm", Status: "ok", Message: p.Name() + " " + a.Cfg.LLM.Model + " answered"}
	if err != nil {
		chk = Check{Name: "llm", Status: "error", Message: apperr.As(err).Message}
	}
	a.probe.at, a.probe.check = a.Now(), chk
	return chk
}
