package app

import (
	"context"
	"path/filepath"

	"github.com/tuitbot/tuitbot/internal/actions"
	"github.com/tuitbot/tuitbot/internal/postlimit"
)

// newPostLimit gives the account its post limit under
// x_api.max_post_length; with auto, what X says of the account's
// subscription is kept in the home, one file per account.
func (a *App) newPostLimit() *postlimit.Resolver {
	return &postlimit.Resolver{
		Setting: string(a.Cfg.XAPI.MaxPostLength),
		File:    filepath.Join(a.Cfg.Home, "x-subscription", a.Account+".json"),
		Now:     a.Now,
		Ask: func(ctx context.Context) (string, error) {
			x, err := a.XClient()
			if err != nil {
				return "", err
			}
			me, _, err := x.Me(ctx)
			if err != nil {
				return "", err
			}
			return me.SubscriptionType, nil
		},
	}
}

// PostLimit tells how long the account's posts may be.
func (a *App) PostLimit() actions.PostLimiter {
	if a.postLimit == nil {
		return nil
	}
	return a.postLimit
}
