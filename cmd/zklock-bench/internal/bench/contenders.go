package bench

import (
	"context"
	"time"
)

// Contenders runs sessions sessions of side, each looping acquire/release
// on one lock, ops acquisitions in all (shared evenly, rounded up). The
// clock runs from the common start until the last release. Latencies are
// acquire waits.
func Contenders(ctx context.Context, h *Harness, side Side, sessions, ops int) (Sample, error) {
	h.stopTimer()
	defer h.startTimer()
	root := h.newRoot("contenders")
	defer h.cleanup(root)
	const res = "c"
	if err := side.prepare(h, root, []string{res}); err != nil {
		return Sample{}, err
	}
	ss := make([]session, 0, sessions)
	defer func() { closeAll(ss) }()
	for range sessions {
		s, err := side.open(ctx, h, root)
		if err != nil {
			return Sample{}, err
		}
		ss = append(ss, s)
	}
	each := (ops + sessions - 1) / sessions
	lat := make([][]time.Duration, sessions)
	sp, err := h.begin(ctx)
	if err != nil {
		return Sample{}, err
	}
	err = group(ctx, sessions, func() { closeAll(ss) }, func(ctx context.Context, i int) error {
		l := make([]time.Duration, 0, each)
		for range each {
			t := time.Now()
			unlock, err := ss[i].lock(ctx, res)
			if err != nil {
				return err
			}
			l = append(l, time.Since(t))
			if err := unlock(ctx); err != nil {
				return err
			}
		}
		lat[i] = l
		return nil
	})
	m := sp.end()
	if err != nil {
		return Sample{}, err
	}
	var all []time.Duration
	for _, l := range lat {
		all = append(all, l...)
	}
	return m.sample(len(all), all), nil
}
