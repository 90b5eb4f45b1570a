// Package rollback holds the advisory undo guidance a mutation returns. It
// sits below both the mutation gateway, which stores the guidance in the
// audit trail, and the envelope, which reports it to the caller, so neither
// has to import the other.
package rollback

// Guidance is advisory undo guidance for a mutation: whether it can be
// reversed and, if so, which tool with which parameters reverses it.
type Guidance struct {
	Reversible bool           `json:"reversible"`
	UndoTool   string         `json:"undo_tool,omitempty"`
	UndoParams map[string]any `json:"undo_params,omitempty"`
	Note       string         `json:"note,omitempty"`
}
