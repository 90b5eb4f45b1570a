package app

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/approvallink"
	"github.com/tuitbot/tuitbot/internal/describe"
	"github.com/tuitbot/tuitbot/internal/flock"
	"github.com/tuitbot/tuitbot/internal/gateway"
	"github.com/tuitbot/tuitbot/internal/metrics"
	"github.com/tuitbot/tuitbot/internal/notify"
	"github.com/tuitbot/tuitbot/internal/store"
	"github.com/tuitbot/tuitbot/internal/workflow"
)

// startOutbox makes the notification outbox every account's gateway
// writes into, when any channel is configured, and the approval links
// service when links are enabled.
func (a *App) startOutbox() error {
	if a.DB == nil {
		return nil
	}
	if len(a.Cfg.Notify.Channels) > 0 {
		a.outbox = notify.NewOutbox(a.DB, notify.Routes(a.Cfg.Notify), a.Now)
	}
	if !a.Cfg.ApprovalLinks.Enabled {
		return nil
	}
	links, err := approvallink.New(approvallink.Options{DB: a.DB, KeyPath: filepath.Join(a.Cfg.Home, approvallink.KeyFile),
		BaseURL: a.Cfg.Notify.PublicBaseURL, TTL: time.Duration(a.Cfg.ApprovalLinks.TTLMinutes) * time.Minute,
		Queue: appQueue{a}, HandOffs: appHandOffs{a}, Now: a.Now})
	if err != nil {
		return err
	}
	a.links = links
	return nil
}

// Links returns the approval links service, or nil when links are off.
// Only the human's surfaces (the web pages, the CLI) use it: no tool does.
func (a *App) Links() *approvallink.Service { return a.top().links }

// Outbox returns the notification outbox, or nil when no channel is
// configured (or there is no database).
func (a *App) Outbox() *notify.Outbox { return a.top().outbox }

// notifier is what the gateways record notices through: the outbox (when
// channels are configured) and the approval latency histogram.
func (a *App) notifier() gateway.Notifier {
	r := a.top()
	return appNotifier{out: r.outbox, m: r.Metrics}
}

// appNotifier records each decision's wait in the metrics and hands every
// notice to the outbox.
type appNotifier struct {
	out *notify.Outbox
	m   *metrics.Metrics
}

func (n appNotifier) Notice(ctx context.Context, tx gateway.TxExec, nt gateway.Notice) error {
	if nt.Kind == gateway.NoticeDecided && n.m != nil {
		c, err1 := store.ParseTime(nt.Item.CreatedAt)
		r, err2 := store.ParseTime(nt.Item.ReviewedAt)
		if err1 == nil && err2 == nil && !r.Before(c) {
			n.m.ObserveApproval(gateway.ReviewChannel(nt.Item.ReviewedBy), nt.Account, r.Sub(c))
		}
	}
	if n.out == nil {
		return nil
	}
	return n.out.Notice(ctx, tx, nt)
}

// NotifyChannels builds the configured channels with their secrets from
// the environment.
func (a *App) NotifyChannels() ([]notify.Channel, error) {
	r := a.top()
	getenv := r.getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	chans, err := notify.Build(r.Cfg.Notify, getenv, nil, r.Now)
	if err != nil {
		return nil, apperr.New(apperr.ConfigError, "%v", err)
	}
	return chans, nil
}

// StartNotifications runs the dispatcher (and the Telegram pollers) of a
// long-lived process until ctx ends or the app closes, and the periodic
// check of hand-offs, which runs with or without channels (see
// startHandOffChecks). Without channels it sends nothing.
func (a *App) StartNotifications(ctx context.Context) error {
	r := a.top()
	r.startHandOffChecks(ctx)
	if r.outbox == nil {
		return nil
	}
	chans, err := r.NotifyChannels()
	if err != nil {
		return err
	}
	d := notify.NewDispatcher(r.dispatcherOptions(chans))
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		d.Run(ctx)
	}()
	// Telegram buttons act only with one-tap links; their presses arrive
	// by long polling, one poller per channel across processes.
	if r.links != nil && r.Cfg.ApprovalLinks.OneTap {
		for _, c := range chans {
			tg, ok := c.(*notify.Telegram)
			if !ok {
				continue
			}
			p := &notify.TelegramPoller{T: tg, Outbox: r.outbox, Items: appItems{r}, Links: r.links, Decide: appQueue{r},
				Acquire: r.pollLock(tg.Name()), Log: r.Log}
			wg.Add(1)
			go func() {
				defer wg.Done()
				p.Run(ctx)
			}()
		}
	}
	r.OnClose(func() error {
		cancel()
		wg.Wait()
		return nil
	})
	r.Log.Info("notifications: dispatcher running", "channels", len(chans), "links", r.links != nil)
	return nil
}

// pollLock makes this process the only Telegram poller of channel.
func (a *App) pollLock(channel string) notify.Acquire {
	return a.homeLock("notify:telegram:"+channel, "telegram-"+channel+".lock")
}

// homeLock is a lock one process of the home (of the database) holds at a
// time: a session lock named key on PostgreSQL (across hosts), the lock
// file name in the home's locks directory on SQLite.
func (a *App) homeLock(key, name string) notify.Acquire {
	if a.DB.Dialect == store.Postgres {
		return func(ctx context.Context) (notify.Lease, error) {
			return a.DB.TrySessionLease(ctx, key)
		}
	}
	path := filepath.Join(a.Cfg.Home, "locks", name)
	return func(context.Context) (notify.Lease, error) {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return nil, err
		}
		f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
		if err != nil {
			return nil, err
		}
		if err := flock.TryLock(f); err != nil {
			f.Close()
			return nil, err
		}
		return fileLease{f}, nil
	}
}

// fileLease is a held lock file; the kernel drops it if the process dies.
type fileLease struct{ f *os.File }

func (fileLease) Held(context.Context) error { return nil }
func (l fileLease) Release() {
	_ = flock.Unlock(l.f)
	_ = l.f.Close()
}

// appQueue decides approval items through each account's gateway, for
// links and Telegram buttons.
type appQueue struct{ a *App }

func (q appQueue) Item(ctx context.Context, account string, id int64) (*gateway.ApprovalItem, error) {
	return appItems(q).Item(ctx, account, id)
}

func (q appQueue) gateway(account string) (*gateway.Gateway, error) {
	acc, err := q.a.ForAccount(account)
	if err != nil {
		return nil, err
	}
	return acc.RequireGateway()
}

// Decide approves or rejects as d says (approvallink.Queue and
// notify.Decider: links and Telegram buttons).
func (q appQueue) Decide(ctx context.Context, account string, id int64, approve bool, d gateway.Decision) (*gateway.ApprovalItem, error) {
	g, err := q.gateway(account)
	if err != nil {
		return nil, err
	}
	if approve {
		it, _, err := g.ApproveWith(ctx, id, d)
		return it, err
	}
	return g.RejectWith(ctx, id, d)
}

// appHandOffs reads hand-offs and looks on X for them through each
// account's gateway, for hand-off links.
type appHandOffs struct{ a *App }

func (h appHandOffs) HandOff(ctx context.Context, account string, id int64) (*gateway.HandOff, error) {
	g, err := appQueue(h).gateway(account)
	if err != nil {
		return nil, err
	}
	return g.GetHandOff(ctx, id)
}

func (h appHandOffs) Check(ctx context.Context, account string) ([]gateway.HandOff, error) {
	acc, err := h.a.ForAccount(account)
	if err != nil {
		return nil, err
	}
	return acc.CheckHandOffs(ctx, true)
}

// dispatcherOptions are the dispatcher's settings over this home.
func (a *App) dispatcherOptions(chans []notify.Channel) notify.DispatcherOptions {
	n := a.Cfg.Notify
	o := notify.DispatcherOptions{
		Outbox: a.outbox, Channels: chans, Items: appItems{a},
		Sweeps:      notify.Sweeps(a.outbox, appSource{a}, time.Duration(n.ExpiringMinutes)*time.Minute),
		BatchWindow: time.Duration(n.BatchWindowSeconds) * time.Second, MaxPerHour: n.MaxPerHour,
		Now: a.Now, Log: a.Log, OneTap: a.Cfg.ApprovalLinks.OneTap,
		OnDelivered: a.Metrics.ObserveNotification,
	}
	if a.links != nil {
		o.Links = a.links
	}
	o.Targets = appTargets{a}
	return o
}

// appTargets reads an item's target from X through its account's client,
// for the notice to show what a like, delete or follow touches.
type appTargets struct{ a *App }

func (t appTargets) TargetLine(ctx context.Context, account string, target describe.Target) string {
	acc, err := t.a.ForAccount(account)
	if err != nil {
		return describe.CannotRead(target, err)
	}
	x, err := acc.XClient()
	if err != nil {
		return describe.CannotRead(target, err)
	}
	return describe.TargetLine(ctx, x, target, t.a.Now())
}

// appItems reads approval items through each account's gateway.
type appItems struct{ a *App }

func (i appItems) Item(ctx context.Context, account string, id int64) (*gateway.ApprovalItem, error) {
	acc, err := i.a.ForAccount(account)
	if err != nil {
		return nil, err
	}
	g, err := acc.RequireGateway()
	if err != nil {
		return nil, err
	}
	return g.Item(ctx, id)
}

// TestNotice is the item of the test message `notify test` sends.
func TestNotice(account string) notify.Item {
	return notify.Item{Account: account, Tool: "notify_test", Text: "This is a test notification from tuitbot. If you can read it, the channel works."}
}

// SendTestNotification queues a test message for channel and delivers it
// with one dispatcher pass; it returns the outbox row as it ended.
func (a *App) SendTestNotification(ctx context.Context, channel string) (notify.Row, error) {
	r := a.top()
	if r.outbox == nil {
		return notify.Row{}, apperr.New(apperr.ConfigError, "no notification channel is configured; add a [[notify.channels]] entry (see `tuitbot config init`)")
	}
	if _, ok := r.Cfg.Notify.Channel(channel); !ok {
		return notify.Row{}, apperr.New(apperr.InvalidInput, "--channel: no channel named %q; configured: %v", channel, r.channelNames())
	}
	chans, err := r.NotifyChannels()
	if err != nil {
		return notify.Row{}, err
	}
	var only []notify.Channel
	for _, c := range chans {
		if c.Name() == channel {
			only = append(only, c)
		}
	}
	it := TestNotice(a.Account)
	id, err := r.outbox.AddTo(ctx, channel, notify.EventTest, fmt.Sprintf("%d", r.Now().UnixNano()), it)
	if err != nil {
		return notify.Row{}, err
	}
	o := r.dispatcherOptions(only)
	o.MaxAttempts = 1
	o.MaxPerHour = 0
	if err := notify.NewDispatcher(o).Deliver(ctx, id); err != nil {
		return notify.Row{}, err
	}
	return r.outbox.Get(ctx, id)
}

func (a *App) channelNames() []string {
	var out []string
	for _, ch := range a.Cfg.Notify.Channels {
		out = append(out, ch.Name)
	}
	return out
}

// NotificationStatus reports every channel (without secrets) and how its
// deliveries go.
func (a *App) NotificationStatus(ctx context.Context) (notify.Report, error) {
	r := a.top()
	if r.outbox == nil {
		return notify.Report{Channels: []notify.ChannelReport{}, LinksEnabled: r.Cfg.ApprovalLinks.Enabled}, nil
	}
	return r.outbox.Report(ctx, r.Cfg.Notify, r.Cfg.ApprovalLinks.Enabled)
}

// appSource is what the notification sweeps read, through each account's
// gateway and workflow.
type appSource struct{ a *App }

func (s appSource) Accounts() []string { return s.a.Accounts() }

func (s appSource) gateway(account string) (*gateway.Gateway, error) {
	return appQueue(s).gateway(account)
}

func (s appSource) Pending(ctx context.Context, account string) ([]gateway.ApprovalItem, error) {
	g, err := s.gateway(account)
	if err != nil {
		return nil, err
	}
	return g.Pending(ctx, 500)
}

func (s appSource) Mutations(ctx context.Context, account, status string, since time.Time) ([]gateway.AuditEntry, error) {
	g, err := s.gateway(account)
	if err != nil {
		return nil, err
	}
	return g.Recent(ctx, gateway.AuditFilter{Status: status, Since: since, Limit: 100})
}

func (s appSource) HandOffs(ctx context.Context, account string) ([]gateway.HandOff, error) {
	g, err := s.gateway(account)
	if err != nil {
		return nil, err
	}
	return g.HandOffs(ctx, gateway.HandOffOpen, 100)
}

func (s appSource) PublishFailures(ctx context.Context, account string, since time.Time) ([]notify.Item, error) {
	acc, err := s.a.ForAccount(account)
	if err != nil {
		return nil, err
	}
	wf, err := acc.Workflow()
	if err != nil {
		return nil, err
	}
	drafts, err := wf.Drafts(ctx, workflow.DraftFailed)
	if err != nil {
		return nil, err
	}
	var out []notify.Item
	for _, d := range drafts {
		t, err := store.ParseTime(d.UpdatedAt)
		if err != nil || t.Before(since) {
			continue
		}
		text := d.Text
		if text == "" {
			text = strings.Join(d.Tweets, "\n\n")
		}
		out = append(out, notify.Item{Tool: "scheduled_" + d.ContentType, Text: text, DraftID: d.ID, CreatedAt: d.UpdatedAt,
			Error: "publishing the scheduled draft failed; see `tuitbot audit recent`"})
	}
	return out, nil
}

// moveNotices records publish.rescheduled in the transaction that moves a
// queued item or a recurring post's occurrence off its missed time.
type moveNotices struct{ out *notify.Outbox }

func (m moveNotices) Rescheduled(ctx context.Context, tx *sql.Tx, account string, mv workflow.Moved) error {
	it := notify.Item{Account: account, Tool: "scheduled_" + mv.ContentType, Text: mv.Text, DraftID: mv.DraftID,
		MissedSlot: mv.From, ScheduledFor: mv.To}
	return m.out.Record(ctx, tx, notify.EventRescheduled, fmt.Sprintf("%d:%s", mv.DraftID, mv.From), it)
}
