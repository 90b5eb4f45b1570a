package config

import "strings"

// envTypo reports what a TUITBOT_ variable without a section separator was
// probably meant to be. Names in the section form are checked exactly;
// these are only refused when they are plainly a misspelt key: a
// top-level key a letter or two off (TUITBOT_APROVAL_MODE), or a section
// key written with one underscore (TUITBOT_LLM_MODEL). Anything else is
// left alone, because other tools set TUITBOT_ variables of their own
// (TUITBOT_MCP_TOKEN for clients, for one).
func envTypo(name string, fields []Field) (suggest string, typo bool) {
	rest := strings.ToLower(strings.TrimPrefix(name, "TUITBOT_"))
	best, bestDist := "", 3
	for _, f := range fields {
		if f.Section == "" {
			if d := editDistance(rest, f.Key); d < bestDist {
				best, bestDist = f.EnvName(), d
			}
			continue
		}
		if rest == f.Section+"_"+f.Key {
			return f.EnvName(), true
		}
	}
	return best, best != ""
}

// editDistance is the Levenshtein distance of two short ASCII names.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
