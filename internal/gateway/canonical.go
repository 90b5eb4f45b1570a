package gateway

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
)

// Canonical re-encodes JSON with object keys sorted and no insignificant
// whitespace, so that equal parameters give equal bytes whatever order the
// caller wrote them in. Numbers keep their literal form.
func Canonical(raw []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("canonical json: %w", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("canonical json: trailing data")
	}
	// encoding/json sorts map keys, which is exactly the canonical order.
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// CanonicalOf marshals v and canonicalises it.
func CanonicalOf(v any) ([]byte, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode params: %w", err)
	}
	return Canonical(raw)
}

// Fingerprint is the idempotency hash: SHA-256 over the tool name and the
// canonical parameters. The separator cannot appear in a tool name, so
// ("a", "b…") and ("a\x00b", …) cannot collide.
func Fingerprint(tool string, canonical []byte) string {
	h := sha256.New()
	h.Write([]byte(tool))
	h.Write([]byte{0})
	h.Write(canonical)
	return hex.EncodeToString(h.Sum(nil))
}
