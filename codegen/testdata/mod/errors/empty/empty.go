// Package empty has no directive.
package empty

import "context"

// F has a comment that mentions zklock, in prose:
//
// zklock: the caller holds the lock.
func F(ctx context.Context) error { return nil }
