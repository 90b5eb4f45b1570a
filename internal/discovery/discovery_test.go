package discovery

import "testing"

func TestDefaultQueryListsEachKeywordOnce(t *testing.T) {
	for _, tc := range []struct {
		name     string
		keywords []string
		want     string
	}{
		{"distinct", []string{"golang", "AI agents"}, `golang OR "AI agents"`},
		{"repeated across lists", []string{"golang", "rust", "golang"}, "golang OR rust"},
		{"repeated in another case", []string{"Golang", "golang", "AI Agents", "ai agents"}, `Golang OR "AI Agents"`},
		{"blank and padded", []string{" golang ", "", "golang"}, "golang"},
		{"none", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &Service{Keywords: tc.keywords}
			if got := s.DefaultQuery(); got != tc.want {
				t.Fatalf("DefaultQuery(%q) = %q, want %q", tc.keywords, got, tc.want)
			}
		})
	}
}
