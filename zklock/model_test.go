package zklock_test

import (
	"flag"
	"fmt"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// TestIntegration_Model is the model-based test of every lock recipe
// (issue 18, item 6). A seeded generator makes a sequence of steps from
// three clients (each acquire on a goroutine of its own): acquire, Try,
// MaxWait, a context deadline, cancel, release (also twice, and after a
// loss), downgrade, AcquireAll over overlapping sets, re-entry under a
// lease's context (whole and partial), an operator deleting a holder's or
// a waiter's node, a session expiring, a semaphore limit mismatch, Try
// with MaxWait; in exclusive, read, write and semaphore modes (limit 1, 2
// or 3 by seed) on five resources. Every sequence ends by cancelling every
// waiter and releasing every lease.
//
// The same sequence runs on a MemoryLocker and on the shared ZooKeeper
// server (real clients on real sessions; the operator is a raw
// connection; a session is ended with closeSession from a connection of
// the test's, see model_session_test.go). After each step the runner
// waits until the system is where the reference model (model_ref_test.go)
// says it must be, each change within its bound, then watches it stay
// there for a moment. It checks who holds, who waits, in which order
// (the model learns the order of nodes made at once from their sequence
// numbers), every answer and error, every loss and its reason, each
// lease's parts and fencing tokens, that no two live leases conflict by the
// recipe's rule at any look, and at the end that no lock node is left and
// no goroutine leaked.
//
// Bounds: a waiter the rule lets hold holds within modelHandoff (2s; the
// session timeout is 4s), a lost lease is told within it, a try answers
// within modelTryBound (1s), MaxWait and deadlines end within their wait
// plus modelHandoff, and what follows a session expiry within
// modelExpiry. Hand-off, try and loss times are logged (median and max).
//
// Runs:
//
//	go test ./zklock -run TestIntegration_Model
//	    3 sequences of 60 steps, seeds from the clock (printed); make test
//	ZKLOCK_MODEL=long go test ./zklock -run TestIntegration_Model -timeout 60m
//	    the release run: 20 sequences of 250 steps
//	go test ./zklock -run TestIntegration_Model -zklock.model.seed=N
//	    (or ZKLOCK_MODEL_SEED=N) replays the sequence of seed N
//	-zklock.model.steps=N (or ZKLOCK_MODEL_STEPS=N) sets the length
//
// A failure prints the seed, the numbered steps with what the system did,
// the model's state and the observed state.
func TestIntegration_Model(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	cfg := modelRunConfig(t)
	zkStats, memStats := &modelStats{}, &modelStats{}
	start := time.Now()
	for _, seed := range cfg.seeds {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			setup, steps := generate(seed, cfg.steps)
			t.Run("memory", func(t *testing.T) {
				newRunner(t, seed, newMemSystem(setup), setup, steps, memStats).run()
			})
			t.Run("zookeeper", func(t *testing.T) {
				newRunner(t, seed, newZKSystem(t, setup), setup, steps, zkStats).run()
			})
		})
	}
	t.Logf("%d sequences in %v", len(cfg.seeds), time.Since(start).Round(time.Millisecond))
	t.Logf("memory: %s", memStats)
	t.Logf("zookeeper: %s", zkStats)
}

// Bounds of the model-based test (see TestIntegration_Model).
const (
	modelHandoff     = 2 * time.Second
	modelTryBound    = time.Second
	modelTryGiveUp   = 900 * time.Millisecond // a try's bound on ZooKeeper (min(4s/3, 1s)), less a margin
	modelExpiry      = testSessionTimeout
	modelWaitLimit   = 200 * time.Millisecond // MaxWait and deadlines of the steps
	modelStepLimit   = 30 * time.Second
	modelQuietZK     = 50 * time.Millisecond
	modelQuietMemory = 5 * time.Millisecond
	// An acquire of one busy resource reads a diverged server's listings
	// one time in modelDivergeOneIn (see startDiverged); once it has
	// reported one, its client's listings stay diverged for
	// modelDivergeLinger more.
	modelDivergeOneIn  = 4
	modelDivergeLinger = 200 * time.Millisecond
)

var (
	modelSeedFlag  = flag.Uint64("zklock.model.seed", 0, "replay the model-based test's sequence of this seed (also ZKLOCK_MODEL_SEED)")
	modelStepsFlag = flag.Int("zklock.model.steps", 0, "steps per sequence of the model-based test (also ZKLOCK_MODEL_STEPS)")
)

type modelConfig struct {
	seeds []uint64
	steps int
}

func modelRunConfig(t *testing.T) modelConfig {
	cfg := modelConfig{steps: 60}
	n := 3
	if os.Getenv("ZKLOCK_MODEL") == "long" {
		cfg.steps, n = 250, 20
	}
	if v := envInt(t, "ZKLOCK_MODEL_STEPS"); v > 0 {
		cfg.steps = v
	}
	if *modelStepsFlag > 0 {
		cfg.steps = *modelStepsFlag
	}
	seed := *modelSeedFlag
	if seed == 0 {
		seed = uint64(envInt(t, "ZKLOCK_MODEL_SEED"))
	}
	if seed != 0 {
		cfg.seeds = []uint64{seed}
		return cfg
	}
	base := uint64(time.Now().UnixNano()/1000) % 1_000_000_000 * 3
	for i := range n {
		cfg.seeds = append(cfg.seeds, base+uint64(i)) // consecutive: limits 1, 2, 3
	}
	t.Logf("seeds %v, %d steps each", cfg.seeds, cfg.steps)
	return cfg
}

func envInt(t *testing.T, name string) int {
	v := os.Getenv(name)
	if v == "" {
		return 0
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		t.Fatalf("%s=%q: %v", name, v, err)
	}
	return n
}

// modelStats are the figures of a run.
type modelStats struct {
	steps, acquires, skipped atomic.Int64
	drops                    atomic.Int64 // connections dropped (stDrop)
	divergedSteps            atomic.Int64 // acquires that read diverged listings (startDiverged)
	divergedReports          atomic.Int64 // the diverged listings they reported
	triedOut                 atomic.Int64 // tries that gave up on a slow ZooKeeper (ErrUnavailable)
	mu                       sync.Mutex
	handoffs, tries, losses  []time.Duration
}

func (s *modelStats) handoff(d time.Duration) { s.add(&s.handoffs, d) }
func (s *modelStats) try(d time.Duration)     { s.add(&s.tries, d) }
func (s *modelStats) lost(d time.Duration)    { s.add(&s.losses, d) }

func (s *modelStats) add(to *[]time.Duration, d time.Duration) {
	s.mu.Lock()
	*to = append(*to, d)
	s.mu.Unlock()
}

func (s *modelStats) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return fmt.Sprintf("%d steps (%d skipped: did not apply to the state reached; %d connection drops; %d acquires on diverged listings, %d reported), %d acquires; "+
		"hand-off %s; try answer %s (%d gave up on a slow server); loss told %s",
		s.steps.Load(), s.skipped.Load(), s.drops.Load(), s.divergedSteps.Load(), s.divergedReports.Load(), s.acquires.Load(),
		spread(s.handoffs), spread(s.tries), s.triedOut.Load(), spread(s.losses))
}

// spread returns the median and the maximum of ds.
func spread(ds []time.Duration) string {
	if len(ds) == 0 {
		return "none"
	}
	ds = slices.Clone(ds)
	slices.Sort(ds)
	return fmt.Sprintf("p50 %v max %v (%d)", ds[len(ds)/2].Round(10*time.Microsecond), ds[len(ds)-1].Round(10*time.Microsecond), len(ds))
}
