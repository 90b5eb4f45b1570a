package gateway

import (
	"encoding/json"
	"fmt"
	"slices"
)

// EditDiff lists what a human's edit changed in the queued call: each
// changed top-level parameter as a "- key: old" and a "+ key: new" line,
// in key order. Nil when the item was not edited.
func (it ApprovalItem) EditDiff() []string {
	if len(it.OriginalParams) == 0 {
		return nil
	}
	var before, after map[string]any
	_ = json.Unmarshal(it.OriginalParams, &before)
	_ = json.Unmarshal(it.Params, &after)
	var keys []string
	for k := range before {
		keys = append(keys, k)
	}
	for k := range after {
		if _, ok := before[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	var out []string
	for _, k := range keys {
		x, _ := json.Marshal(before[k])
		y, _ := json.Marshal(after[k])
		if string(x) != string(y) {
			out = append(out, fmt.Sprintf("- %s: %s", k, x), fmt.Sprintf("+ %s: %s", k, y))
		}
	}
	return out
}
