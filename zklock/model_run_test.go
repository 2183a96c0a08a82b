package zklock_test

import (
	"context"
	"errors"
	"fmt"
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
			case s.kind == stDelete && id == s.op && res == s.res[0]:
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

// issue is one way the system differs from the model.
type issue struct {
	key   string
	msg   string
	since time.Time // zero: from when it is first seen
	bound time.Duration
	fatal bool // waiting cannot mend it
}

func bound(k boundKind) time.Duration {
	switch k {
	case boundTry:
		return modelTryBound
	case boundWait:
		return modelWaitLimit + modelHandoff
	case boundExpiry:
		return modelExpiry
	}
	return modelHandoff
}

func (r *runner) compare(obs observation) []issue {
	var out []issue
	add := func(is issue) { out = append(out, is) }
	for _, x := range r.m.ops {
		o := r.ops[x.id]
		if o == nil {
			continue
		}
		s := o.snap()
		r.noteAnswer(o, x, s)
		if r.triedOut(x, s) {
			continue
		}
		switch x.status {
		case opWaiting:
			if s.done {
				add(issue{key: fmt.Sprintf("early%d", x.id), bound: modelHandoff,
					msg: fmt.Sprintf("op%d returned (%s), the model says it waits for %s", x.id, answer(s), x.parts[x.part])})
			}
		case opHeld:
			switch {
			case !s.done:
				add(issue{key: fmt.Sprintf("held%d", x.id), since: x.since, bound: bound(x.bound),
					msg: fmt.Sprintf("op%d may hold %v, and has not returned", x.id, x.res)})
			case s.err != nil:
				add(issue{fatal: true, msg: fmt.Sprintf("op%d failed (%v), the model says it holds %v", x.id, s.err, x.res)})
			default:
				out = append(out, r.compareLease(obs, x, s)...)
			}
		case opFailed:
			switch {
			case !s.done:
				add(issue{key: fmt.Sprintf("fail%d", x.id), since: x.since, bound: bound(x.bound),
					msg: fmt.Sprintf("op%d must fail with %v, and has not returned", x.id, x.want)})
			case s.err == nil:
				add(issue{fatal: true, msg: fmt.Sprintf("op%d holds %v, the model says it fails with %v", x.id, shortPaths(s.lease.Paths()), x.want)})
			case !errors.Is(s.err, x.want):
				add(issue{fatal: true, msg: fmt.Sprintf("op%d failed with %v, the model says %v", x.id, s.err, x.want)})
			case x.onBlock != nil && x.blockBound == boundWait && x.want == x.onBlock && s.at.Sub(s.issued) < modelWaitLimit:
				add(issue{fatal: true, msg: fmt.Sprintf("op%d gave up after %v, before its wait of %v", x.id, s.at.Sub(s.issued), modelWaitLimit)})
			}
		}
	}
	// The queues, node by node.
	for _, res := range r.m.resources() {
		real := map[[2]int64]realNode{}
		for _, n := range obs.nodes[res] {
			real[[2]int64{int64(r.opOf(n)), n.seq}] = n
		}
		for _, n := range r.m.queues[res] {
			switch {
			case n.known:
				key := [2]int64{int64(n.op.id), n.seq}
				if rn, ok := real[key]; !ok {
					add(issue{fatal: true, msg: fmt.Sprintf("node %s of op%d on %s is gone, the model says it stays", n, n.op.id, res)})
				} else if rn.mode != n.mode {
					add(issue{fatal: true, msg: fmt.Sprintf("node %s is a %v node, the model says %v", rn.path, rn.mode, n.mode)})
				}
				delete(real, key)
			case n.lazy != nil:
				// may queue again later
			default:
				add(issue{key: fmt.Sprintf("queue%d/%s/%d", n.op.id, res, n.order), since: n.since, bound: bound(n.bound),
					msg: fmt.Sprintf("op%d has not queued on %s", n.op.id, res)})
			}
		}
		for key, rn := range real {
			add(issue{key: "extra" + rn.path, bound: modelHandoff,
				msg: fmt.Sprintf("node %s (op%d) on %s, the model says there is none", rn.path, key[0], res)})
		}
	}
	return out
}

// triedOut accepts a try that gave up on a slow ZooKeeper: a try never
// waits on ZooKeeper past min(session timeout/3, 1s) and then answers
// ErrUnavailable, leaving no node. On a loaded machine that is a right
// answer; the model is told, and the run counts it.
func (r *runner) triedOut(x *mop, s opSnap) bool {
	if x.onBlock != zklock.ErrLocked || !s.done || !errors.Is(s.err, zklock.ErrUnavailable) ||
		x.status == opFailed && errors.Is(x.want, zklock.ErrUnavailable) {
		return false
	}
	if took := s.at.Sub(s.issued); took < modelTryGiveUp {
		return false // too soon: compare reports it
	}
	if x.status == opHeld {
		if x.lease.end != leaseLive || x.lease.refs != 1 {
			return false
		}
		x.lease.end = leaseReleased
	}
	r.note("       op%d gave up on ZooKeeper after %v: %v", x.id, s.at.Sub(s.issued).Round(time.Millisecond), s.err)
	r.stats.triedOut.Add(1)
	r.m.fail(x, s.err, boundTry)
	r.m.settle()
	return true
}

// compareLease checks the lease op x returned against the model's.
func (r *runner) compareLease(obs observation, x *mop, s opSnap) []issue {
	l := x.lease
	err := s.lease.Err()
	switch l.end {
	case leaseLive:
		if err != nil {
			return []issue{{fatal: true, msg: fmt.Sprintf("op%d's lease ended (%v), the model says it is held", x.id, err)}}
		}
		if l.id != x.id || l.parent != nil {
			return nil
		}
		// Its nodes and token are those of its own nodes.
		var paths []string
		var token int64
		for _, n := range l.own {
			for _, rn := range obs.nodes[n.res] {
				if n.known && rn.seq == n.seq && r.opOf(rn) == n.op.id {
					paths = append(paths, rn.path)
					token = max(token, rn.token)
				}
			}
		}
		if len(paths) != len(l.own) {
			return nil // reported with the queues
		}
		if got := s.lease.Paths(); !slices.Equal(got, paths) {
			return []issue{{fatal: true, msg: fmt.Sprintf("op%d's lease has nodes %v, the model says %v", x.id, got, paths)}}
		}
		if got := s.lease.Token(); got != token {
			return []issue{{fatal: true, msg: fmt.Sprintf("op%d's lease has token %d, its nodes' is %d", x.id, got, token)}}
		}
	case leaseReleased:
		switch {
		case err == nil:
			return []issue{{key: fmt.Sprintf("rel%d", x.id), since: l.since, bound: modelHandoff,
				msg: fmt.Sprintf("op%d's lease is not over, the model says it was released", x.id)}}
		case !errors.Is(err, zklock.ErrReleased):
			return []issue{{fatal: true, msg: fmt.Sprintf("op%d's lease ended with %v, the model says released", x.id, err)}}
		}
	case leaseLost:
		var lost *zklock.LostError
		switch {
		case err == nil:
			return []issue{{key: fmt.Sprintf("lost%d", x.id), since: l.since, bound: bound(l.bound),
				msg: fmt.Sprintf("op%d's lease %v is still held, the model says it is lost (%v)", x.id, shortPaths(s.lease.Paths()), l.reason)}}
		case !errors.As(err, &lost):
			return []issue{{fatal: true, msg: fmt.Sprintf("op%d's lease ended with %v, the model says it is lost (%v)", x.id, err, l.reason)}}
		case l.reason != 0 && lost.Reason != l.reason:
			return []issue{{fatal: true, msg: fmt.Sprintf("op%d's lease was lost for %v, the model says %v", x.id, lost.Reason, l.reason)}}
		}
		if o := r.ops[x.id]; x.lease.id == x.id && !o.lossNoted && !s.ended.IsZero() {
			o.lossNoted = true
			r.stats.lost(s.ended.Sub(l.since))
		}
	}
	return nil
}

// checkSafety checks the system alone: no two live leases conflict by the
// rule (re-entries of one lease count once). A lease the model knows lost
// may not know it yet: ZooKeeper tells other sessions first.
func (r *runner) checkSafety(obs observation) {
	type holder struct {
		group int
		mode  zklock.Mode
	}
	byRes := map[string][]holder{}
	for _, x := range r.m.ops {
		o := r.ops[x.id]
		if o == nil {
			continue
		}
		s := o.snap()
		if !s.done || s.lease == nil || s.lease.Err() != nil {
			continue
		}
		if x.status == opHeld && x.lease.end == leaseLost {
			continue
		}
		group := x.id
		if x.lease != nil {
			l := x.lease
			for l.parent != nil {
				l = l.parent
			}
			group = l.id
		}
		for _, p := range s.lease.Paths() {
			res := r.sys.resourceOf(p)
			if !slices.ContainsFunc(byRes[res], func(h holder) bool { return h.group == group }) {
				byRes[res] = append(byRes[res], holder{group, s.lease.Mode()})
			}
		}
	}
	for res, hs := range byRes {
		readers, others := 0, 0
		for _, h := range hs {
			if h.mode == zklock.Read {
				readers++
			} else {
				others++
			}
		}
		ok := true
		switch {
		case r.m.limits[res] > 0:
			ok = len(hs) <= r.m.limits[res]
		case others > 1, others == 1 && readers > 0:
			ok = false
		}
		if !ok {
			r.fail("step %d: SAFETY: %d leases hold %s at once: %v", r.cur, len(hs), res, hs)
		}
	}
}

func (r *runner) noteAnswer(o *realOp, x *mop, s opSnap) {
	if !s.done || o.noted {
		return
	}
	o.noted = true
	r.note("       op%d returned after %v: %s", x.id, s.at.Sub(s.issued).Round(time.Millisecond), answer(s))
	if x.onBlock == zklock.ErrLocked {
		r.stats.try(s.at.Sub(s.issued))
	}
	if s.err == nil {
		r.stats.acquires.Add(1)
		if x.waited {
			r.stats.handoff(s.at.Sub(x.since))
		}
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

func (r *runner) note(format string, args ...any) {
	r.trace = append(r.trace, fmt.Sprintf(format, args...))
}

// fail stops the test with everything needed to replay and understand it.
func (r *runner) fail(format string, args ...any) {
	r.t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "model-based test failed on %s: %s\n", r.sys.name(), fmt.Sprintf(format, args...))
	if r.seed != 0 {
		fmt.Fprintf(&b, "seed %d (replay: go test -run 'TestIntegration_Model$' ./zklock -zklock.model.seed=%d)\n", r.seed, r.seed)
	}
	fmt.Fprintf(&b, "semaphore limit %d; steps (numbered), with what was seen:\n", r.setup.limit)
	for _, l := range r.trace {
		b.WriteString("  " + l + "\n")
	}
	b.WriteString("model:\n" + r.m.String())
	b.WriteString("observed:\n")
	for _, res := range r.m.resources() {
		fmt.Fprintf(&b, "  queue %s:", res)
		for _, n := range r.last.nodes[res] {
			fmt.Fprintf(&b, " op%d:%s#%d", r.opOf(n), modeLetter(n.mode), n.seq)
		}
		b.WriteByte('\n')
	}
	for _, x := range r.m.ops {
		if o := r.ops[x.id]; o != nil && x.step >= r.cur-20 {
			s := o.snap()
			fmt.Fprintf(&b, "  op%d: %s\n", x.id, answer(s))
		}
	}
	r.t.Fatal(b.String())
}

func answer(s opSnap) string {
	switch {
	case !s.done:
		return "waiting"
	case s.err != nil:
		return "error: " + s.err.Error()
	}
	st := "held"
	if err := s.lease.Err(); err != nil {
		st = "ended: " + err.Error()
	}
	return fmt.Sprintf("lease %v token %d, %s", shortPaths(s.lease.Paths()), s.lease.Token(), st)
}

// shortPaths shows lock node paths as resource/sequence number.
func shortPaths(paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		dir, name := p[:strings.LastIndexByte(p, '/')], p[strings.LastIndexByte(p, '/')+1:]
		res := dir[strings.LastIndexByte(dir, '/')+1:]
		if len(name) > 10 {
			name = name[len(name)-10:]
		}
		out[i] = res + "#" + strings.TrimLeft(name[:len(name)-1], "0") + name[len(name)-1:]
	}
	return out
}

func errMatches(err, want error) bool {
	if want == nil {
		return err == nil
	}
	return errors.Is(err, want)
}

func errText(err error) string {
	if err == nil {
		return "nil"
	}
	return err.Error()
}
