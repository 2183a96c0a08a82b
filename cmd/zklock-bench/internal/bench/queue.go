package bench

import (
	"context"
	"slices"
	"time"
)

// Queue measures a deep queue draining: a holder session takes one lock,
// depth goroutines on one other session queue behind it (the run waits
// until all their nodes exist and their watches are set), then the holder
// releases and the clock runs until every waiter has held and released in
// turn. Latencies are the gaps between consecutive acquisitions.
func Queue(ctx context.Context, h *Harness, side Side, depth int) (Sample, error) {
	h.stopTimer()
	defer h.startTimer()
	root := h.newRoot("queue")
	defer h.cleanup(root)
	const res = "q"
	if err := side.prepare(h, root, []string{res}); err != nil {
		return Sample{}, err
	}
	queue := side.queuePath(root, res)
	holder, err := side.open(ctx, h, root)
	if err != nil {
		return Sample{}, err
	}
	defer holder.close()
	waiters, err := side.open(ctx, h, root)
	if err != nil {
		return Sample{}, err
	}
	defer waiters.close()
	unlockHolder, err := holder.lock(ctx, res)
	if err != nil {
		return Sample{}, err
	}
	base := h.baseWatches()
	acquired := make([]time.Time, depth)
	finished := make([]time.Time, depth)
	done := make(chan error, 1)
	ss := []session{holder, waiters}
	go func() {
		done <- group(ctx, depth, func() { closeAll(ss) }, func(ctx context.Context, i int) error {
			unlock, err := waiters.lock(ctx, res)
			if err != nil {
				return err
			}
			acquired[i] = time.Now()
			err = unlock(ctx)
			finished[i] = time.Now()
			return err
		})
	}()
	fail := func(err error) (Sample, error) {
		closeAll(ss)
		<-done
		return Sample{}, err
	}
	if err := h.waitQueued(ctx, queue, depth+1); err != nil {
		return fail(err)
	}
	if err := h.settle(ctx, base, int64(depth*side.queueWatches)); err != nil {
		return fail(err)
	}
	sp, err := h.begin(ctx)
	if err != nil {
		return fail(err)
	}
	if err := unlockHolder(ctx); err != nil {
		return fail(err)
	}
	err = <-done
	m := sp.end()
	if err != nil {
		return Sample{}, err
	}
	// The clock stops at the last release, not when the run noticed it.
	m.elapsed = slices.MaxFunc(finished, time.Time.Compare).Sub(sp.start)
	slices.SortFunc(acquired, time.Time.Compare)
	lat := make([]time.Duration, depth)
	prev := sp.start
	for i, t := range acquired {
		lat[i] = t.Sub(prev)
		prev = t
	}
	return m.sample(depth, lat), nil
}
