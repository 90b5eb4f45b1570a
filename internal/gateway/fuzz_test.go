package gateway

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzCanonical feeds arbitrary bytes (tool parameters come from agents) to
// Canonical. Whatever it accepts must come out as valid JSON that is its own
// canonical form and means the same as the input.
func FuzzCanonical(f *testing.F) {
	for _, s := range []string{
		`{"a":1,"b":2}`, `{"b":2,"a":1}`, `{"text":"héllo <b>&\u2028","n":1.50,"e":2e-3}`,
		`[1,[2,{"z":null,"a":true}]]`, `"str"`, `{"a":{"a":{"a":{}}}}`, `{"dup":1,"dup":2}`, `{`, ``, "\xff",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		out, err := Canonical(raw)
		if err != nil {
			return
		}
		if !json.Valid(out) {
			t.Fatalf("Canonical(%q) = %q is not valid JSON", raw, out)
		}
		again, err := Canonical(out)
		if err != nil || !bytes.Equal(again, out) {
			t.Fatalf("Canonical is not idempotent: %q -> %q -> %q (%v)", raw, out, again, err)
		}
		var a, b any
		if err := decodeNumbers(raw, &a); err != nil {
			return // accepted by the streaming decoder only; nothing to compare
		}
		if err := decodeNumbers(out, &b); err != nil {
			t.Fatalf("canonical form does not decode: %v", err)
		}
		ja, _ := json.Marshal(a)
		jb, _ := json.Marshal(b)
		if !bytes.Equal(ja, jb) {
			t.Fatalf("Canonical changed the meaning: %s vs %s", ja, jb)
		}
	})
}

func decodeNumbers(b []byte, v *any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	return dec.Decode(v)
}
