//zklock:resource=on-package

// Package placement holds directives that are not on a function or method.
package placement

import "context"

// T is a type.
//
//zklock:resource=on-type
type T struct {
	//zklock:resource=on-field
	F int
}

// V is a variable.
//
//zklock:resource=on-var
var V int

// C is a constant.
//
//zklock:resource=on-const
const C = 1

//zklock:resource=floating

// F has a directive in its body.
func F(ctx context.Context) error {
	//zklock:resource=in-body
	return nil
}

//zklock:resource=detached

func G(ctx context.Context) error { return nil }

// I is an interface whose method cannot be marked.
type I interface {
	//zklock:resource=on-interface-method
	M(ctx context.Context) error
}
