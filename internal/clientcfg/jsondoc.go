package clientcfg

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
)

// object is a JSON object that remembers the order of its keys, so a file
// rewritten with one entry added keeps every other key where its owner put
// it. Values are *object, []any, string, json.Number, bool or nil.
type object struct {
	keys []string
	vals map[string]any
}

func newObject() *object { return &object{vals: map[string]any{}} }

func (o *object) get(k string) (any, bool) {
	v, ok := o.vals[k]
	return v, ok
}

// set replaces the value of k in place, or appends k.
func (o *object) set(k string, v any) {
	if _, ok := o.vals[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.vals[k] = v
}

func (o *object) del(k string) bool {
	if _, ok := o.vals[k]; !ok {
		return false
	}
	delete(o.vals, k)
	for i, key := range o.keys {
		if key == k {
			o.keys = append(o.keys[:i], o.keys[i+1:]...)
			break
		}
	}
	return true
}

// errNotPlainJSON marks a file tuitbot will not rewrite: comments, trailing
// commas or anything else encoding/json rejects would be lost or mangled.
var errNotPlainJSON = errors.New("not plain JSON")

// parseJSON reads a whole config file. An empty file is an empty object;
// anything but one JSON object is refused.
func parseJSON(b []byte) (*object, error) {
	if len(bytes.TrimSpace(b)) == 0 {
		return newObject(), nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	v, err := decodeValue(dec)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errNotPlainJSON, err)
	}
	o, ok := v.(*object)
	if !ok {
		return nil, fmt.Errorf("%w: the top level is not an object", errNotPlainJSON)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%w: data after the top-level object", errNotPlainJSON)
	}
	return o, nil
}

func decodeValue(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			o := newObject()
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k, ok := kt.(string)
				if !ok {
					return nil, fmt.Errorf("object key %v is not a string", kt)
				}
				v, err := decodeValue(dec)
				if err != nil {
					return nil, err
				}
				o.set(k, v)
			}
			if _, err := dec.Token(); err != nil { // '}'
				return nil, err
			}
			return o, nil
		case '[':
			arr := []any{}
			for dec.More() {
				v, err := decodeValue(dec)
				if err != nil {
					return nil, err
				}
				arr = append(arr, v)
			}
			if _, err := dec.Token(); err != nil { // ']'
				return nil, err
			}
			return arr, nil
		}
		return nil, fmt.Errorf("unexpected %v", t)
	default:
		return t, nil // string, json.Number, bool, nil
	}
}

// detectIndent returns the indentation unit of a file: the leading white
// space of its first indented line, or two spaces.
func detectIndent(b []byte) string {
	for _, line := range strings.Split(string(b), "\n")[1:] {
		trimmed := strings.TrimLeft(line, " \t")
		if trimmed != "" && len(trimmed) < len(line) {
			return line[:len(line)-len(trimmed)]
		}
	}
	return "  "
}

// encodeJSON writes o indented by unit, one member per line.
func encodeJSON(o *object, unit string) []byte {
	var buf bytes.Buffer
	writeValue(&buf, o, unit, 0)
	buf.WriteByte('\n')
	return buf.Bytes()
}

func writeValue(buf *bytes.Buffer, v any, unit string, depth int) {
	pad := strings.Repeat(unit, depth)
	switch t := v.(type) {
	case *object:
		if len(t.keys) == 0 {
			buf.WriteString("{}")
			return
		}
		buf.WriteString("{\n")
		for i, k := range t.keys {
			buf.WriteString(pad + unit)
			writeString(buf, k)
			buf.WriteString(": ")
			writeValue(buf, t.vals[k], unit, depth+1)
			if i < len(t.keys)-1 {
				buf.WriteByte(',')
			}
			buf.WriteByte('\n')
		}
		buf.WriteString(pad + "}")
	case []any:
		if len(t) == 0 {
			buf.WriteString("[]")
			return
		}
		buf.WriteString("[\n")
		for i, e := range t {
			buf.WriteString(pad + unit)
			writeValue(buf, e, unit, depth+1)
			if i < len(t)-1 {
				buf.WriteByte(',')
			}
			buf.WriteByte('\n')
		}
		buf.WriteString(pad + "]")
	case string:
		writeString(buf, t)
	case json.Number:
		buf.WriteString(t.String())
	case bool:
		if t {
			buf.WriteString("true")
		} else {
			buf.WriteString("false")
		}
	case nil:
		buf.WriteString("null")
	default:
		// Only the types decodeValue and the entry builders produce reach
		// here; anything else is a programming error.
		panic(fmt.Sprintf("clientcfg: cannot encode %T", v))
	}
}

// writeString quotes s as JSON without HTML escaping: paths and URLs stay
// readable ("&" not "\u0026").
func writeString(buf *bytes.Buffer, s string) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	buf.Write(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
}

// plain turns a value into maps and slices for comparison: key order does
// not make two entries different.
func plain(v any) any {
	switch t := v.(type) {
	case *object:
		m := make(map[string]any, len(t.keys))
		for _, k := range t.keys {
			m[k] = plain(t.vals[k])
		}
		return m
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = plain(e)
		}
		return out
	case json.Number:
		return t.String()
	default:
		return v
	}
}

func sameJSON(a, b any) bool { return reflect.DeepEqual(plain(a), plain(b)) }

// stringArray turns a []string into a JSON array value.
func stringArray(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}
