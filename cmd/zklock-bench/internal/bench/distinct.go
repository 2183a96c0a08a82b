package bench

import (
	"context"
	"fmt"
	"time"
)

// Distinct runs n goroutines on one session of side, each acquiring and
// releasing its own resource, all at once, batches times over (one batch
// lasts about a tenth of a second, too short to time alone on a noisy
// machine). The queue znodes exist beforehand. Latencies are each
// goroutine's acquire+release; the clock runs only during the batches.
func Distinct(ctx context.Context, h *Harness, side Side, n, batches int) (Sample, error) {
	res := resources("d", n)
	_, s, end, err := h.sessionRun(ctx, side, "distinct", res...)
	if err != nil {
		return Sample{}, err
	}
	defer end()
	return lockBatches(ctx, h, s, n, batches, func(int) []string { return res })
}

// lockBatches has n goroutines on session s acquire and release one
// resource each of names(b), all at once, in each batch b of batches (at
// least one). The clock runs only during the batches.
func lockBatches(ctx context.Context, h *Harness, s session, n, batches int, names func(b int) []string) (Sample, error) {
	var total measure
	all := make([]time.Duration, 0, n*max(batches, 1))
	for b := range max(batches, 1) {
		res := names(b)
		lat := make([]time.Duration, n)
		sp, err := h.begin(ctx)
		if err != nil {
			return Sample{}, err
		}
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
		total.add(sp.end())
		if err != nil {
			return Sample{}, err
		}
		all = append(all, lat...)
	}
	return total.sample(len(all), all), nil
}

// resources returns n resource names prefix-00000, prefix-00001, ...
func resources(prefix string, n int) []string {
	rs := make([]string, n)
	for i := range rs {
		rs[i] = fmt.Sprintf("%s-%05d", prefix, i)
	}
	return rs
}
