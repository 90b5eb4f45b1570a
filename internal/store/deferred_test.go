package store_test

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/tuitbot/tuitbot/internal/store"
)

func TestDefer(t *testing.T) {
	for _, tc := range []struct {
		name      string
		collect   bool
		args      []any
		wantOK    bool
		wantArgs  []any
		wantError string
	}{
		{name: "no unit of work: the caller writes", args: []any{"a", 1}},
		{name: "collected, ints widened", collect: true, args: []any{"a", 1, int64(2), 0.5, nil}, wantOK: true,
			wantArgs: []any{"a", int64(1), int64(2), 0.5, nil}},
		{name: "an argument that cannot be journaled", collect: true, args: []any{"a", []byte("b")}, wantError: "argument 2 has type []uint8"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			var d *store.Deferred
			if tc.collect {
				ctx, d = store.WithDeferred(ctx)
			}
			ok, err := store.Defer(ctx, "INSERT INTO t VALUES (?)", tc.args...)
			if tc.wantError != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantError) {
					t.Fatalf("Defer error %v, want one saying %q", err, tc.wantError)
				}
				if rows := d.Take(); len(rows) != 0 {
					t.Errorf("a refused row was kept: %v", rows)
				}
				return
			}
			if err != nil || ok != tc.wantOK {
				t.Fatalf("Defer = %t, %v; want %t", ok, err, tc.wantOK)
			}
			if !tc.collect {
				return
			}
			rows := d.Take()
			if len(rows) != 1 || !reflect.DeepEqual(rows[0].Args, tc.wantArgs) {
				t.Fatalf("collected %#v, want one row with %#v", rows, tc.wantArgs)
			}
			// A journaled row reads back with its arguments' types.
			b, err := json.Marshal(rows)
			if err != nil {
				t.Fatal(err)
			}
			var back []store.DeferredRow
			if err := json.Unmarshal(b, &back); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(back, rows) {
				t.Errorf("journaled %s read back as %#v, want %#v", b, back, rows)
			}
			if again := d.Take(); len(again) != 0 {
				t.Errorf("Take kept %v after taking it", again)
			}
			// Work that outlives the unit writes its rows itself.
			if ok, err := store.Defer(ctx, "INSERT INTO t VALUES (?)", "late"); ok || err != nil {
				t.Errorf("Defer after Take = %t, %v; want false, so the caller writes the row", ok, err)
			}
		})
	}
}
