package app

import (
	"context"
	"github.com/tuitbot/tuitbot/internal/xapi"
	"time"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/config"
	"github.com/tuitbot/tuitbot/internal/dmsenders"
	"github.com/tuitbot/tuitbot/internal/optouts"
	"github.com/tuitbot/tuitbot/internal/workflow"
	"github.com/tuitbot/tuitbot/internal/xrules"
	"github.com/tuitbot/tuitbot/internal/xsim"
)

// platformRules are X's rules for the account's API access level, as the
// gateway asks them for every call (x_api.access, x_api.own_replies_summon).
func (a *App) platformRules(wf *workflow.Service) xrules.Checker {
	cfg := a.Cfg
	return xrules.Checker{
		Access:           func() xrules.Access { return xrules.Access(cfg.XAPI.Access) },
		OwnRepliesSummon: cfg.XAPI.OwnRepliesSummon,
		Know:             knowledge{a: a, wf: wf},
		IntentBase:       a.intentBase(),
		Automation: xrules.Automation{
			AIRepliesApproved:  func() bool { return cfg.XAPI.AIRepliesApproved },
			OptedOut:           a.optedOut,
			DMedFirst:          a.dmedFirst,
			CrossAccountWindow: func() time.Duration { return time.Duration(cfg.XAPI.CrossAccountDupH) * time.Hour },
			PostedElsewhere:    a.postedElsewhere,
		},
	}
}

// dmSenders is the account's record of the users who sent it a DM.
func (a *App) dmSenders() dmsenders.Store {
	return dmsenders.Store{DB: a.DB, AccountID: a.Account, Now: a.Now}
}

// dmReads is what the X client tells of every read of the account's DM
// events, typed or universal, and of its mentions read by x_get: who
// wrote first, and who said stop. Both are kept in the database, so every
// process of the home knows them.
type dmReads struct{ a *App }

// Stops are recorded first: a sender whose stop could not be kept is not
// recorded as having written either, so a DM to them goes to a person.
func (d dmReads) RecordDMSenders(ctx context.Context, senders []xapi.DMSender) error {
	for _, s := range senders {
		if _, err := d.a.recordOptOut(ctx, optouts.Message{ID: s.EventID, AuthorID: s.UserID, Text: s.Text}); err != nil {
			return err
		}
	}
	return d.a.dmSenders().RecordDMSenders(ctx, senders)
}

// RecordMentions puts the author of a mention saying stop on the
// suppression list.
func (d dmReads) RecordMentions(ctx context.Context, ms []xapi.Mention) error {
	for _, m := range ms {
		if _, err := d.a.recordOptOut(ctx, optouts.Message{ID: m.ID, AuthorID: m.AuthorID, Text: m.Text}); err != nil {
			return err
		}
	}
	return nil
}

// dmedFirst reports whether user sent the account a DM, from the DM
// events any process of the home read (the X client records their
// senders): nothing is read from X to find out, so a DM to anyone else
// goes to a person at no cost.
func (a *App) dmedFirst(ctx context.Context, user string) (bool, error) {
	if _, err := a.RequireDB(); err != nil {
		return false, err
	}
	return a.dmSenders().Wrote(ctx, user)
}

// postedElsewhere lists what the home's other accounts posted within
// window, from the audit every account's gateway writes to the one
// database.
func (a *App) postedElsewhere(ctx context.Context, window time.Duration) ([]xrules.Posted, error) {
	g, err := a.RequireGateway()
	if err != nil {
		return nil, err
	}
	return g.PostedElsewhere(ctx, a.Now().Add(-window))
}

// OptOuts is the account's suppression list: the users who told it to
// stop (x_api.opt_out_phrases).
func (a *App) OptOuts() (optouts.Store, error) {
	db, err := a.RequireDB()
	if err != nil {
		return optouts.Store{}, apperr.Wrap(apperr.DBError, err, "the suppression list needs the database: %v", err)
	}
	return optouts.Store{DB: db, AccountID: a.Account, Now: a.Now, Phrases: a.Cfg.XAPI.OptOutPhrases}, nil
}

// OptOutList is the account's suppression list, oldest first.
func (a *App) OptOutList(ctx context.Context) ([]optouts.OptOut, error) {
	s, err := a.OptOuts()
	if err != nil {
		return nil, err
	}
	return s.List(ctx)
}

// optedOut reports whether user is on the account's suppression list.
func (a *App) optedOut(ctx context.Context, user string) (bool, error) {
	s, err := a.OptOuts()
	if err != nil {
		return false, err
	}
	return s.OptedOut(ctx, user)
}

// recordOptOut records m's author when m says an opt-out phrase.
func (a *App) recordOptOut(ctx context.Context, m optouts.Message) (bool, error) {
	s, err := a.OptOuts()
	if err != nil {
		return false, err
	}
	return s.Record(ctx, m)
}

// knowledge answers a summons check from what tuitbot knows (the
// account's own posts) and otherwise from X, with the cheapest read.
type knowledge struct {
	a  *App
	wf *workflow.Service
}

func (k knowledge) Account(ctx context.Context) (xrules.Account, error) {
	x, err := k.a.XClient()
	if err != nil {
		return xrules.Account{}, err
	}
	id, username, err := x.MyAccount(ctx)
	return xrules.Account{ID: id, Username: username}, err
}

func (k knowledge) Post(ctx context.Context, id string) (xrules.Post, error) {
	if own, err := k.wf.RecordedPosts(ctx, []string{id}); err == nil && own[id] {
		me, err := k.Account(ctx)
		if err != nil {
			return xrules.Post{}, err
		}
		return xrules.Post{ID: id, AuthorID: me.ID}, nil
	}
	x, err := k.a.XClient()
	if err != nil {
		return xrules.Post{}, err
	}
	// A post this process read already (a mention, a search result, a
	// timeline) is known; only an unknown one costs a read.
	f, ok := x.KnownPost(id)
	if !ok {
		if _, _, err := x.SummonState(ctx, id); err != nil {
			return xrules.Post{}, err
		}
		if f, ok = x.KnownPost(id); !ok {
			return xrules.Post{}, apperr.New(apperr.XAPIError, "in_reply_to_id: X returned post %s without its author", id)
		}
	}
	return xrules.Post{ID: id, AuthorID: f.AuthorID, InReplyToUserID: f.InReplyToUserID, Mentions: f.Mentions, Quotes: f.Quotes}, nil
}

// XAccess describes the API access level of every account of the home,
// default first: what it allows and the prices in force.
func (a *App) XAccess() []xrules.Level {
	r := a.top()
	var out []xrules.Level
	for _, name := range r.Cfg.AccountNames() {
		acc, err := r.Cfg.ForAccount(name)
		if err != nil {
			continue // Validate has refused such a home already
		}
		l := xrules.Describe(xrules.Access(acc.XAPI.Access))
		l.Account = name
		out = append(out, l)
	}
	return out
}

// XAccessLevel describes this account's API access level.
func (a *App) XAccessLevel() xrules.Level {
	l := xrules.Describe(xrules.Access(a.Cfg.XAPI.Access))
	l.Account = a.Account
	return l
}

// ConfiguredAccess is the sandbox access of each account as the
// configuration sets it (x_api.access), so the emulator a sandbox command
// starts models the X each account's app meets; an account the
// configuration does not name keeps the world's level.
func ConfiguredAccess(cfg *config.Config) SandboxAccess {
	return func(account string) xsim.Access {
		acc, err := cfg.ForAccount(account)
		if err != nil {
			return ""
		}
		return xsim.Access(acc.XAPI.Access)
	}
}
