package describe

// Wording is a tool's row of the words table, for the external tests.
type Wording struct {
	Name, Verb, Plural, Effect string
	Kind                       Kind
	Param                      string
}

// WordsOf is tool's row of the words table.
func WordsOf(tool string) (Wording, bool) {
	w, ok := words[tool]
	return Wording{Name: w.name, Verb: w.verb, Plural: w.plural, Effect: w.effect, Kind: w.kind, Param: w.param}, ok
}
