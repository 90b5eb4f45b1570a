package config

import (
	"reflect"
	"testing"
)

// reflectFields walks cfg's settable keys by reflection, the way Fields
// did before it kept the layout: the reference the cached walk must match.
func reflectFields(t *testing.T, cfg *Config) []Field {
	t.Helper()
	var out []Field
	rv := reflect.ValueOf(cfg).Elem()
	rt := rv.Type()
	for i := 0; i < rt.NumField(); i++ {
		sf := rt.Field(i)
		tag := sf.Tag.Get("toml")
		if tag == "" || tag == "-" {
			continue
		}
		if sf.Type.Kind() == reflect.Struct {
			for j := 0; j < sf.Type.NumField(); j++ {
				inner := sf.Type.Field(j)
				itag := inner.Tag.Get("toml")
				if itag == "" || itag == "-" || !scalarOrList(inner.Type) {
					continue
				}
				secret := inner.Tag.Get("secret")
				out = append(out, Field{Section: tag, Key: itag, tag: inner.Tag,
					Secret: secret == secretHeld, SecretEnv: secret == secretNamed, Value: rv.Field(i).Field(j)})
			}
			continue
		}
		if scalarOrList(sf.Type) {
			out = append(out, Field{Key: tag, tag: sf.Tag, Value: rv.Field(i)})
		}
	}
	return out
}

// TestFieldsMatchReflection: the kept layout gives the same keys, flags,
// docs and values as a walk by reflection, each value bound to the config
// it was asked of (two configs never share one).
func TestFieldsMatchReflection(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  func() *Config
	}{
		{"defaults", func() *Config { c := Default(); return &c }},
		{"zero", func() *Config { return &Config{} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b := tc.cfg(), tc.cfg()
			got, want := Fields(a), reflectFields(t, a)
			if len(got) != len(want) || len(got) == 0 {
				t.Fatalf("Fields gave %d keys, reflection %d", len(got), len(want))
			}
			for i := range want {
				g, w := got[i], want[i]
				if g.Section != w.Section || g.Key != w.Key || g.Secret != w.Secret || g.SecretEnv != w.SecretEnv || g.Doc() != w.Doc() {
					t.Errorf("key %d: got %+v, want %+v", i, g, w)
				}
				if g.Value.Addr().Pointer() != w.Value.Addr().Pointer() {
					t.Errorf("%s: value not bound to the config asked of", w.Name())
				}
				if other := Fields(b)[i]; other.Value.Addr().Pointer() == g.Value.Addr().Pointer() {
					t.Errorf("%s: two configs share a value", w.Name())
				}
			}
		})
	}
}

// TestFieldsWalkIsCheap: a walk only binds the kept layout to the config:
// one allocation (the slice), not a reflection over the type each time.
func TestFieldsWalkIsCheap(t *testing.T) {
	cfg := Default()
	Fields(&cfg)
	if n := testing.AllocsPerRun(50, func() { Fields(&cfg) }); n > 1 {
		t.Fatalf("Fields allocates %v times per walk, want 1", n)
	}
}
