package toolstest

import (
	"encoding/json"
	"testing"

	"github.com/tuitbot/tuitbot/internal/apperr"
)

// TestIDsSentAsNumbers: agents and the Inspector send ids as JSON numbers.
// One a client can have sent exactly is the id; a rounded or fractional one
// is refused with the id as it was sent and a request to quote it.
func TestIDsSentAsNumbers(t *testing.T) {
	e := newEnv(t, envOptions{})
	// Accepted: X answers for the id "1" (not found), so it reached X as that string.
	e.call("get_tweet_by_id", json.RawMessage(`{"tweet_id": 1}`)).fails(t, apperr.XNotFound)
	e.call("x_get_users_by_ids", json.RawMessage(`{"user_ids": [1, "2"]}`)).ok(t, nil)

	before := e.counters()
	for _, tc := range []struct{ args, shows string }{
		{`{"tweet_id": 2124631820027822000}`, `2124631820027822000`},
		{`{"tweet_id": 1.5}`, `1.5`},
		{`{"tweet_id": 2.124631820027822e+18}`, `2.124631820027822e+18`},
	} {
		e.call("x_like_tweet", json.RawMessage(tc.args)).fails(t, apperr.InvalidInput).mentions(t, "tweet_id", tc.shows, "quoted")
	}
	e.requireDelta(before, nil)
}
