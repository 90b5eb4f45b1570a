package mcpserver

import "testing"

// Schemas are resolved lazily on a tool's first call, so a schema that
// cannot resolve would only show up in production: resolve them all here.
func TestEveryInputSchemaResolves(t *testing.T) {
	for _, tool := range Registry() {
		s, err := tool.InputSchema()
		if err != nil {
			t.Errorf("%s: %v", tool.Name, err)
			continue
		}
		if _, err := s.Resolve(nil); err != nil {
			t.Errorf("%s: schema does not resolve: %v", tool.Name, err)
		}
	}
}
