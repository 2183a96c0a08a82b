// Package ctxsleep is a sleep that a context ends early: what every
// retry loop and pacer of the module waits with.
package ctxsleep

import (
	"context"
	"time"
)

// Sleep waits for d, or until ctx ends, whichever comes first. It returns
// nil after d and ctx.Err() when the context ended the wait; a d of zero
// or less returns at once, with ctx.Err().
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
