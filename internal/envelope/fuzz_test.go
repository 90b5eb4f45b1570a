package envelope_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/tuitbot/tuitbot/internal/envelope"
)

// FuzzEnvelopeUnmarshal reads arbitrary bytes as an envelope, as an MCP
// client does. Whatever decodes must re-encode to JSON that decodes to the
// same encoding again (a fixed point), and the fixed error fields always
// come out with their proper types.
func FuzzEnvelopeUnmarshal(f *testing.F) {
	f.Add([]byte(`{"success":true,"data":{"a":1},"meta":{"tool_version":"1.0","elapsed_ms":1}}`))
	f.Add([]byte(`{"success":false,"data":null,"error":{"code":"x_rate_limited","message":"m","retryable":true,"retry_after_ms":5}}`))
	f.Add([]byte(`{"success":false,"error":{"code":1}}`))
	f.Add([]byte(`{"error":{"extra":{"nested":[1,2,{"x":null}]}}}`))
	f.Add([]byte(`{"error":null,"meta":null}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var env envelope.Envelope
		if err := json.Unmarshal(data, &env); err != nil {
			return
		}
		b1, err := json.Marshal(env)
		if err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		var back envelope.Envelope
		if err := json.Unmarshal(b1, &back); err != nil {
			t.Fatalf("decode own encoding %s: %v", b1, err)
		}
		b2, err := json.Marshal(back)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(b1, b2) {
			t.Fatalf("not a fixed point:\n%s\n%s", b1, b2)
		}
		if env.Error != nil {
			var m map[string]any
			if err := json.Unmarshal(b1, &m); err != nil {
				t.Fatal(err)
			}
			e := m["error"].(map[string]any)
			if _, ok := e["code"].(string); !ok {
				t.Fatalf("error.code not a string in %s", b1)
			}
			if _, ok := e["retryable"].(bool); !ok {
				t.Fatalf("error.retryable not a bool in %s", b1)
			}
		}
	})
}
