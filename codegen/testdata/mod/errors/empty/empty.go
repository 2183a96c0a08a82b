// Package empty has no directive.
package empty

import "context"

// zklock:resource=not-a-directive (a space after the slashes)
func F(ctx context.Context) error { return nil }
