package zklock_test

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zklockkit/zklockkit/zklock"
)

// runner runs one sequence of steps on one system and checks every step
// against the model: issue the step, then wait until the system has done
// what the model says it must (each thing within its bound), then watch it
// stay quiet for a moment (nothing the model does not expect may happen).

// realOp is what the system did with one acquire.
type realOp struct {
	id     int
	step   int
	cancel context.CancelFunc
	issued time.Time
	mu     sync.Mutex
	done   bool
	lease  *zklock.Lease
	err    error
	at     time.Time
	ended  time.Time // when the lease's Done closed
	noted  bool      // its answer is in the trace
	// lossNoted: the time its lease took to learn of its loss is counted
	lossNoted bool
}

type opSnap struct {
	done   bool
	lease  *zklock.Lease
	err    error
	at     time.Time
	ended  time.Time
	issued time.Time
}

func (o *realOp) snap() opSnap {
	o.mu.Lock()
	defer o.mu.Unlock()
	return opSnap{o.done, o.lease, o.err, o.at, o.ended, o.issued}
}

type observation struct {
	at    time.Time
	nodes map[string][]realNode
}

type runner struct {
	t      *testing.T
	seed   uint64
	sys    modelSystem
	setup  modelSetup
	steps  []step
	m      *model
	ops    map[int]*realOp
	byPath map[string]int // nodes made by Downgrade (the client's label): their op
	trace  []string
	stats  *modelStats
	wg     sync.WaitGroup
	last   observation
	cur    int
}

func newRunner(t *testing.T, seed uint64, sys modelSystem, setup modelSetup, steps []step, stats *modelStats) *runner {
	r := &runner{t: t, seed: seed, sys: sys, setup: setup, steps: steps, m: newModelFor(setup),
		ops: map[int]*realOp{}, byPath: map[string]int{}, stats: stats}
	t.Cleanup(r.cleanup)
	return r
}

// cleanup ends whatever a failed run left waiting or held.
func (r *runner) cleanup() {
	for _, o := range r.ops {
		if o.cancel != nil {
			o.cancel()
		}
	}
	for _, o := range r.ops {
		if s := o.snap(); s.lease != nil {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			_ = s.lease.Release(ctx)
			cancel()
		}
	}
	r.sys.close()
	r.wg.Wait()
}

func (r *runner) run() {
	for i := 0; ; i++ {
		var s step
		switch {
		case i < len(r.steps):
			s = r.steps[i]
		case i == len(r.steps):
			r.note("     drain: cancel every waiter, release every lease")
			fallthrough
		default:
			var ok bool
			if s, ok = drainStep(r.m); !ok {
				r.finish()
				return
			}
		}
		r.cur = i
		prep := r.prepare(s)
		r.m.now = time.Now() // bounds run from the step's start
		want, ok := r.m.apply(s, i)
		if !ok {
			r.stats.skipped.Add(1)
			r.note("%3d  %s: does not apply here, skipped", i, s)
			continue
		}
		r.note("%3d  %s", i, s)
		r.issue(i, s, want, prep)
		r.settle()
		r.stats.steps.Add(1)
	}
}

// prepare finds what a step needs from the system before the model
// applies it: the path of the node an operator deletes, the nodes of a
// client whose session expires.
func (r *runner) prepare(s step) []string {
	var paths []string
	for res, nodes := range r.last.nodes {
		for _, n := range nodes {
			id := r.opOf(n)
			x := r.m.byID[id]
			if x == nil {
				continue
			}
			switch {
			case (s.kind == stDelete || s.kind == stDrop) && id == s.op && res == s.res[0]:
				if mn := x.nodes[res]; mn != nil && mn.known && mn.seq == n.seq {
					paths = append(paths, n.path)
				}
			case s.kind == stExpire && x.client == s.client:
				paths = append(paths, n.path)
			}
		}
	}
	return paths
}

func (r *runner) issue(i int, s step, want error, paths []string) {
	ctx, cancel := context.WithTimeout(context.Background(), modelHandoff)
	defer cancel()
	check := func(what string, err error) {
		r.note("       %s: %v", what, errText(err))
		if !errMatches(err, want) {
			r.fail("step %d: %s returned %v, the model says %v", i, what, errText(err), errText(want))
		}
	}
	switch s.kind {
	case stAcquire, stTry, stMaxWait, stDeadline, stMismatch, stTryMaxWait, stReenter:
		if s.diverge {
			r.startDiverged(i, s)
			break
		}
		r.start(i, s)
	case stCancel:
		r.ops[s.op].cancel()
	case stRelease:
		l := r.ops[s.op].snap().lease
		if l == nil {
			r.fail("step %d: op%d has no lease to release", i, s.op)
		}
		check("Release", l.Release(ctx))
	case stDowngrade:
		l := r.ops[s.op].snap().lease
		if l == nil {
			r.fail("step %d: op%d has no lease to downgrade", i, s.op)
		}
		d, err := l.Downgrade(ctx)
		check("Downgrade", err)
		if err == nil {
			now := time.Now()
			o := &realOp{id: s.newOp, step: i, issued: now, done: true, lease: d, at: now}
			r.ops[s.newOp] = o
			r.byPath[d.Path()] = s.newOp
			r.watchEnd(o, d)
		}
	case stDelete:
		if len(paths) != 1 {
			r.fail("step %d: op%d's node on %s is not in the last listing", i, s.op, s.res[0])
		}
		if err := r.sys.deleteNode(ctx, paths[0]); err != nil {
			r.fail("step %d: delete %s: %v", i, paths[0], err)
		}
	case stDrop:
		if len(paths) != 1 {
			r.fail("step %d: op%d's node on %s is not in the last listing", i, s.op, s.res[0])
		}
		if err := r.sys.drop(ctx, s.client, paths[0]); err != nil {
			r.fail("step %d: %v", i, err)
		}
		r.stats.drops.Add(1)
	case stExpire:
		ectx, cancel := context.WithTimeout(context.Background(), modelExpiry)
		defer cancel()
		if err := r.sys.expire(ectx, s.client, paths); err != nil {
			r.fail("step %d: %v", i, err)
		}
	}
}

// start runs an acquire on its own goroutine.
func (r *runner) start(i int, s step) {
	o := &realOp{id: s.newOp, step: i, issued: time.Now()}
	base, baseCancel := context.WithCancel(context.Background())
	ctx := base
	if s.kind == stReenter {
		ctx = r.ops[s.op].snap().lease.Context(base)
	}
	var cancel context.CancelFunc
	if s.kind == stDeadline {
		ctx, cancel = context.WithTimeout(ctx, s.wait)
	} else {
		ctx, cancel = context.WithCancel(ctx)
	}
	o.cancel = cancel
	opts := []zklock.AcquireOption{zklock.LeaseLabel(opLabel(s.newOp))}
	if s.mode == zklock.Semaphore {
		opts = append(opts, zklock.Limit(s.limit))
	} else {
		opts = append(opts, s.mode)
	}
	switch {
	case s.kind == stTry, s.kind == stReenter && s.try:
		opts = append(opts, zklock.Try())
	case s.kind == stMaxWait:
		opts = append(opts, zklock.MaxWait(s.wait))
	case s.kind == stTryMaxWait:
		opts = append(opts, zklock.Try(), zklock.MaxWait(modelWaitLimit))
	}
	r.ops[s.newOp] = o
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		l, err := r.sys.acquire(ctx, s.client, s.res, opts...)
		cancel()
		baseCancel()
		o.mu.Lock()
		o.done, o.lease, o.err, o.at = true, l, err, time.Now()
		o.mu.Unlock()
		if l != nil {
			r.watchEnd(o, l)
		}
	}()
}

// startDiverged runs acquire s while its client reads the listings of
// its queue as a diverged server would show them (issue 32 §3): until the
// acquire has reported such a listing (EventDiverged) and had time to
// list again, after a sync and from another server, which diverge too;
// or until it returned, or modelHandoff passed. Then the listings are
// sound again, and the model's bounds hold the acquire to the rule: it
// waits, and holds in its turn. A grant decided on a diverged listing
// fails the run at once, and so does an acquire that read one and
// reported none.
func (r *runner) startDiverged(i int, s step) {
	reported, stop := r.sys.diverge(s.client, s.res[0])
	r.start(i, s)
	if stop == nil {
		return // the system lists nothing: a plain acquire
	}
	o := r.ops[s.newOp]
	deadline := time.Now().Add(modelHandoff)
	for reported() == 0 && !o.snap().done && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if reported() > 0 {
		time.Sleep(modelDivergeLinger)
	}
	stop()
	n := reported()
	r.stats.divergedSteps.Add(1)
	r.stats.divergedReports.Add(int64(n))
	r.note("       op%d reported %d diverged listings", s.newOp, n)
	snap := o.snap()
	switch x := r.m.byID[s.newOp]; {
	case x == nil || x.status != opWaiting:
		// The rule lets it hold at once on this system's queue: there
		// was no wrong decision to make.
	case snap.done && snap.err == nil:
		r.fail("step %d: op%d holds %v, granted on a diverged server's listing; the model says it waits for %s",
			i, s.newOp, shortPaths(paths(snap.lease)), x.parts[x.part])
	case n == 0:
		r.fail("step %d: op%d was given a diverged server's listings for %v and reported none (EventDiverged)",
			i, s.newOp, modelHandoff)
	}
}

// watchEnd records when l ends.
func (r *runner) watchEnd(o *realOp, l *zklock.Lease) {
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		<-l.Done()
		o.mu.Lock()
		o.ended = time.Now()
		o.mu.Unlock()
	}()
}

// opOf returns the op that made a node (0 if none).
func (r *runner) opOf(n realNode) int {
	if id, ok := strings.CutPrefix(n.label, "model-op"); ok {
		if v, err := strconv.Atoi(id); err == nil {
			return v
		}
	}
	return r.byPath[n.path]
}

func (r *runner) observe() observation {
	ctx, cancel := context.WithTimeout(context.Background(), modelHandoff)
	defer cancel()
	nodes, err := r.sys.list(ctx)
	if err != nil {
		r.fail("listing the queues: %v", err)
	}
	obs := observation{at: time.Now(), nodes: nodes}
	r.last = obs
	return obs
}

// learn tells the model the sequence numbers of its pending nodes that
// the listing shows.
func (r *runner) learn(obs observation) {
	for _, res := range r.m.resources() {
		for _, n := range obs.nodes[res] {
			x := r.m.byID[r.opOf(n)]
			if x == nil {
				continue
			}
			mn := x.nodes[res]
			if mn == nil || mn.known || slices.Contains(x.seqs[res], n.seq) {
				continue
			}
			r.m.learn(mn, n.seq)
			r.note("       op%d queued on %s: #%d", x.id, res, n.seq)
		}
	}
	r.m.now = obs.at
	r.m.settle()
}

// settle waits until the system is where the model says it must be, then
// checks that it stays there.
func (r *runner) settle() {
	firstSeen := map[string]time.Time{}
	start := time.Now()
	quiet := false
	for {
		obs := r.observe()
		r.learn(obs)
		r.checkSafety(obs)
		issues := r.compare(obs)
		if len(issues) == 0 {
			if quiet {
				return
			}
			quiet = true
			time.Sleep(r.sys.quiet())
			continue
		}
		for _, is := range issues {
			since := is.since
			if since.IsZero() {
				if quiet {
					// The state was settled: nothing may change but what
					// a due node's queueing explains.
					r.fail("step %d: after the state settled: %s", r.cur, is.msg)
				}
				f, ok := firstSeen[is.key]
				if !ok {
					f = obs.at
					firstSeen[is.key] = f
				}
				since = f
			}
			if is.fatal {
				r.fail("step %d: %s", r.cur, is.msg)
			}
			if d := obs.at.Sub(since); d > is.bound {
				r.fail("step %d: %s (%v without it, bound %v)", r.cur, is.msg, d.Round(time.Millisecond), is.bound)
			}
		}
		quiet = false
		if time.Since(start) > modelStepLimit {
			r.fail("step %d: not settled after %v: %s", r.cur, modelStepLimit, issues[0].msg)
		}
		time.Sleep(r.sys.poll())
	}
}

// finish checks that the drained sequence left nothing behind.
func (r *runner) finish() {
	for _, x := range r.m.ops {
		if x.status == opWaiting || (x.status == opHeld && x.lease.end == leaseLive) {
			r.fail("after the sequence, the model still has %s", x)
		}
	}
	deadline := time.Now().Add(modelHandoff)
	for {
		left, err := r.sys.leftovers(context.Background())
		if err != nil {
			r.fail("leftovers: %v", err)
		}
		if len(left) == 0 {
			break
		}
		if time.Now().After(deadline) {
			r.fail("after the sequence, lock nodes are left: %v", left)
		}
		time.Sleep(10 * time.Millisecond)
	}
	r.sys.close()
	r.wg.Wait()
}
