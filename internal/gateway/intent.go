package gateway

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"golang.org/x/text/unicode/norm"

	"github.com/tuitbot/tuitbot/internal/apperr"
)

// A call has two identities. Its parameters hash (params_hash) is taken
// over the tool and the parameters as given: it is what the audit row
// records of the request. Its intent key is taken over what the call does
// on X, whatever tool spelled it: x_post_tweet {text}, x_post /2/tweets
// {"text"} on either host, with null optional fields, and a thread of one
// post all have one intent. The duplicate window, the in-flight check, the
// unknown-outcome block and the approval queue all look calls up by the
// intent key, so no spelling of an effect gets past another's answer.

// identity is how the gateway tells calls apart.
type identity struct {
	// hash is the parameters hash (Fingerprint over the tool).
	hash string
	// intent is the intent key.
	intent string
}

// matches reports whether a stored intent key (intent_key, or for rows
// older than the key their parameters hash, which the migration copied
// into it) is this call's.
func (id identity) matches(stored string) bool {
	return stored == id.intent || stored == id.hash
}

func identityOf(act *Action, params json.RawMessage) (identity, error) {
	hash, err := hashOf(act, params)
	if err != nil {
		return identity{}, err
	}
	intent, err := IntentKey(act, params)
	if err != nil {
		return identity{}, err
	}
	return identity{hash: hash, intent: intent}, nil
}

// IntentKey is the intent key of a call of act with params: SHA-256 over
// the effect and the canonical intent that act.Intent gives, or, when it
// gives none, over the tool and the fingerprint material (the call is then
// only ever identical to itself). The canonical intent has sorted keys,
// every string in Unicode NFC (X counts and compares text in NFC, so "café"
// composed and decomposed is one post) and no object member that is null or
// empty (an empty string, list or object, or a list of only empty
// values): an optional field left out, sent empty or sent as null asks X
// for the same thing. List order is kept.
func IntentKey(act *Action, params json.RawMessage) (string, error) {
	if act.Intent != nil {
		if effect, material, ok := act.Intent(params); ok {
			canon, err := canonicalIntent(material)
			if err != nil {
				return "", apperr.Wrap(apperr.InternalError, err, "%s: canonical intent: %v", act.Tool, err)
			}
			return intentHash("intent", effect, canon), nil
		}
	}
	material := []byte(params)
	if act.Fingerprint != nil {
		var err error
		if material, err = act.Fingerprint(params); err != nil {
			return "", err
		}
	}
	return intentHash("call", act.Tool, material), nil
}

// intentHash keeps intent keys apart from parameters hashes and from each
// other's kinds: the separators cannot appear in a kind or an effect name.
func intentHash(kind, effect string, material []byte) string {
	h := sha256.New()
	h.Write([]byte(kind))
	h.Write([]byte{0})
	h.Write([]byte(effect))
	h.Write([]byte{0})
	h.Write(material)
	return hex.EncodeToString(h.Sum(nil))
}

// canonicalIntent re-encodes an intent in its canonical form (see
// IntentKey).
func canonicalIntent(raw []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("trailing data")
	}
	v, _ = pruneIntent(v)
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// pruneIntent normalises v and reports whether it is empty: null, "", or
// a list or object with nothing left in it.
func pruneIntent(v any) (any, bool) {
	switch x := v.(type) {
	case nil:
		return nil, true
	case string:
		return norm.NFC.String(x), x == ""
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, val := range x {
			if pv, empty := pruneIntent(val); !empty {
				out[norm.NFC.String(k)] = pv
			}
		}
		return out, len(out) == 0
	case []any:
		out := make([]any, len(x))
		empty := true
		for i, val := range x {
			var e bool
			out[i], e = pruneIntent(val)
			empty = empty && e
		}
		// An empty element stays (pruned), so the positions hold.
		return out, empty
	}
	return v, false
}
