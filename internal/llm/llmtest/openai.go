// Package llmtest answers in OpenAI's chat-completions wire format, for the
// tests of packages that reach an LLM over HTTP: one place knows the shape
// of a real answer, so every fake provider speaks it the same way.
package llmtest

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// Completion is one assistant answer and the token usage it reports.
type Completion struct {
	ID               int
	Model            string
	Content          string
	PromptTokens     int
	CompletionTokens int
}

// Write answers a chat-completions request with c, as OpenAI's API does.
func Write(w http.ResponseWriter, c Completion) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"id": fmt.Sprintf("chatcmpl-%d", c.ID), "object": "chat.completion", "created": 1700000000, "model": c.Model,
		"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
			"message": map[string]any{"role": "assistant", "content": c.Content}}},
		"usage": map[string]any{"prompt_tokens": c.PromptTokens, "completion_tokens": c.CompletionTokens,
			"total_tokens": c.PromptTokens + c.CompletionTokens},
	})
}
