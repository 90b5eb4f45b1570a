package xrequest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"
)

// checkBody validates the optional JSON body. An empty string means no
// body. GET and DELETE take none: x_get is ungated, so a body there could
// only be an attempt to make a read carry a write.
func checkBody(method, body string) ([]byte, error) {
	if body == "" {
		return nil, nil
	}
	if method == "GET" || method == "DELETE" {
		return nil, blocked("body", "is not allowed with %s (only x_post and x_put take a body)", method)
	}
	b := []byte(body)
	if err := validJSON(b); err != nil {
		return nil, blocked("body", "%v", err)
	}
	return b, nil
}

// validJSON accepts exactly one JSON value of bounded size and depth, in
// valid UTF-8, with no object holding the same key twice.
//
// Duplicate keys are refused because parsers disagree about them (first
// wins, last wins, error): the body the audit row and the fingerprint
// describe must be the body X acts on. Invalid UTF-8 is refused because
// decoding replaces it with U+FFFD, which would let two different bodies
// share one fingerprint.
func validJSON(b []byte) error {
	if len(b) > MaxBodyBytes {
		return fmt.Errorf("is %d bytes; at most %d are allowed", len(b), MaxBodyBytes)
	}
	if !utf8.Valid(b) {
		return errors.New("must be valid UTF-8")
	}
	if !json.Valid(b) {
		return errors.New("must be valid JSON")
	}
	return walkJSON(b)
}

// jsonFrame is one open object or array while walking tokens.
type jsonFrame struct {
	object  bool
	wantKey bool
	keys    map[string]struct{}
}

// walkJSON checks nesting depth and duplicate keys with a token stream, so
// a hostile document cannot drive recursion.
func walkJSON(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var stack []*jsonFrame
	top := func() *jsonFrame {
		if len(stack) == 0 {
			return nil
		}
		return stack[len(stack)-1]
	}
	// valueDone records that the enclosing object's pending value was read.
	valueDone := func() {
		if f := top(); f != nil && f.object {
			f.wantKey = true
		}
	}
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("must be valid JSON: %w", err)
		}
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{', '[':
				if len(stack) == MaxBodyDepth {
					return fmt.Errorf("nests deeper than %d levels", MaxBodyDepth)
				}
				valueDone()
				f := &jsonFrame{object: t == '{', wantKey: t == '{'}
				if f.object {
					f.keys = map[string]struct{}{}
				}
				stack = append(stack, f)
			default:
				stack = stack[:len(stack)-1]
			}
		case string:
			if f := top(); f != nil && f.object && f.wantKey {
				if _, dup := f.keys[t]; dup {
					return fmt.Errorf("has duplicate object key %s", quote(t))
				}
				f.keys[t] = struct{}{}
				f.wantKey = false
				continue
			}
			valueDone()
		default:
			valueDone()
		}
	}
}

// canonicalBody re-encodes a valid body with object keys sorted and
// insignificant whitespace and string escapes normalised. Numbers keep
// their exact text (no float rounding of large ids), so 1 and 1.0 stay
// distinct: a false "different" only costs a missed dedup, a false "same"
// would drop a real request.
func canonicalBody(b []byte) (json.RawMessage, error) {
	if err := validJSON(b); err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("decode body: %w", err)
	}
	out, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode body: %w", err)
	}
	return out, nil
}
