package apperr_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/tuitbot/tuitbot/internal/apperr"
)

// TestReadmeNamesRealErrorCodes: where the README says a call is refused,
// fails or is answered with a code, that code is one the product returns.
// A renamed code must not live on in the prose users read first.
func TestReadmeNamesRealErrorCodes(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	known := map[apperr.Code]bool{}
	for _, i := range apperr.All() {
		known[i.Code] = true
	}
	// Sentences wrap, so whitespace runs count as one space.
	text := strings.Join(strings.Fields(string(b)), " ")
	named := regexp.MustCompile("(?:refused with|fails? with|answered with|answers?|returns?) `([a-z]+_[a-z0-9_]+)`").FindAllStringSubmatch(text, -1)
	if len(named) == 0 {
		t.Fatal("the README names no error code; the pattern no longer matches its prose")
	}
	for _, m := range named {
		if !known[apperr.Code(m[1])] {
			t.Errorf("README: %q names %s, which is not an error code (see docs/errors.md)", m[0], m[1])
		}
	}
}
