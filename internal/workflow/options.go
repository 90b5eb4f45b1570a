package workflow

import (
	"encoding/json"
	"fmt"

	"github.com/tuitbot/tuitbot/internal/actions"
)

// encodeOptions is the stored form of a queued item's post options: NULL
// when there are none.
func encodeOptions(o *actions.PostOptions) (any, error) {
	if o == nil {
		return nil, nil
	}
	b, err := json.Marshal(o)
	if err != nil {
		return nil, fmt.Errorf("encode post options: %w", err)
	}
	return string(b), nil
}

func decodeOptions(s string) (*actions.PostOptions, error) {
	if s == "" {
		return nil, nil
	}
	var o actions.PostOptions
	if err := json.Unmarshal([]byte(s), &o); err != nil {
		return nil, fmt.Errorf("stored post options: %w", err)
	}
	return &o, nil
}
