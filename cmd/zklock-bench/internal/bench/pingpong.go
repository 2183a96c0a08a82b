package bench

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// PingPong runs two sessions of side that take one lock in turn until n
// hand-offs have happened. A holder keeps the lock until the other session
// is waiting for it (its node queued and its watch set, as the servers'
// data watch count shows; where the servers do not answer wchs, until its node
// exists and 2ms more), then releases and asks again at once, so every
// acquire but the first waits for the other's release.
//
// Latencies are hand-offs: from the holder's call to release until the
// other side holds. Elapsed is their sum, so Rate is the rate at which the
// lock changes hands when a waiter is ready; the harness's hold time is in
// Wall only. CPU is the process's CPU time during the hand-offs alone: the
// harness's asking the servers whether the other side waits, between
// them, is left out.
func PingPong(ctx context.Context, h *Harness, side Side, n int) (Sample, error) {
	h.stopTimer()
	defer h.startTimer()
	root := h.newRoot("pingpong")
	defer h.cleanup(root)
	const res = "pp"
	if err := side.prepare(h, root, []string{res}); err != nil {
		return Sample{}, err
	}
	queue := side.queuePath(root, res)
	var sessions [2]session
	for i := range sessions {
		s, err := side.open(ctx, h, root)
		if err != nil {
			return Sample{}, err
		}
		defer s.close()
		sessions[i] = s
	}
	base := h.baseDataWatches()
	waiting := func(ctx context.Context) error {
		if base >= 0 {
			ok, err := h.waitWatches(ctx, base+int64(side.holderWatches+side.watches))
			if ok || err != nil {
				return err
			}
		}
		if err := h.waitQueued(ctx, queue, 2); err != nil {
			return err
		}
		return sleep(ctx, 2*time.Millisecond)
	}

	var (
		releasedAt  atomic.Int64 // UnixNano of the last release call; 0: none pending
		releasedCPU atomic.Int64 // the process's CPU time then, stored before releasedAt
		handoffs    atomic.Int64
		cpu         time.Duration // the process's CPU time during the hand-offs
		done        atomic.Bool
		mu          sync.Mutex
		lat         = make([]time.Duration, 0, n+1)
		first, end  time.Time
	)
	play := func(ctx context.Context, s session) error {
		for {
			unlock, err := s.lock(ctx, res)
			if err != nil {
				return err
			}
			now, used := time.Now(), processCPU()
			if r := releasedAt.Swap(0); r != 0 {
				mu.Lock()
				if len(lat) < n { // the other side may hand off once more before it sees done
					lat = append(lat, now.Sub(time.Unix(0, r)))
					cpu += used - time.Duration(releasedCPU.Load())
				}
				mu.Unlock()
				if handoffs.Add(1) == int64(n) {
					end = now
					done.Store(true)
				}
			} else {
				mu.Lock()
				if first.IsZero() {
					first = now
				}
				mu.Unlock()
			}
			if !done.Load() {
				if err := waiting(ctx); err != nil {
					_ = unlock(ctx)
					return err
				}
			}
			releasedCPU.Store(int64(processCPU()))
			releasedAt.Store(time.Now().UnixNano())
			if err := unlock(ctx); err != nil {
				return err
			}
			if done.Load() {
				return nil
			}
		}
	}
	if err := quiet(ctx); err != nil {
		return Sample{}, err
	}
	h.startTimer()
	err := group(ctx, len(sessions), func() { closeAll(sessions[:]) }, func(ctx context.Context, i int) error { return play(ctx, sessions[i]) })
	h.stopTimer()
	if err != nil {
		return Sample{}, err
	}
	var sum time.Duration
	for _, d := range lat {
		sum += d
	}
	return Sample{Ops: n, Elapsed: sum, Wall: end.Sub(first), Latencies: lat, CPU: cpu}, nil
}
