package bench

import (
	"context"
	"fmt"
	"time"
)

// Fresh is Distinct on resources never locked before: n goroutines on one
// session of side each acquire and release their own resource, all at
// once, batches times over, every batch on new names, so every acquire
// finds no queue znode and makes it (its parents exist: a service's
// first lock of an account, say). Latencies are each goroutine's
// acquire+release; the clock runs only during the batches.
func Fresh(ctx context.Context, h *Harness, side Side, n, batches int) (Sample, error) {
	h.stopTimer()
	defer h.startTimer()
	root := h.newRoot("fresh")
	defer h.cleanup(root)
	if err := mkdirs(h.admin, root, false); err != nil {
		return Sample{}, err
	}
	s, err := side.open(ctx, h, root)
	if err != nil {
		return Sample{}, err
	}
	defer s.close()
	all := Sample{Latencies: make([]time.Duration, 0, n*max(batches, 1))}
	for b := range max(batches, 1) {
		res := resources(fmt.Sprintf("f%d", b), n)
		lat := make([]time.Duration, n)
		h.startTimer()
		start := time.Now()
		err = group(ctx, n, s.close, func(ctx context.Context, i int) error {
			t := time.Now()
			unlock, err := s.lock(ctx, res[i])
			if err != nil {
				return err
			}
			err = unlock(ctx)
			lat[i] = time.Since(t)
			return err
		})
		all.Elapsed += time.Since(start)
		h.stopTimer()
		if err != nil {
			return Sample{}, err
		}
		all.Ops += n
		all.Latencies = append(all.Latencies, lat...)
	}
	return all, nil
}
