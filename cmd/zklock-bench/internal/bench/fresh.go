package bench

import (
	"context"
	"fmt"
)

// Fresh is Distinct on resources never locked before: n goroutines on one
// session of side each acquire and release their own resource, all at
// once, batches times over, every batch on new names, so every acquire
// finds no queue znode and makes it (its parents exist: a service's
// first lock of an account, say). Latencies are each goroutine's
// acquire+release; the clock runs only during the batches.
func Fresh(ctx context.Context, h *Harness, side Side, n, batches int) (Sample, error) {
	_, s, end, err := h.sessionRun(ctx, side, "fresh")
	if err != nil {
		return Sample{}, err
	}
	defer end()
	return lockBatches(ctx, h, s, n, batches, func(b int) []string { return resources(fmt.Sprintf("f%d", b), n) })
}
