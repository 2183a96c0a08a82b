package chaos

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/zklockkit/zklockkit/zklock"
)

// recipes returns the lanes of a worker: the exclusive lanes, then one
// lane per recipe the spec names.
func (w *worker) recipes() []string {
	var out []string
	for range max(w.spec.Lanes, 1) {
		out = append(out, ModeExclusive)
	}
	if len(w.spec.RW) > 0 {
		out = append(out, "rw", ModeDowngrade)
	}
	if len(w.spec.Sems) > 0 {
		out = append(out, ModeSemaphore)
	}
	if len(w.spec.Elections) > 0 {
		out = append(out, ModeElection)
	}
	if len(w.spec.Multi) > 0 {
		out = append(out, ModeMulti)
	}
	if w.spec.Probe && len(w.spec.Resources) > 0 {
		out = append(out, "probe")
	}
	return out
}

// attempt is one acquire of a lane.
type attempt struct {
	op       int64
	resource string   // for ModeMulti, the set joined by commas
	parts    []string // ModeMulti
	mode     string
	limit    int
	kind     string // "", "try", "short", "load"
	timeout  time.Duration
	acquire  func(ctx context.Context) (*zklock.Lease, error)
	client   *zklock.Client // the Client acquire uses, if not the worker's (the load phase's)
}

// held is a lease a lane holds, with what its writes need.
type held struct {
	l     *zklock.Lease
	c     *zklock.Client // l's
	h     *heldLease
	op    int64
	toks  map[string]int64 // resource -> token (one entry unless ModeMulti)
	mode  string
	began time.Time
	// requeued: the acquire queued again with a new node before it held
	requeued bool
}

// iteration is one acquire attempt of the lane's recipe and, when it
// succeeds, one critical section.
func (ln *lane) iteration(ctx context.Context) {
	w := ln.w
	rng := ln.rng
	a := attempt{op: w.op.Add(1), timeout: w.spec.AcquireTimeout, mode: ModeExclusive}
	steps, work := w.spec.Steps, w.spec.Work
	switch ln.recipe {
	case ModeExclusive, "probe":
		a.resource = w.spec.Resources[rng.IntN(len(w.spec.Resources))]
		switch x := rng.IntN(100); {
		case ln.recipe == "probe" || x < 8:
			a.kind = "try"
		case x < 18:
			// A short deadline: the wait is often cancelled, and its node must go.
			a.timeout = time.Duration(50+rng.IntN(400)) * time.Millisecond
			a.kind = "short"
		}
		var opts []zklock.AcquireOption
		if a.kind == "try" {
			opts = append(opts, zklock.Try())
		}
		a.acquire = func(ctx context.Context) (*zklock.Lease, error) { return w.c.Acquire(ctx, a.resource, opts...) }
	case "rw":
		a.resource = w.spec.RW[rng.IntN(len(w.spec.RW))]
		a.mode, steps = ModeRead, 2+rng.IntN(3)
		mode := zklock.Read
		if rng.IntN(100) < 35 {
			a.mode, mode = ModeWrite, zklock.Write
		}
		a.acquire = func(ctx context.Context) (*zklock.Lease, error) {
			return w.c.Acquire(ctx, a.resource, mode)
		}
	case ModeDowngrade:
		ln.downgrade(ctx, a)
		return
	case ModeSemaphore:
		s := w.spec.Sems[rng.IntN(len(w.spec.Sems))]
		a.resource, a.mode, a.limit = s.Name, ModeSemaphore, s.Limit
		if rng.IntN(100) < 20 {
			// Holders of varied length (a second or more), so that a slot
			// freed while an earlier holder stays shows whether a waiter
			// takes it.
			work = time.Duration(300+rng.IntN(300)) * time.Millisecond
		}
		a.acquire = func(ctx context.Context) (*zklock.Lease, error) {
			return w.c.Acquire(ctx, a.resource, zklock.Limit(s.Limit))
		}
	case ModeElection:
		a.resource, a.mode = w.spec.Elections[rng.IntN(len(w.spec.Elections))], ModeElection
		// A leader's term: long enough for a fault to find it leading.
		steps, work = 4, time.Duration(100+rng.IntN(250))*time.Millisecond
		value := fmt.Appendf(nil, "proc-%d-op-%d", w.spec.Proc, a.op)
		a.acquire = func(ctx context.Context) (*zklock.Lease, error) { return w.c.Campaign(ctx, a.resource, value) }
	case ModeMulti:
		a.parts = w.spec.Multi[rng.IntN(len(w.spec.Multi))]
		a.resource, a.mode = strings.Join(a.parts, ","), ModeMulti
		a.acquire = func(ctx context.Context) (*zklock.Lease, error) { return w.c.AcquireAll(ctx, a.parts) }
	}
	hd := ln.acquire(ctx, a)
	if hd == nil {
		return
	}
	ln.critical(hd, a, steps, work)
	w.release(hd, a, "")
}

// acquire runs a's acquire, reports it, and returns the lease tracked and
// announced, or nil.
func (ln *lane) acquire(ctx context.Context, a attempt) *held {
	w := ln.w
	deadline := time.Now().Add(a.timeout)
	actx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	w.send(Event{Kind: EvAcquire, Op: a.op, Resource: a.resource, Mode: a.mode, Limit: a.limit, Deadline: deadline.UnixNano(), Detail: a.kind})
	type result struct {
		l         *zklock.Lease
		began, at time.Time
		err       error
	}
	ch := make(chan result, 1)
	returned := make(chan struct{})
	go func() {
		began := time.Now()
		l, err := a.acquire(actx)
		var ended []*heldLease
		if err == nil {
			// A lane of this process that held the resource before us and
			// lost it was told (its Done closed) before we got the lock:
			// stamp that loss now, before our acquire is stamped, rather
			// than whenever its own watcher goroutine runs.
			ended = w.endedOn(partsOf(a))
		}
		at := time.Now()
		close(returned)
		// The losses go out before our EvAcquired (the lane sends it once
		// we are done); sending them may wait for the hub, which delays
		// neither stamp.
		for _, h := range ended {
			w.reportLoss(h)
		}
		ch <- result{l, began, at, err}
	}()
	hang := time.NewTimer(time.Until(deadline) + w.spec.HangGrace)
	select {
	case <-returned:
		hang.Stop()
	case <-hang.C:
		w.send(Event{Kind: EvHung, Op: a.op, Resource: a.resource, Mode: a.mode, Deadline: deadline.UnixNano(), Detail: a.kind})
	}
	res := <-ch
	if res.err != nil {
		w.send(Event{Kind: EvAcquireFailed, T: res.at.UnixNano(), Began: res.began.UnixNano(), Op: a.op, Resource: a.resource,
			Mode: a.mode, Limit: a.limit, Deadline: deadline.UnixNano(), Outcome: outcome(res.err), Err: res.err.Error(), Detail: a.kind})
		if a.mode == ModeMulti {
			w.checkNothingLeft(a)
		}
		if errors.Is(res.err, zklock.ErrLocked) {
			time.Sleep(time.Duration(1+ln.rng.IntN(10)) * time.Millisecond)
		}
		if a.kind == "try" && ln.recipe == "probe" {
			time.Sleep(time.Duration(100+ln.rng.IntN(200)) * time.Millisecond)
		}
		return nil
	}
	l := res.l
	hd := &held{l: l, c: w.c, op: a.op, mode: a.mode, began: res.began, toks: map[string]int64{a.resource: l.Token()}}
	if a.client != nil {
		hd.c = a.client
	}
	hd.requeued = w.requeues.take(leasePaths(l))
	ev := Event{Kind: EvAcquired, T: res.at.UnixNano(), Began: res.began.UnixNano(), Op: a.op, Resource: a.resource, Mode: a.mode,
		Limit: a.limit, Token: l.Token(), Session: l.SessionID(), Deadline: deadline.UnixNano(), Nodes: leasePaths(l), Detail: a.kind,
		Requeued: hd.requeued}
	if a.mode == ModeMulti {
		hd.toks = partTokens(l)
		ev.Parts = hd.toks
	}
	// Tracked before it is announced, so that another lane acquiring the
	// resource after a loss of this lease within the announcement still
	// stamps it.
	hd.h = w.track(l, a.op, l.Token(), a.resource)
	w.send(ev)
	close(hd.h.announced)
	go func() {
		<-l.Done()
		w.reportLoss(hd.h)
	}()
	return hd
}

// partsOf returns the resources of an attempt.
func partsOf(a attempt) []string {
	if a.mode == ModeMulti {
		return a.parts
	}
	return []string{a.resource}
}

// partTokens returns the token of each part of a multi-resource lease:
// its own node's (Lease.Parts; the lease's Token is the largest of them,
// not a token of every resource).
func partTokens(l *zklock.Lease) map[string]int64 {
	toks := map[string]int64{}
	for _, p := range l.Parts() {
		toks[p.Resource] = p.Token
	}
	return toks
}

// critical is a critical section: register the token with the store at
// once, then a few steps of "check the lease, work, write". The check and
// the write are not atomic: a pause between them (a GC, a SIGSTOP) sends a
// write from a holder that may have lost its lock. Fencing must refuse it
// where the recipe can be fenced; the checker judges the rest.
func (ln *lane) critical(hd *held, a attempt, steps int, work time.Duration) {
	w := ln.w
	// A few leases are held for about two session timeouts, so that faults
	// aimed at them (the nemesis prefers them) strike while the lock is held.
	if ln.rng.IntN(100) < w.spec.LongPercent && a.kind != "load" {
		steps, work = 8, w.spec.SessionTimeout/4
	}
	if hd.requeued {
		// Held for a second or so: the operator deletes a re-queued
		// waiter's new node once it holds, and the holder must hear of it.
		steps, work = max(steps, 5), max(work, 200*time.Millisecond)
	}
	writeAll := func() {
		for r, tok := range hd.toks {
			if tok != 0 {
				w.write(hd, r, tok)
			}
		}
	}
	writeAll()
	for range steps {
		select {
		case <-hd.l.Done():
			return
		default:
		}
		time.Sleep(work/2 + time.Duration(ln.rng.Int64N(int64(work)+1)))
		writeAll()
	}
}

// storeMode is how the store fences a recipe's writes.
func storeMode(mode string) string {
	switch mode {
	case ModeRead, ModeDowngrade:
		return ModeRead
	case ModeSemaphore:
		return ModeSemaphore
	}
	return ModeExclusive
}

// release releases hd and reports it; detail marks a downgrade.
func (w *worker) release(hd *held, a attempt, detail string) {
	w.send(Event{Kind: EvRelease, Op: hd.op, Resource: a.resource, Mode: hd.mode, Token: hd.l.Token(), Detail: detail})
	rctx, rcancel := context.WithTimeout(context.Background(), 2*w.spec.SessionTimeout)
	called := time.Now() // after the report, which waits for the hub
	err := hd.l.Release(rctx)
	rcancel()
	w.untrack(hd.h)
	ev := Event{Kind: EvReleased, Op: hd.op, Resource: a.resource, Mode: hd.mode, Token: hd.l.Token(), Outcome: "ok", Called: called.UnixNano()}
	if err != nil {
		ev.Err = err.Error()
		switch {
		case errors.Is(err, zklock.ErrLeaseLost):
			ev.Outcome = "lost"
		case errors.Is(err, context.DeadlineExceeded):
			ev.Outcome = "unconfirmed"
		default:
			ev.Outcome = "error"
		}
	}
	w.send(ev)
}

// downgrade takes a write lease, writes as a writer, downgrades it to a
// read lease with no unlocked moment, writes as a reader, and releases.
func (ln *lane) downgrade(ctx context.Context, a attempt) {
	w := ln.w
	a.resource = w.spec.RW[ln.rng.IntN(len(w.spec.RW))]
	a.mode = ModeWrite
	a.kind = "downgrade"
	a.acquire = func(ctx context.Context) (*zklock.Lease, error) {
		return w.c.Acquire(ctx, a.resource, zklock.Write)
	}
	hd := ln.acquire(ctx, a)
	if hd == nil {
		return
	}
	ln.critical(hd, a, 1, w.spec.Work)
	select {
	case <-hd.l.Done():
		w.release(hd, a, "")
		return
	default:
	}
	op := w.op.Add(1)
	called := time.Now()
	dctx, cancel := context.WithTimeout(context.Background(), 2*w.spec.SessionTimeout)
	rl, err := hd.l.Downgrade(dctx)
	cancel()
	if err != nil {
		w.send(Event{Kind: EvNote, Op: hd.op, Resource: a.resource, Mode: ModeWrite, Outcome: "downgrade-" + outcomeDowngrade(err), Err: err.Error()})
		ended := errors.Is(err, zklock.ErrLeaseLost)
		select {
		case <-hd.l.Done():
			ended = true
		default:
		}
		if !ended {
			// ErrDowngradeBlocked, or the call ended first: the write
			// lease still holds.
			w.release(hd, a, "downgrade-failed")
			return
		}
		// Downgrade gave the write lease up and lost the read lease it
		// made (ErrLeaseLost: the session was lost while the write
		// node's delete waited), or the write lease was lost during the
		// call. Either way it ended in its holder's eyes when Downgrade
		// was called, as after a downgrade. Its Done may still be open:
		// the delete Downgrade began goes on in the background, and the
		// lease ends only once ZooKeeper confirms it.
		w.send(Event{Kind: EvRelease, T: called.UnixNano(), Op: hd.op, Resource: a.resource, Mode: ModeWrite, Token: hd.l.Token(), Detail: "downgrade-lost"})
		w.untrack(hd.h)
		w.send(Event{Kind: EvReleased, Op: hd.op, Resource: a.resource, Mode: ModeWrite, Token: hd.l.Token(), Outcome: "lost", Err: err.Error()})
		return
	}
	at := time.Now()
	// The write lease ended in its holder's eyes when Downgrade was called;
	// the read lease holds from its return.
	w.send(Event{Kind: EvRelease, T: called.UnixNano(), Op: hd.op, Resource: a.resource, Mode: ModeWrite, Token: hd.l.Token(), Detail: "downgrade"})
	w.untrack(hd.h)
	w.send(Event{Kind: EvReleased, Op: hd.op, Resource: a.resource, Mode: ModeWrite, Token: hd.l.Token(), Outcome: "downgraded"})
	rd := &held{l: rl, c: hd.c, op: op, mode: ModeDowngrade, began: called, toks: map[string]int64{a.resource: rl.Token()}}
	rd.h = w.track(rl, op, rl.Token(), a.resource)
	w.send(Event{Kind: EvAcquired, T: at.UnixNano(), Began: called.UnixNano(), Op: op, Resource: a.resource, Mode: ModeDowngrade,
		Token: rl.Token(), Session: rl.SessionID(), Nodes: leasePaths(rl), From: hd.op, Detail: "downgrade"})
	close(rd.h.announced)
	go func() {
		<-rl.Done()
		w.reportLoss(rd.h)
	}()
	ln.critical(rd, attempt{resource: a.resource, mode: ModeDowngrade}, 2, w.spec.Work)
	w.release(rd, attempt{resource: a.resource}, "")
}

func outcomeDowngrade(err error) string {
	if errors.Is(err, zklock.ErrDowngradeBlocked) {
		return "blocked"
	}
	return outcome(err)
}

// Recipes, as the nemesis aims at them and the report counts them.
const (
	RecipeExclusive = "exclusive"
	RecipeRW        = "read/write"
	RecipeSemaphore = "semaphore"
	RecipeElection  = "election"
	RecipeMulti     = "acquire-all"
	RecipeDowngrade = "downgrade"
	RecipeLoad      = "load"
)

// AllRecipes lists the recipes of the lanes, in report order.
var AllRecipes = []string{RecipeExclusive, RecipeRW, RecipeSemaphore, RecipeElection, RecipeMulti, RecipeDowngrade}

// recipeOf names the recipe of an acquire from its mode and detail.
func recipeOf(mode, detail string) string {
	switch {
	case detail == "load":
		return RecipeLoad
	case detail == "downgrade" || mode == ModeDowngrade:
		return RecipeDowngrade
	}
	switch mode {
	case ModeRead, ModeWrite:
		return RecipeRW
	case ModeSemaphore:
		return RecipeSemaphore
	case ModeElection:
		return RecipeElection
	case ModeMulti:
		return RecipeMulti
	}
	return RecipeExclusive
}

// checkNothingLeft makes sure a failed AcquireAll kept nothing: within a
// session timeout, the client has no node left on any of its resources
// (this worker's AcquireAll lane is the only one on them). What is left
// is reported (EvNote, Outcome "leftover"): all-or-nothing broken.
func (w *worker) checkNothingLeft(a attempt) {
	deadline := time.Now().Add(w.spec.SessionTimeout)
	for {
		var left []string
		for _, l := range w.c.Locks() {
			if slices.Contains(a.parts, l.Resource) {
				left = append(left, l.Path)
			}
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			w.send(Event{Kind: EvNote, Op: a.op, Resource: a.resource, Mode: a.mode, Outcome: "leftover", Nodes: left,
				Detail: fmt.Sprintf("a failed AcquireAll left %d node(s) with the client after %v", len(left), w.spec.SessionTimeout)})
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// leasePaths returns the znode paths of a lease's parts.
func leasePaths(l *zklock.Lease) []string {
	var ps []string
	for _, p := range l.Parts() {
		ps = append(ps, p.Path)
	}
	return ps
}
