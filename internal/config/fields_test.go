package config

import (
	"testing"
	"unsafe"
)

// TestFieldsBindTheConfigAskedOf: the kept layout names each settable key
// once, and a walk binds every value to the config it was asked of, at
// the same place in another config: two configs never share one. (The
// keys themselves are held by the generated configuration reference.)
func TestFieldsBindTheConfigAskedOf(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  func() *Config
	}{
		{"defaults", func() *Config { c := Default(); return &c }},
		{"zero", func() *Config { return &Config{} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b := tc.cfg(), tc.cfg()
			fa, fb := Fields(a), Fields(b)
			if len(fa) < 20 || len(fa) != len(fb) {
				t.Fatalf("%d and %d keys", len(fa), len(fb))
			}
			startA, startB := uintptr(unsafe.Pointer(a)), uintptr(unsafe.Pointer(b))
			size := unsafe.Sizeof(*a)
			seen := map[string]bool{}
			for i, f := range fa {
				if seen[f.Name()] {
					t.Errorf("%s named twice", f.Name())
				}
				seen[f.Name()] = true
				pa, pb := f.Value.Addr().Pointer(), fb[i].Value.Addr().Pointer()
				if pa < startA || pa >= startA+size {
					t.Errorf("%s: value not in the config asked of", f.Name())
				}
				if pb-startB != pa-startA || fb[i].Name() != f.Name() {
					t.Errorf("%s: not at the same place in another config", f.Name())
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
