package bench

import (
	"context"
	"fmt"
)

// Scenario is one comparison of the suite.
type Scenario struct {
	// Name identifies the scenario in tables, JSON and Config.Only.
	Name string
	// Unit says what an operation is ("cycles/s", "hand-offs/s", ...).
	Unit string
	// Target is the least ratio of zklock's rate to zk.Lock's that passes.
	Target float64
	// RawTarget, when not zero, is the least ratio of zklock's rate to the
	// raw serial create+delete pair rate that passes.
	RawTarget float64
	// CPUTarget, when not zero, is the greatest ratio of zklock's CPU time
	// per operation to zk.Lock's that passes (the median of the rounds'
	// own ratios).
	CPUTarget float64
	// Wire marks a scenario that measures the client's connection rather
	// than a lock (lone-request): it has no ratio to the raw pair rate.
	Wire bool
	// Run runs the scenario once for one side.
	Run func(ctx context.Context, h *Harness, side Side) (Sample, error)
}

// Scenarios returns the suite's scenarios for the given sizes, in the
// order they run.
func Scenarios(sz Sizes) []Scenario {
	ss := []Scenario{
		{Name: "uncontended", Unit: "cycles/s", Target: 0.95, RawTarget: 0.9, CPUTarget: 1.0,
			Run: func(ctx context.Context, h *Harness, side Side) (Sample, error) {
				return Uncontended(ctx, h, side, sz.Uncontended)
			}},
		{Name: "ping-pong", Unit: "hand-offs/s", Target: 1.3, CPUTarget: 1.0,
			Run: func(ctx context.Context, h *Harness, side Side) (Sample, error) {
				return PingPong(ctx, h, side, sz.PingPong)
			}},
	}
	for _, n := range sz.Contenders {
		ss = append(ss, Scenario{Name: fmt.Sprintf("contenders-%d", n), Unit: "acquires/s", Target: 1.0, CPUTarget: 1.0,
			Run: func(ctx context.Context, h *Harness, side Side) (Sample, error) {
				return Contenders(ctx, h, side, n, sz.ContenderOps)
			}})
	}
	return append(ss,
		Scenario{Name: fmt.Sprintf("queue-%d", sz.QueueDepth), Unit: "acquires/s", Target: 1.0,
			Run: func(ctx context.Context, h *Harness, side Side) (Sample, error) {
				return Queue(ctx, h, side, sz.QueueDepth)
			}},
		Scenario{Name: fmt.Sprintf("distinct-%d", sz.DistinctLocks), Unit: "locks/s", Target: 1.0,
			Run: func(ctx context.Context, h *Harness, side Side) (Sample, error) {
				return Distinct(ctx, h, side, sz.DistinctLocks, sz.DistinctRuns)
			}},
		Scenario{Name: fmt.Sprintf("fresh-%d", sz.DistinctLocks), Unit: "locks/s", Target: 1.0,
			Run: func(ctx context.Context, h *Harness, side Side) (Sample, error) {
				return Fresh(ctx, h, side, sz.DistinctLocks, sz.DistinctRuns)
			}},
		// Many locks warm, as issue 31 measured them: each half on its own.
		Scenario{Name: fmt.Sprintf("acquire-all-%d", sz.DistinctLocks), Unit: "acquires/s", Target: 1.0,
			Run: func(ctx context.Context, h *Harness, side Side) (Sample, error) {
				return HoldAll(ctx, h, side, sz.DistinctLocks, sz.DistinctRuns, PhaseAcquire)
			}},
		Scenario{Name: fmt.Sprintf("release-all-%d", sz.DistinctLocks), Unit: "releases/s", Target: 1.0,
			Run: func(ctx context.Context, h *Harness, side Side) (Sample, error) {
				return HoldAll(ctx, h, side, sz.DistinctLocks, sz.DistinctRuns, PhaseRelease)
			}},
		// A lone request is not delayed by the client's connection.
		Scenario{Name: "lone-request", Unit: "requests/s", Target: 0.95, Wire: true,
			Run: func(ctx context.Context, h *Harness, side Side) (Sample, error) {
				return LoneRequest(ctx, h, side, sz.LoneRequests)
			}},
	)
}
