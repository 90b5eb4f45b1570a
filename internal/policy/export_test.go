package policy

import (
	"context"
	"testing"
	"time"
)

// CounterStore is one account's limit counters on one backend, as the
// backend-parameterised tests drive them.
type CounterStore interface {
	CounterReader
	// Update runs fn in one write transaction of the backend: committed
	// when fn returns nil, rolled back when it returns an error (which
	// Update returns).
	Update(ctx context.Context, fn func(CounterTx) error) error
	// Break makes every later counter operation fail, as a broken
	// database would; a transaction can still begin.
	Break(t *testing.T)
}

// CounterDB is one test's counter database on a backend; each account in
// it has counters of its own.
type CounterDB interface {
	Counters(account string, now func() time.Time) CounterStore
}

// CounterBackend opens a CounterDB for a test. With own, the database is
// t's alone (the test may break it); without, it is one the package's
// tests share, each on accounts of its own, which spares a database per
// test. Open may skip t when the backend is not available here
// (PostgreSQL without a server).
type CounterBackend struct {
	Name string
	Open func(t *testing.T, own bool) CounterDB
}

// counterBackends are the backends the counter suite runs against, in
// order: the in-memory one of this package, then those the external test
// package registers. policy cannot import the store's counters (they
// import policy), so the real backends come in through
// RegisterCounterBackend from package policy_test, which can.
var counterBackends = []CounterBackend{{Name: "memory", Open: openMemDB}}

// RegisterCounterBackend adds a backend to the counter suite; called from
// an init function of package policy_test.
func RegisterCounterBackend(b CounterBackend) {
	counterBackends = append(counterBackends, b)
}
