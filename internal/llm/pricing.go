package llm

import "strings"

// Price is a model family's list price in US dollars per million tokens.
// The figures are estimates for budgeting, not billing.
type Price struct {
	Family        string
	InputPerMTok  float64
	OutputPerMTok float64
}

// priceTable is ordered most specific first: the first family whose prefix
// (or, for Claude, whose tier word) matches wins.
var priceTable = []struct {
	match func(model string) bool
	price Price
}{
	{prefix("gpt-4o-mini"), Price{"gpt-4o-mini", 0.15, 0.60}},
	{prefix("gpt-4o"), Price{"gpt-4o", 2.50, 10.00}},
	{prefix("gpt-4.1-nano"), Price{"gpt-4.1-nano", 0.10, 0.40}},
	{prefix("gpt-4.1-mini"), Price{"gpt-4.1-mini", 0.40, 1.60}},
	{prefix("gpt-4.1"), Price{"gpt-4.1", 2.00, 8.00}},
	{prefix("gpt-5-nano"), Price{"gpt-5-nano", 0.05, 0.40}},
	{prefix("gpt-5-mini"), Price{"gpt-5-mini", 0.25, 2.00}},
	{prefix("gpt-5"), Price{"gpt-5", 1.25, 10.00}},
	{prefix("gpt-4-turbo"), Price{"gpt-4-turbo", 10.00, 30.00}},
	{prefix("gpt-3.5-turbo"), Price{"gpt-3.5-turbo", 0.50, 1.50}},
	{prefix("o4-mini"), Price{"o4-mini", 1.10, 4.40}},
	{prefix("o3-mini"), Price{"o3-mini", 1.10, 4.40}},
	{prefix("o3"), Price{"o3", 2.00, 8.00}},
	{prefix("o1-mini"), Price{"o1-mini", 1.10, 4.40}},
	{prefix("o1"), Price{"o1", 15.00, 60.00}},
	// Claude 4.5+ Opus is priced lower than the Opus 4/4.1 and Claude 3
	// Opus models.
	{claude("opus-4-5", "opus-4.5", "opus-4-6", "opus-4.6"), Price{"claude-opus-4.5", 5.00, 25.00}},
	{claude("opus"), Price{"claude-opus", 15.00, 75.00}},
	{claude("sonnet"), Price{"claude-sonnet", 3.00, 15.00}},
	{claude("3-haiku", "3.0-haiku"), Price{"claude-3-haiku", 0.25, 1.25}},
	{claude("3-5-haiku", "3.5-haiku"), Price{"claude-3.5-haiku", 0.80, 4.00}},
	{claude("haiku"), Price{"claude-haiku", 1.00, 5.00}},
}

func prefix(p string) func(string) bool {
	return func(m string) bool { return strings.HasPrefix(m, p) }
}

func claude(words ...string) func(string) bool {
	return func(m string) bool {
		if !strings.HasPrefix(m, "claude") {
			return false
		}
		for _, w := range words {
			if strings.Contains(m, w) {
				return true
			}
		}
		return false
	}
}

// normalizeModel lower-cases a model id and drops a router's vendor prefix
// ("openai/gpt-4o-mini" on OpenRouter).
func normalizeModel(model string) string {
	m := strings.ToLower(strings.TrimSpace(model))
	if i := strings.LastIndexByte(m, '/'); i >= 0 {
		m = m[i+1:]
	}
	return m
}

// LookupPrice returns the price of model's family; ok is false for models
// the table does not know (local and open-weight models among them).
func LookupPrice(model string) (Price, bool) {
	m := normalizeModel(model)
	for _, e := range priceTable {
		if e.match(m) {
			return e.price, true
		}
	}
	return Price{}, false
}

// EstimateCost prices a call. Unknown models cost 0 with known false.
func EstimateCost(model string, inputTokens, outputTokens int) (usd float64, known bool) {
	p, ok := LookupPrice(model)
	if !ok {
		return 0, false
	}
	return (float64(inputTokens)*p.InputPerMTok + float64(outputTokens)*p.OutputPerMTok) / 1e6, true
}
