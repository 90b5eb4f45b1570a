package argcheck

import (
	"encoding/json"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/tuitbot/tuitbot/internal/apperr"
)

type sample struct {
	ID     string     `json:"id"`
	Opt    string     `json:"opt,omitempty"`
	IDs    []string   `json:"ids,omitempty"`
	Nested [][]string `json:"nested,omitempty"`
	Limit  int        `json:"limit,omitempty"`
	Score  float64    `json:"score,omitempty"`
	Name   string     `json:"name,omitempty"`
}

func (sample) Limits() Limits {
	return Limits{
		"id": {ID: true}, "opt": {ID: true},
		"ids":    {ID: true, MinItems: 1, MaxItems: 2},
		"nested": {ID: true},
		"limit":  Between(1, 100), "score": Between(0, 1),
		"name": {MaxLength: 3},
	}
}

func TestCheckNamesTheField(t *testing.T) {
	ok := sample{ID: "1", IDs: []string{"2"}}
	cases := []struct {
		name    string
		edit    func(*sample)
		mention string // "" means valid
	}{
		{"valid", func(*sample) {}, ""},
		{"required id missing", func(s *sample) { s.ID = "" }, "id: required"},
		{"id with a letter", func(s *sample) { s.ID = "12x" }, `id: "12x" is not an X id`},
		{"id too long", func(s *sample) { s.ID = strings.Repeat("1", 20) }, "at most 19 digits"},
		{"optional id absent", func(s *sample) { s.Opt = "" }, ""},
		{"optional id bad", func(s *sample) { s.Opt = "-1" }, "opt:"},
		{"list item", func(s *sample) { s.IDs = []string{"1", "x"} }, "ids[1]"},
		{"too many", func(s *sample) { s.IDs = []string{"1", "2", "3"} }, "ids: 3 given, at most 2"},
		{"too few", func(s *sample) { s.IDs = nil }, "ids: at least one"},
		{"nested item", func(s *sample) { s.Nested = [][]string{{"1"}, {"2", "y"}} }, "nested[1][1]"},
		{"zero is not given", func(s *sample) { s.Limit = 0 }, ""},
		{"below range", func(s *sample) { s.Limit = -5 }, "limit: must be 1-100 (got -5)"},
		{"above range", func(s *sample) { s.Limit = 101 }, "limit: must be 1-100"},
		{"float above", func(s *sample) { s.Score = 1.5 }, "score: must be 0-1 (got 1.5)"},
		{"long name", func(s *sample) { s.Name = "abcd" }, "name: at most 3 characters"},
		{"multibyte name fits", func(s *sample) { s.Name = "ééé" }, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := ok
			tc.edit(&s)
			err := Check(reflect.ValueOf(s), s.Limits())
			if tc.mention == "" {
				if err != nil {
					t.Fatalf("want valid, got %v", err)
				}
				return
			}
			if apperr.CodeOf(err) != apperr.InvalidInput {
				t.Fatalf("want invalid_input, got %v", err)
			}
			if !strings.Contains(err.Error(), tc.mention) {
				t.Fatalf("error %q does not mention %q", err, tc.mention)
			}
		})
	}
}

// TestSchemaShowsWhatCheckEnforces derives the schema and checks that the
// pattern it tells agents accepts exactly the ids ID accepts.
func TestSchemaShowsWhatCheckEnforces(t *testing.T) {
	typ := reflect.TypeFor[sample]()
	s, err := jsonschema.ForType(typ, &jsonschema.ForOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := Schema(s, typ, sample{}.Limits()); err != nil {
		t.Fatal(err)
	}
	p := s.Properties
	if p["id"].Pattern != IDPattern || p["ids"].Items.Pattern != IDPattern || p["nested"].Items.Items.Pattern != IDPattern {
		t.Errorf("id patterns not set: %q %q %q", p["id"].Pattern, p["ids"].Items.Pattern, p["nested"].Items.Items.Pattern)
	}
	if *p["ids"].MaxItems != 2 || *p["ids"].MinItems != 1 {
		t.Errorf("ids items bounds = %v..%v", *p["ids"].MinItems, *p["ids"].MaxItems)
	}
	if *p["limit"].Minimum != 1 || *p["limit"].Maximum != 100 || *p["name"].MaxLength != 3 {
		t.Errorf("limit/name bounds not set")
	}
	re := regexp.MustCompile(IDPattern)
	for _, id := range []string{"0", "1", "1234567890123456789", "", "12345678901234567890", "1a", " 1", "١", "+1", "1.0"} {
		if got, want := re.MatchString(id), ID("id", id) == nil; got != want {
			t.Errorf("id %q: pattern accepts=%v, ID accepts=%v", id, got, want)
		}
	}
}

func TestSchemaRefusesUnknownField(t *testing.T) {
	typ := reflect.TypeFor[sample]()
	s, err := jsonschema.ForType(typ, &jsonschema.ForOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := Schema(s, typ, Limits{"renamed": {ID: true}}); err == nil || !strings.Contains(err.Error(), "renamed") {
		t.Fatalf("want an error naming the unknown field, got %v", err)
	}
}

func TestNumericIDs(t *testing.T) {
	l := sample{}.Limits()
	cases := []struct {
		in, want, refused string
	}{
		{`{"id":12345}`, `"id":"12345"`, ""},
		{`{"id":"12345"}`, `{"id":"12345"}`, ""},
		{`{"id":2124631820027822080}`, `"id":"2124631820027822080"`, ""},
		{`{"id":2124631820027822000}`, "", `"2124631820027822000"`},
		{`{"id":1.5}`, "", `(“1.5”)`},
		{`{"id":1e3}`, "", `1e3`},
		{`{"id":-1}`, "", `-1`},
		{`{"ids":[1,"2"],"nested":[[3]]}`, `"ids":["1","2"]`, ""},
		{`{"ids":[1,2.5]}`, "", "ids[1]"},
		{`{"limit":12345}`, `{"limit":12345}`, ""},
		{`[1]`, `[1]`, ""},
	}
	for _, tc := range cases {
		got, err := NumericIDs(json.RawMessage(tc.in), l)
		if tc.refused != "" {
			want := strings.Trim(tc.refused, "()“”")
			if apperr.CodeOf(err) != apperr.InvalidInput || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "quoted") {
				t.Errorf("%s: want invalid_input showing %s and asking to quote it, got %v", tc.in, want, err)
			}
			continue
		}
		if err != nil || !strings.Contains(string(got), tc.want) {
			t.Errorf("%s: got %s, %v; want it to hold %s", tc.in, got, err, tc.want)
		}
	}
}

type inner struct {
	Kind    string   `json:"kind,omitempty"`
	Choices []string `json:"choices"`
}

func (inner) Limits() Limits {
	return Limits{"kind": {Enum: []string{"a", "b"}}, "choices": {MinItems: 2, MaxLength: 3}}
}

type outer struct {
	Text  string `json:"text"`
	Inner *inner `json:"inner,omitempty"`
}

func (outer) Limits() Limits { return Limits{"text": {MaxLength: 5}} }

// TestNestedLimits: an object argument's own limits are enforced with the
// enclosing field's name and shown in its schema, as are enums and the
// length of each string in a list.
func TestNestedLimits(t *testing.T) {
	for _, tc := range []struct {
		in      outer
		mention string
	}{
		{outer{Text: "ok"}, ""},
		{outer{Text: "ok", Inner: &inner{Kind: "a", Choices: []string{"x", "yyy"}}}, ""},
		{outer{Text: "ok", Inner: &inner{Choices: []string{"x", "y"}}}, ""},
		{outer{Text: "ok", Inner: &inner{Kind: "c", Choices: []string{"x", "y"}}}, `inner.kind: "c" is not one of a, b`},
		{outer{Text: "ok", Inner: &inner{Choices: []string{"x"}}}, "inner.choices: 1 given, at least 2"},
		{outer{Text: "ok", Inner: &inner{Choices: []string{"x", "long"}}}, "inner.choices[1]: at most 3 characters"},
	} {
		err := Check(reflect.ValueOf(tc.in), tc.in.Limits())
		if tc.mention == "" {
			if err != nil {
				t.Errorf("%+v: want valid, got %v", tc.in.Inner, err)
			}
			continue
		}
		if apperr.CodeOf(err) != apperr.InvalidInput || !strings.Contains(err.Error(), tc.mention) {
			t.Errorf("%+v: error %v, want invalid_input mentioning %q", tc.in.Inner, err, tc.mention)
		}
	}
	typ := reflect.TypeFor[outer]()
	s, err := jsonschema.ForType(typ, &jsonschema.ForOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := Schema(s, typ, outer{}.Limits()); err != nil {
		t.Fatal(err)
	}
	p := s.Properties["inner"].Properties
	if len(p["kind"].Enum) != 2 || *p["choices"].MinItems != 2 || *p["choices"].Items.MaxLength != 3 || p["choices"].MaxLength != nil {
		t.Errorf("nested schema: kind enum %v, choices %+v", p["kind"].Enum, p["choices"])
	}
}
