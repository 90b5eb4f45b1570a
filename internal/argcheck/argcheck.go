// Package argcheck keeps the limits of tool arguments in one place. An input
// type declares them once, by JSON field name, and both the JSON schema that
// agents read and the decoding that enforces them are derived from that
// declaration, so what an agent is told and what is refused cannot drift.
package argcheck

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/tuitbot/tuitbot/internal/apperr"
)

// IDPattern is the format of an X id: a decimal string of 1 to 19 digits.
const IDPattern = `^[0-9]{1,19}$`

// maxIDDigits is the longest X id (the largest signed 64-bit number).
const maxIDDigits = 19

// Rule is the limits of one field. A zero Rule limits nothing.
type Rule struct {
	// ID marks an X id, or a list (of lists) of X ids.
	ID bool
	// MinItems and MaxItems bound a list's length; 0 means no bound.
	MinItems, MaxItems int
	// Range bounds a number to [Min, Max].
	Range    bool
	Min, Max float64
	// MaxLength bounds a string's length in characters, or each string's
	// in a list; 0 means no bound.
	MaxLength int
	// Enum, when set, are the only values a string may take.
	Enum []string
}

// Limits maps JSON field names to their rules.
type Limits map[string]Rule

// Limited is implemented by input types that declare limits.
type Limited interface {
	Limits() Limits
}

// Between is a Range rule.
func Between(lo, hi float64) Rule { return Rule{Range: true, Min: lo, Max: hi} }

// Of returns the limits t declares, if any.
func Of(t reflect.Type) Limits {
	if t == nil {
		return nil
	}
	if l, ok := reflect.Zero(t).Interface().(Limited); ok {
		return l.Limits()
	}
	return nil
}

// ID validates an X id.
func ID(field, id string) error {
	if id == "" {
		return apperr.New(apperr.InvalidInput, "%s: required", field)
	}
	if len(id) > maxIDDigits {
		return apperr.New(apperr.InvalidInput, "%s: %q is not an X id (at most %d digits)", field, clip(id), maxIDDigits)
	}
	for _, r := range id {
		if r < '0' || r > '9' {
			return apperr.New(apperr.InvalidInput, "%s: %q is not an X id (X ids are decimal strings)", field, clip(id))
		}
	}
	return nil
}

// clip keeps an echoed value short: a huge argument must not come back in
// the error.
func clip(s string) string {
	const max = 40
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	return string([]rune(s)[:max]) + "…"
}

// field is one JSON property of an input type.
type field struct {
	name     string
	index    []int
	required bool
}

func fields(t reflect.Type) map[string]field {
	out := map[string]field{}
	for _, f := range reflect.VisibleFields(t) {
		if f.Anonymous || !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if name == "" {
			name = f.Name
		}
		out[name] = field{name: name, index: f.Index, required: !strings.Contains(opts, "omitempty")}
	}
	return out
}

// Schema adds the limits l to s, the schema of t. A rule naming no field of
// t is an error, so a renamed field cannot silently lose its limits.
func Schema(s *jsonschema.Schema, t reflect.Type, l Limits) error {
	fs := fields(t)
	for name, r := range l {
		if _, ok := fs[name]; !ok {
			return fmt.Errorf("limits name %q, which is not a field of %s", name, t)
		}
		p := s.Properties[name]
		if p == nil {
			return fmt.Errorf("schema of %s has no property %q", t, name)
		}
		if r.ID {
			leaf := p
			for leaf.Items != nil {
				leaf = leaf.Items
			}
			leaf.Pattern = IDPattern
		}
		if r.MinItems > 0 {
			p.MinItems = ptr(r.MinItems)
		}
		if r.MaxItems > 0 {
			p.MaxItems = ptr(r.MaxItems)
		}
		if r.Range {
			p.Minimum, p.Maximum = ptr(r.Min), ptr(r.Max)
		}
		if r.MaxLength > 0 {
			if p.Items != nil {
				p.Items.MaxLength = ptr(r.MaxLength)
			} else {
				p.MaxLength = ptr(r.MaxLength)
			}
		}
		if len(r.Enum) > 0 {
			for _, e := range r.Enum {
				p.Enum = append(p.Enum, e)
			}
		}
	}
	// An object argument whose type declares limits of its own gets them in
	// its own schema.
	for name, f := range fs {
		ft := nested(t.FieldByIndex(f.index).Type)
		if ft == nil || s.Properties[name] == nil {
			continue
		}
		if err := Schema(s.Properties[name], ft, Of(ft)); err != nil {
			return err
		}
	}
	return nil
}

// nested returns t, or the struct t points to, when it declares limits.
func nested(t reflect.Type) reflect.Type {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || Of(t) == nil {
		return nil
	}
	return t
}

func ptr[T any](v T) *T { return &v }

// Check enforces the limits l on v, a struct value, with errors that name
// the field (and the index inside a list).
func Check(v reflect.Value, l Limits) error { return CheckAt("", v, l) }

// CheckAt is Check for a value that is the field prefix of an enclosing
// argument ("options"), which errors name before the field.
func CheckAt(prefix string, v reflect.Value, l Limits) error {
	for v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return nil
		}
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct || v.NumField() == 0 && len(l) == 0 {
		return nil
	}
	at := func(name string) string {
		if prefix == "" {
			return name
		}
		return prefix + "." + name
	}
	fs := fields(v.Type())
	// A stable order makes the first error reported deterministic.
	names := make([]string, 0, len(l))
	for name := range l {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		f, ok := fs[name]
		if !ok {
			return apperr.New(apperr.InternalError, "limits name %q, which is not a field of %s", name, v.Type())
		}
		if err := l[name].check(at(name), v.FieldByIndex(f.index), f.required); err != nil {
			return err
		}
	}
	fnames := make([]string, 0, len(fs))
	for name := range fs {
		fnames = append(fnames, name)
	}
	slices.Sort(fnames)
	for _, name := range fnames {
		fv := v.FieldByIndex(fs[name].index)
		if ft := nested(fv.Type()); ft != nil {
			if err := CheckAt(at(name), fv, Of(ft)); err != nil {
				return err
			}
		}
	}
	return nil
}

func (r Rule) check(name string, v reflect.Value, required bool) error {
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return nil // not given
		}
		v, required = v.Elem(), true
	}
	switch v.Kind() {
	case reflect.String:
		s := v.String()
		if r.ID && (s != "" || required) {
			if err := ID(name, s); err != nil {
				return err
			}
		}
		if r.MaxLength > 0 && utf8.RuneCountInString(s) > r.MaxLength {
			return apperr.New(apperr.InvalidInput, "%s: at most %d characters (got %d)", name, r.MaxLength, utf8.RuneCountInString(s))
		}
		if len(r.Enum) > 0 && (s != "" || required) && !slices.Contains(r.Enum, s) {
			return apperr.New(apperr.InvalidInput, "%s: %q is not one of %s", name, clip(s), strings.Join(r.Enum, ", "))
		}
	case reflect.Slice:
		n := v.Len()
		if r.MinItems > 0 && n < r.MinItems {
			if r.MinItems == 1 {
				return apperr.New(apperr.InvalidInput, "%s: at least one is required", name)
			}
			return apperr.New(apperr.InvalidInput, "%s: %d given, at least %d required", name, n, r.MinItems)
		}
		if r.MaxItems > 0 && n > r.MaxItems {
			return apperr.New(apperr.InvalidInput, "%s: %d given, at most %d", name, n, r.MaxItems)
		}
		if r.MaxLength > 0 && v.Type().Elem().Kind() == reflect.String {
			for i := 0; i < n; i++ {
				if c := utf8.RuneCountInString(v.Index(i).String()); c > r.MaxLength {
					return apperr.New(apperr.InvalidInput, "%s[%d]: at most %d characters (got %d)", name, i, r.MaxLength, c)
				}
			}
		}
		if r.ID {
			return idsIn(name, v)
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		// Zero is "not given" for an optional number; the schema still
		// refuses an explicit out-of-range zero.
		if r.Range && (v.Int() != 0 || required) {
			if x := float64(v.Int()); x < r.Min || x > r.Max {
				return apperr.New(apperr.InvalidInput, "%s: must be %s-%s (got %d)", name, num(r.Min), num(r.Max), v.Int())
			}
		}
	case reflect.Float32, reflect.Float64:
		if r.Range && (v.Float() != 0 || required) {
			if x := v.Float(); x < r.Min || x > r.Max {
				return apperr.New(apperr.InvalidInput, "%s: must be %s-%s (got %s)", name, num(r.Min), num(r.Max), num(x))
			}
		}
	}
	return nil
}

func idsIn(name string, v reflect.Value) error {
	for i := 0; i < v.Len(); i++ {
		e := v.Index(i)
		at := name + "[" + strconv.Itoa(i) + "]"
		switch e.Kind() {
		case reflect.String:
			if err := ID(at, e.String()); err != nil {
				return err
			}
		case reflect.Slice:
			if err := idsIn(at, e); err != nil {
				return err
			}
		}
	}
	return nil
}

func num(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// Field enforces r on one value, named name in errors; a value that is
// empty is checked as given (required).
func Field(name string, v any, r Rule) error { return r.check(name, reflect.ValueOf(v), true) }

// NumericIDs turns X ids that a client sent as JSON numbers into the
// strings X uses, for the fields l marks as ids. An integer is accepted as
// written when a double holds it exactly; a fraction, an exponent, a sign
// or a rounded number is refused with the id as it was sent, so the caller
// can quote it. Arguments that are not an object are left for the
// decoder to refuse.
func NumericIDs(raw json.RawMessage, l Limits) (json.RawMessage, error) {
	if !hasID(l) {
		return raw, nil
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) != nil || obj == nil {
		return raw, nil
	}
	changed := false
	for name, r := range l {
		v, ok := obj[name]
		if !r.ID || !ok {
			continue
		}
		fixed, did, err := quoteIDs(name, v)
		if err != nil {
			return nil, err
		}
		if did {
			obj[name], changed = fixed, true
		}
	}
	if !changed {
		return raw, nil
	}
	return json.Marshal(obj)
}

func hasID(l Limits) bool {
	for _, r := range l {
		if r.ID {
			return true
		}
	}
	return false
}

// exactInteger reports a JSON number literal that is a non-negative integer
// a double holds exactly: what a client that sent the id as a number can
// have meant without rounding it. A
// rounded id (a JavaScript client prints 2124631820027822000 for
// 2124631820027822123) is refused rather than guessed at.
func exactInteger(lit string) bool {
	for _, r := range lit {
		if r < '0' || r > '9' {
			return false
		}
	}
	f, err := strconv.ParseFloat(lit, 64)
	// The double's exact value, not its shortest spelling: a rounded id
	// spelled short (…822000) differs from the value it stands for (…822080).
	return err == nil && new(big.Float).SetFloat64(f).Text('f', 0) == lit
}

// quoteIDs rewrites a numeric id, or the numeric ids inside a list (of
// lists), as strings.
func quoteIDs(name string, v json.RawMessage) (json.RawMessage, bool, error) {
	t := bytes.TrimSpace(v)
	switch {
	case len(t) == 0:
		return v, false, nil
	case t[0] == '[':
		var items []json.RawMessage
		if json.Unmarshal(t, &items) != nil {
			return v, false, nil
		}
		changed := false
		for i, it := range items {
			fixed, did, err := quoteIDs(name+"["+strconv.Itoa(i)+"]", it)
			if err != nil {
				return nil, false, err
			}
			if did {
				items[i], changed = fixed, true
			}
		}
		if !changed {
			return v, false, nil
		}
		b, err := json.Marshal(items)
		return b, err == nil, err
	case t[0] == '-' || (t[0] >= '0' && t[0] <= '9'):
		lit := string(t)
		if !exactInteger(lit) {
			return nil, false, apperr.New(apperr.InvalidInput,
				"%s: X ids are strings; the number %s is not an id a client can send exactly, so send it quoted (\"%s\")", name, clip(lit), clip(lit))
		}
		b, _ := json.Marshal(lit)
		return b, true, nil
	}
	return v, false, nil
}
