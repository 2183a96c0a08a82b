// Package nearmiss has one valid directive and comments that look like
// directives but are not. Each is an error: without one, the method it
// marks would run unlocked. The file is gofmt'd, as committed code is:
// gofmt turns "//zklock: resource=a" and "//ZKLOCK:resource=a" into the
// "// zklock: ..." and "// ZKLOCK:..." forms below.
package nearmiss

import "context"

// Accounts has methods marked with valid and malformed directives.
type Accounts struct{}

// Valid is locked.
//
//zklock:resource=valid
func (a *Accounts) Valid(ctx context.Context) error { return nil }

// zklock:resource=space-after-slashes
func (a *Accounts) SpaceAfterSlashes(ctx context.Context) error { return nil }

// zklock: resource=space-after-colon wait=5s
func (a *Accounts) SpaceAfterColon(ctx context.Context) error { return nil }

// ZKLOCK:resource=upper-case
func (a *Accounts) UpperCase(ctx context.Context) error { return nil }

// Zklock:resource=mixed-case
func (a *Accounts) MixedCase(ctx context.Context) error { return nil }

// zklock :resource=space-before-colon
func (a *Accounts) SpaceBeforeColon(ctx context.Context) error { return nil }

// zklock:Resource=upper-case-option
func (a *Accounts) UpperCaseOption(ctx context.Context) error { return nil }

// zklock:"resource=quoted name"
func (a *Accounts) QuotedOption(ctx context.Context) error { return nil }

// zklock:try
func (a *Accounts) Try(ctx context.Context) error { return nil }

// zklock:
func (a *Accounts) Empty(ctx context.Context) error { return nil }

/*zklock:resource=block*/
func (a *Accounts) Block(ctx context.Context) error { return nil }

/*
Block is documented in a block comment.

	zklock:resource=in-a-block
*/
func (a *Accounts) BlockLines(ctx context.Context) error { return nil }

/*
 * StarBlock has a decorated block comment.
 * zklock:resource=in-a-star-block
 */
func (a *Accounts) StarBlock(ctx context.Context) error { return nil }

// Trailing has a malformed directive after its declaration.
func (a *Accounts) Trailing(ctx context.Context) error { return nil } // zklock:resource=trailing

// Body has a malformed directive in its body.
func (a *Accounts) Body(ctx context.Context) error {
	// zklock:resource=in-body
	return nil
}

// Type is a type with a malformed directive.
//
// zklock:resource=on-type
type Type struct {
	// zklock:resource=on-field
	F int
}

// Function is a package-level function.
//
// zklock: resource=on-function
func Function(ctx context.Context) error { return nil }

// Prose mentions zklock in ways that are not directives, and is not
// reported:
//
// zklock: the caller holds the lock.
// zklock: resource names are escaped.
// The directive is written //zklock:resource=NAME.
// //zklock:resource=commented-out
/* //zklock:resource=commented-out-in-a-block */
func Prose(ctx context.Context) error { return nil }
