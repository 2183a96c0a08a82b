// Package other declares types that other test packages use in
// signatures and placeholders.
package other

// Thing has an exported and an unexported field.
type Thing struct {
	Name   string
	secret string
}

// Secret returns the unexported field.
func (t Thing) Secret() string { return t.secret }
