//go:build !linux

package store

import "errors"

// walWrites needs Linux's inotify; elsewhere WatchCommits looks at the
// WAL's size and time every `every` instead.
func walWrites(string) (<-chan struct{}, func(), error) {
	return nil, nil, errors.New("no inotify")
}
