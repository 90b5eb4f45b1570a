package app

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/gateway"
	"github.com/tuitbot/tuitbot/internal/notify"
)

// startOutbox makes the notification outbox every account's gateway
// writes into, when any channel is configured.
func (a *App) startOutbox() {
	if a.DB == nil || len(a.Cfg.Notify.Channels) == 0 {
		return
	}
	a.outbox = notify.NewOutbox(a.DB, notify.Routes(a.Cfg.Notify), a.Now)
}

// Outbox returns the notification outbox, or nil when no channel is
// configured (or there is no database).
func (a *App) Outbox() *notify.Outbox { return a.top().outbox }

// notifier is what the gateways record notices through; nil (no
// interface value at all) when there is no outbox.
func (a *App) notifier() gateway.Notifier {
	if o := a.top().outbox; o != nil {
		return o
	}
	return nil
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
// long-lived process until ctx ends or the app closes. Without channels it
// does nothing.
func (a *App) StartNotifications(ctx context.Context) error {
	r := a.top()
	if r.outbox == nil {
		return nil
	}
	chans, err := r.NotifyChannels()
	if err != nil {
		return err
	}
	d := notify.NewDispatcher(r.dispatcherOptions(chans))
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		d.Run(ctx)
	}()
	r.OnClose(func() error {
		cancel()
		<-done
		return nil
	})
	r.Log.Info("notifications: dispatcher running", "channels", len(chans))
	return nil
}

// dispatcherOptions are the dispatcher's settings over this home.
func (a *App) dispatcherOptions(chans []notify.Channel) notify.DispatcherOptions {
	n := a.Cfg.Notify
	return notify.DispatcherOptions{
		Outbox: a.outbox, Channels: chans, Items: appItems{a},
		BatchWindow: time.Duration(n.BatchWindowSeconds) * time.Second, MaxPerHour: n.MaxPerHour,
		Now: a.Now, Log: a.Log,
	}
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
	it := notify.Item{Account: a.Account, Tool: "notify_test", Text: "This is a test notification from tuitbot. If you can read it, the channel works."}
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
