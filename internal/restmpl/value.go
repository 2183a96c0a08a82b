package restmpl

import (
	"errors"
	"fmt"
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

// badValue is the error for a placeholder whose value zklock refuses in a
// resource name: a *zklock.ResourceError naming the template and the
// placeholder, with zklock's reason (err, a *zklock.ResourceError about
// the value). The value itself is left out: it may be a secret (a cookie,
// a header) or hostile.
func badValue(template, placeholder string, err error) error {
	reason := "refused"
	if re, ok := errors.AsType[*zklock.ResourceError](err); ok {
		reason = re.Reason
	}
	return &zklock.ResourceError{Resource: template, Reason: "value of " + placeholder + ": " + reason}
}

// tooLong is the error for a template whose values, escaped and filled
// in, make a name longer than zklock.MaxResourceLen bytes.
func tooLong(template string) error {
	return &zklock.ResourceError{Resource: template,
		Reason: fmt.Sprintf("longer than %d bytes with its values filled in", zklock.MaxResourceLen)}
}

// checkValue checks the value v of placeholder p of template src.
func checkValue(src string, p Placeholder, v string) error {
	if v == "" {
		return EmptyValue(src, p.String())
	}
	// A value is part of a name: it may start with "/", which only a
	// whole name may not (the template's own text decides that).
	w := v
	if w[0] == '/' {
		w = "_" + w[1:]
	}
	if err := zklock.ValidateResource(w); err != nil {
		return badValue(src, p.String(), err)
	}
	return nil
}
