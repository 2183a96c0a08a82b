package restmpl

import (
	"strings"

	"github.com/zklockkit/zklockkit/zklock"
)

// WriteValue writes a placeholder's value into a resource name: "%" as
// "%25", "/" as "%2F", every other byte as it is.
func WriteValue(b *strings.Builder, v string) {
	start := 0
	for i := 0; i < len(v); i++ {
		var esc string
		switch v[i] {
		case '%':
			esc = "%25"
		case '/':
			esc = "%2F"
		default:
			continue
		}
		b.WriteString(v[start:i])
		b.WriteString(esc)
		start = i + 1
	}
	b.WriteString(v[start:])
}

// Value returns v as it goes into a resource name (see WriteValue).
func Value(v string) string {
	if !strings.ContainsAny(v, "%/") {
		return v
	}
	var b strings.Builder
	b.Grow(len(v) + 8)
	WriteValue(&b, v)
	return b.String()
}

// EmptyValue is the error for a placeholder whose value is empty: a
// *zklock.ResourceError naming the template and the placeholder.
func EmptyValue(template, placeholder string) error {
	return &zklock.ResourceError{Resource: template, Reason: "empty value for " + placeholder}
}
