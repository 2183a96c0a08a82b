package bench

import (
	"context"
	"sync"
	"time"
)

// Phase is the half of a hold-all run that HoldAll clocks.
type Phase int

// The phases of HoldAll.
const (
	// PhaseAcquire clocks n goroutines acquiring their locks, all at
	// once, until every one holds.
	PhaseAcquire Phase = iota
	// PhaseRelease clocks the same n goroutines, every one holding,
	// releasing their locks all at once, until every release returned.
	PhaseRelease
)

// HoldAll runs n goroutines on one session of side, each with a resource
// of its own, batches times over (at least once): all of them acquire at
// once, and once every one holds, all of them release at once. The queue
// znodes exist beforehand (warm, unlike Fresh). Only phase is clocked;
// the other half runs outside the clock. Latencies are each goroutine's
// acquire (PhaseAcquire) or release (PhaseRelease), timed from the signal
// that starts the phase. A service that takes a lock per request, at its
// peak, then finishes the requests together, does both.
func HoldAll(ctx context.Context, h *Harness, side Side, n, batches int, phase Phase) (Sample, error) {
	res := resources("h", n)
	_, s, end, err := h.sessionRun(ctx, side, "hold", res...)
	if err != nil {
		return Sample{}, err
	}
	defer end()
	var total measure
	all := make([]time.Duration, 0, n*max(batches, 1))
	for range max(batches, 1) {
		m, lat, err := holdBatch(ctx, h, s, res, phase)
		if err != nil {
			return Sample{}, err
		}
		total.add(m)
		all = append(all, lat...)
	}
	return total.sample(len(all), all), nil
}

// holdBatch runs one batch of HoldAll: one goroutine per resource, started
// before either phase, so that starting them is in neither. The first
// failure closes the session, which ends every acquire still waiting.
func holdBatch(ctx context.Context, h *Harness, s session, res []string, phase Phase) (measure, []time.Duration, error) {
	n := len(res)
	lat := make([]time.Duration, n)
	errs := make([]error, n)
	acquire, release := make(chan struct{}), make(chan struct{})
	var held, done sync.WaitGroup
	var once sync.Once
	fail := func(i int, err error) {
		errs[i] = err
		once.Do(s.close)
	}
	held.Add(n)
	done.Add(n)
	for i := range n {
		go func() {
			defer done.Done()
			<-acquire
			t := time.Now()
			unlock, err := s.lock(ctx, res[i])
			if phase == PhaseAcquire {
				lat[i] = time.Since(t)
			}
			if err != nil {
				fail(i, err)
			}
			held.Done()
			if err != nil {
				return
			}
			<-release
			t = time.Now()
			if err := unlock(ctx); err != nil {
				fail(i, err)
			}
			if phase == PhaseRelease {
				lat[i] = time.Since(t)
			}
		}()
	}

	var m measure
	var err error
	if phase == PhaseAcquire {
		m, err = clocked(ctx, h, func() { close(acquire); held.Wait() })
		if err != nil {
			close(acquire)
		}
		held.Wait()
		close(release)
	} else {
		close(acquire)
		held.Wait()
		if err = firstError(errs); err == nil {
			m, err = clocked(ctx, h, func() { close(release); done.Wait() })
		}
		if err != nil {
			close(release)
		}
	}
	done.Wait()
	if err == nil {
		err = firstError(errs)
	}
	if err != nil {
		return measure{}, nil, err
	}
	return m, lat, nil
}

// clocked runs f in a span of its own (Harness.begin). When the span
// cannot begin, f does not run.
func clocked(ctx context.Context, h *Harness, f func()) (measure, error) {
	sp, err := h.begin(ctx)
	if err != nil {
		return measure{}, err
	}
	f()
	return sp.end(), nil
}

// firstError returns the first error of errs that is not one of a session
// closed under its caller (which the first failure causes), or else the
// first one.
func firstError(errs []error) error {
	var first error
	for _, err := range errs {
		if err == nil {
			continue
		}
		if !errClosed(err) {
			return err
		}
		if first == nil {
			first = err
		}
	}
	return first
}
