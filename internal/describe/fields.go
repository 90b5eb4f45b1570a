package describe

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Field is one parameter of a call as a person reads it: its name (a
// nested one as "options, poll, options") and its value as plain text.
type Field struct {
	Name, Value string
}

// Fields lists the parameters of a call (or of its result) one by one,
// nested objects and lists opened up, so that no page has to show a
// person a JSON object. A string that holds a JSON object (a raw
// request's body) is opened up too. Nil when raw is not a JSON object.
func Fields(raw json.RawMessage) []Field {
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil {
		return nil
	}
	var out []Field
	flatten(&out, "", m)
	return out
}

func flatten(out *[]Field, prefix string, v any) {
	switch v := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			flatten(out, join(prefix, keyWords(k)), v[k])
		}
		if len(v) == 0 {
			*out = append(*out, Field{Name: prefix, Value: "(none)"})
		}
	case []any:
		if scalars(v) {
			parts := make([]string, len(v))
			for i, x := range v {
				parts[i] = scalar(x)
			}
			val := strings.Join(parts, ", ")
			if len(v) == 0 {
				val = "(none)"
			}
			*out = append(*out, Field{Name: prefix, Value: val})
			return
		}
		for i, x := range v {
			flatten(out, join(prefix, strconv.Itoa(i+1)), x)
		}
	case string:
		if t := strings.TrimSpace(v); strings.HasPrefix(t, "{") {
			var inner map[string]any
			if json.Unmarshal([]byte(t), &inner) == nil {
				flatten(out, prefix, inner)
				return
			}
		}
		*out = append(*out, Field{Name: prefix, Value: scalar(v)})
	default:
		*out = append(*out, Field{Name: prefix, Value: scalar(v)})
	}
}

func join(prefix, name string) string {
	if prefix == "" {
		return name
	}
	return prefix + ", " + name
}

// keyWords writes a parameter's key as words ("in_reply_to_id" → "in reply
// to id").
func keyWords(key string) string { return strings.ReplaceAll(key, "_", " ") }

func scalars(v []any) bool {
	for _, x := range v {
		switch x.(type) {
		case map[string]any, []any:
			return false
		}
	}
	return true
}

func scalar(v any) string {
	switch v := v.(type) {
	case nil:
		return "(none)"
	case bool:
		if v {
			return "yes"
		}
		return "no"
	case string:
		if v == "" {
			return "(empty)"
		}
		return v
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return fmt.Sprint(v)
}

// ThreadPost is one post of a thread as a call holds it.
type ThreadPost struct {
	Text  string
	Media []string
}

// ThreadOf reads a thread's posts, in order, from x_post_thread's
// parameters; ok is false when params hold no thread.
func ThreadOf(params json.RawMessage) ([]ThreadPost, bool) {
	var p struct {
		Tweets   []string   `json:"tweets"`
		MediaIDs [][]string `json:"media_ids"`
	}
	if json.Unmarshal(params, &p) != nil || len(p.Tweets) == 0 {
		return nil, false
	}
	out := make([]ThreadPost, len(p.Tweets))
	for i, t := range p.Tweets {
		out[i].Text = t
		if i < len(p.MediaIDs) {
			out[i].Media = p.MediaIDs[i]
		}
	}
	return out, true
}
