package store

import (
	"slices"
	"testing"
)

// TestSchemaCheckReadsTheMigrationsTablesFromTheBaseline: the tables and
// version a start checks, read from the SQLite baseline, are those the
// migrations leave behind.
func TestSchemaCheckReadsTheMigrationsTablesFromTheBaseline(t *testing.T) {
	want, wantLatest, err := expectedSchema(SQLite)
	if err != nil {
		t.Fatal(err)
	}
	got, latest, err := schemaToCheck(SQLite)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) || latest != wantLatest {
		t.Errorf("checked tables %v at version %d, want the migrations' %v at %d", got, latest, want, wantLatest)
	}
}
