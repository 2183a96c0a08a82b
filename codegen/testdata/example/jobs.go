// Package jobs is the package of codegen's Example.
package jobs

import "context"

// Run runs the job called name.
//
//zklock:resource=jobs/{name} wait=30s
func Run(ctx context.Context, name string) error { return nil }
