package zklock_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zklockkit/zklockkit/zklock"
	"github.com/zklockkit/zklockkit/zktest"
)

func TestIntegration_AcquireRelease(t *testing.T) {
	root := zktest.UniqueRoot(t)
	c := newClient(t, root)
	ctx := testCtx(t)

	l, err := c.Acquire(ctx, "accounts/42")
	if err != nil {
		t.Fatal(err)
	}
	if want := root + "/accounts%2F42/_c_"; !strings.HasPrefix(l.Path(), want) || !strings.Contains(l.Path(), "-lock-") {
		t.Fatalf("path %q, want prefix %q and Curator's -lock- layout", l.Path(), want)
	}
	if l.Token() <= 0 {
		t.Fatalf("token %d", l.Token())
	}
	if l.Err() != nil {
		t.Fatalf("Err while held: %v", l.Err())
	}
	select {
	case <-l.Done():
		t.Fatal("Done closed while held")
	default:
	}
	lctx := l.Context(ctx)
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
	<-l.Done()
	if !errors.Is(l.Err(), zklock.ErrReleased) {
		t.Fatalf("Err after release = %v", l.Err())
	}
	if !errors.Is(context.Cause(lctx), zklock.ErrReleased) {
		t.Fatalf("lease context cause = %v", context.Cause(lctx))
	}
	if err := l.Release(ctx); !errors.Is(err, zklock.ErrReleased) {
		t.Fatalf("second Release = %v, want ErrReleased", err)
	}
	if n := lockNodes(t, c.Conn(), root); len(n) != 0 {
		t.Fatalf("nodes left after release: %v", n)
	}

	// Fencing tokens grow with every lease, across resources.
	l2, err := c.Acquire(ctx, "accounts/42")
	if err != nil {
		t.Fatal(err)
	}
	defer l2.Release(ctx)
	if l2.Token() <= l.Token() {
		t.Fatalf("token did not grow: %d then %d", l.Token(), l2.Token())
	}
}

func TestIntegration_TryAcquire(t *testing.T) {
	root := zktest.UniqueRoot(t)
	c1, c2 := newClient(t, root), newClient(t, root)
	ctx := testCtx(t)
	l, err := c1.Acquire(ctx, "job")
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if _, err := c2.TryAcquire(ctx, "job"); !errors.Is(err, zklock.ErrLocked) {
			t.Fatalf("TryAcquire while held = %v, want ErrLocked", err)
		}
	}
	if n := lockNodes(t, c1.Conn(), root); len(n) != 1 {
		t.Fatalf("try left nodes behind: %v", n)
	}
	l.Release(ctx)
	l2, err := c2.TryAcquire(ctx, "job")
	if err != nil {
		t.Fatalf("TryAcquire when free: %v", err)
	}
	l2.Release(ctx)
}

func TestIntegration_MutualExclusion(t *testing.T) {
	root := zktest.UniqueRoot(t)
	ctx := testCtx(t)
	clients := []*zklock.Client{newClient(t, root), newClient(t, root), newClient(t, root)}
	var o overlap
	var wg sync.WaitGroup
	const perWorker = 10
	errs := make(chan error, 100)
	for w := 0; w < 12; w++ {
		c := clients[w%len(clients)]
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < perWorker; i++ {
				l, err := c.Acquire(ctx, "shared")
				if err != nil {
					errs <- err
					return
				}
				o.enter()
				time.Sleep(100 * time.Microsecond)
				o.leave()
				if err := l.Release(ctx); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if o.violations != 0 || o.entries != 12*perWorker {
		t.Fatalf("violations=%d entries=%d", o.violations, o.entries)
	}
	if n := lockNodes(t, clients[0].Conn(), root); len(n) != 0 {
		t.Fatalf("nodes left: %v", n)
	}
}

func TestIntegration_CancelAndDeadlineWhileWaiting(t *testing.T) {
	root := zktest.UniqueRoot(t)
	c1, c2 := newClient(t, root), newClient(t, root)
	ctx := testCtx(t)
	holder, err := c1.Acquire(ctx, "r")
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Release(ctx)

	dctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	_, err = c2.Acquire(dctx, "r")
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("deadline: %v", err)
	}
	if n := lockNodes(t, c1.Conn(), root); len(n) != 1 {
		t.Fatalf("after deadline nodes = %v, want only the holder's", n)
	}

	cctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { _, err := c2.Acquire(cctx, "r"); done <- err }()
	eventually(t, "waiter enqueued", func() bool { return len(lockNodes(t, c1.Conn(), root)) == 2 })
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancel: %v", err)
	}
	if n := lockNodes(t, c1.Conn(), root); len(n) != 1 {
		t.Fatalf("after cancel nodes = %v", n)
	}

	_, err = c2.Acquire(ctx, "r", zklock.MaxWait(200*time.Millisecond))
	if !errors.Is(err, zklock.ErrWaitTimeout) || errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("MaxWait: %v, want ErrWaitTimeout and not the caller's deadline", err)
	}
	if n := lockNodes(t, c1.Conn(), root); len(n) != 1 {
		t.Fatalf("after MaxWait nodes = %v", n)
	}

	// An already cancelled context never creates anything.
	dead, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := c2.Acquire(dead, "other"); !errors.Is(err, context.Canceled) {
		t.Fatalf("dead ctx: %v", err)
	}
}

// Cancelling at every stage of an acquire leaves nothing behind: a delay on
// the link makes each round trip slow, and cancellation times sweep the
// create, list and watch steps.
func TestIntegration_CancelAtEveryStage(t *testing.T) {
	root := zktest.UniqueRoot(t)
	p := newProxy(t)
	observer := newClient(t, root)
	ctx := testCtx(t)
	holder, err := observer.Acquire(ctx, "r")
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Release(ctx)
	slow := newClientAt(t, p.Addr(), root)
	const delay = 40 * time.Millisecond
	p.SetDelay(delay)
	canceled := 0
	for after := time.Duration(0); after < 6*delay; after += delay / 4 {
		cctx, cancel := context.WithTimeout(ctx, after)
		_, err := slow.Acquire(cctx, "r")
		cancel()
		if err == nil {
			t.Fatal("acquired a held lock")
		}
		if errors.Is(err, context.DeadlineExceeded) {
			canceled++
		}
	}
	if canceled == 0 {
		t.Fatal("no acquire was cancelled")
	}
	p.SetDelay(0)
	eventually(t, "no orphan nodes", func() bool { return len(lockNodes(t, observer.Conn(), root)) == 1 })
	if ls := slow.Locks(); len(ls) != 0 {
		t.Fatalf("client still tracks nodes: %+v", ls)
	}
}

func TestIntegration_InvalidResources(t *testing.T) {
	root := zktest.UniqueRoot(t)
	c := newClient(t, root)
	ctx := testCtx(t)
	for _, r := range []string{"", strings.Repeat("x", zklock.MaxResourceLen+1), "a\x00b", "bad\nline", "\xff\xfe", "\x7f", "/abs"} {
		_, err := c.Acquire(ctx, r)
		var re *zklock.ResourceError
		if !errors.Is(err, zklock.ErrInvalidResource) || !errors.As(err, &re) {
			t.Errorf("Acquire(%q) = %v, want ErrInvalidResource", r, err)
		}
	}
	for _, p := range []string{"relative", "/", "/a//b", "/a/../b", "/a/.", "/zookeeper/x", "/trailing/"} {
		if _, err := c.Acquire(ctx, p, zklock.RawPath()); !errors.Is(err, zklock.ErrInvalidResource) {
			t.Errorf("raw %q = %v, want ErrInvalidResource", p, err)
		}
	}
	if _, err := c.AcquireAll(ctx, []string{"a", "b", "a"}); !errors.Is(err, zklock.ErrInvalidResource) {
		t.Errorf("duplicate in AcquireAll = %v", err)
	}
	// Names that look like paths stay one child of the root (one that
	// starts with "/" is refused above: it looks like a znode path).
	for _, r := range []string{"..", ".", "../../etc", "a/b/c", "%2e%2e"} {
		l, err := c.Acquire(ctx, r)
		if err != nil {
			t.Fatalf("Acquire(%q): %v", r, err)
		}
		parent := l.Path()[:strings.LastIndexByte(l.Path(), '/')]
		if dir := parent[:strings.LastIndexByte(parent, '/')]; dir != root {
			t.Errorf("%q locked under %q, outside root %q", r, parent, root)
		}
		l.Release(ctx)
	}
	if n := lockNodes(t, c.Conn(), "/"); len(n) != 0 {
		t.Fatalf("nodes left anywhere: %v", n)
	}
}

func TestIntegration_RawPathInterop(t *testing.T) {
	root := zktest.UniqueRoot(t)
	c1, c2 := newClient(t, root), newClient(t, root)
	ctx := testCtx(t)
	path := root + "/locks/foo"
	l, err := c1.Acquire(ctx, path, zklock.RawPath())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(l.Path(), path+"/_c_") {
		t.Fatalf("raw lease at %s", l.Path())
	}
	if _, err := c2.TryAcquire(ctx, path, zklock.RawPath()); !errors.Is(err, zklock.ErrLocked) {
		t.Fatalf("second raw holder: %v", err)
	}
	l.Release(ctx)
}

func TestIntegration_Reentrancy(t *testing.T) {
	root := zktest.UniqueRoot(t)
	c := newClient(t, root)
	ctx := testCtx(t)
	outer, err := c.Acquire(ctx, "acct")
	if err != nil {
		t.Fatal(err)
	}
	lctx := outer.Context(ctx)
	inner, err := c.Acquire(lctx, "acct")
	if err != nil {
		t.Fatalf("re-entry: %v", err)
	}
	if inner.Path() != outer.Path() || inner.Token() != outer.Token() {
		t.Fatal("re-entered lease is not the same lock")
	}
	// A goroutine without the lease context waits.
	got := make(chan *zklock.Lease, 1)
	go func() {
		l, err := c.Acquire(ctx, "acct")
		if err != nil {
			t.Error(err)
		}
		got <- l
	}()
	eventually(t, "other goroutine queued", func() bool { return len(lockNodes(t, c.Conn(), root)) == 2 })
	if err := inner.Release(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case <-got:
		t.Fatal("inner release freed the lock while the outer lease is held")
	case <-time.After(200 * time.Millisecond):
	}
	if err := outer.Release(ctx); err != nil {
		t.Fatal(err)
	}
	l := <-got
	l.Release(ctx)

	// A multi-resource lease re-enters for any subset of its resources.
	all, err := c.AcquireAll(ctx, []string{"x", "y"})
	if err != nil {
		t.Fatal(err)
	}
	actx := all.Context(ctx)
	for _, set := range [][]string{{"x", "y"}, {"y"}} {
		sub, err := c.AcquireAll(actx, set)
		if err != nil || sub.Token() != all.Token() {
			t.Fatalf("re-entry of %v: %v", set, err)
		}
		sub.Release(ctx)
	}
	all.Release(ctx)

	// Read leases cannot be upgraded through the context.
	r, err := c.Acquire(ctx, "rw", zklock.Read)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Release(ctx)
	if _, err := c.Acquire(r.Context(ctx), "rw", zklock.Write); !errors.Is(err, zklock.ErrUpgrade) {
		t.Fatalf("upgrade = %v, want ErrUpgrade", err)
	}
}

func TestIntegration_NodeDeletedByOperator(t *testing.T) {
	root := zktest.UniqueRoot(t)
	rec := &recorder{}
	c := newClient(t, root, zklock.WithObserver(rec))
	op := newClient(t, root)
	ctx := testCtx(t)
	l, err := c.Acquire(ctx, "r")
	if err != nil {
		t.Fatal(err)
	}
	lctx := l.Context(ctx)
	if err := op.Conn().Delete(l.Path(), -1); err != nil {
		t.Fatal(err)
	}
	select {
	case <-l.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("loss not signalled")
	}
	var lost *zklock.LostError
	if !errors.As(l.Err(), &lost) || lost.Reason != zklock.LossNodeDeleted || !errors.Is(l.Err(), zklock.ErrLeaseLost) {
		t.Fatalf("Err = %v", l.Err())
	}
	<-lctx.Done()
	if !errors.Is(context.Cause(lctx), zklock.ErrLeaseLost) {
		t.Fatalf("ctx cause = %v", context.Cause(lctx))
	}
	if err := l.Release(ctx); !errors.Is(err, zklock.ErrLeaseLost) {
		t.Fatalf("Release after loss = %v", err)
	}
	eventually(t, "lost event", func() bool { return rec.count(zklock.EventLost) == 1 })
}

// Waiters whose nodes an operator deletes queue again, each exactly once,
// and all still get the lock: the one next in line (which watches its own
// node for the zero-round-trip hand-off) at once; one further back (which
// does not) when its predecessor goes and it lists the queue again.
func TestIntegration_WaiterNodeDeletedByOperator(t *testing.T) {
	root := zktest.UniqueRoot(t)
	holderC := newClient(t, root)
	// One client per waiter: waiters of one client watch their own nodes
	// (TestIntegration_LocalWaiterNodeDeleted).
	cs := []*zklock.Client{newClient(t, root), newClient(t, root), newClient(t, root)}
	locks := func() []zklock.LocalLock {
		var ls []zklock.LocalLock
		for _, c := range cs {
			ls = append(ls, c.Locks()...)
		}
		return ls
	}
	op := newClient(t, root)
	ctx := testCtx(t)
	h, err := holderC.Acquire(ctx, "r")
	if err != nil {
		t.Fatal(err)
	}
	// Three waiters, queued one after the other.
	var ov overlap
	var acquired atomic.Int32
	errs := make(chan error, 3)
	for i := range 3 {
		go func() {
			l, err := cs[i].Acquire(ctx, "r")
			if err == nil {
				acquired.Add(1)
				ov.enter()
				time.Sleep(5 * time.Millisecond)
				ov.leave()
				err = l.Release(ctx)
			}
			errs <- err
		}()
		eventually(t, fmt.Sprintf("waiter %d queued", i+1), func() bool { return len(locks()) == i+1 })
	}
	byPos := func() map[int]string {
		m := map[int]string{}
		for _, l := range locks() {
			m[l.Position] = l.Path
		}
		return m
	}
	eventually(t, "positions 1..3", func() bool { m := byPos(); return m[1] != "" && m[2] != "" && m[3] != "" })
	pos := byPos()
	// The next in line and the last one lose their nodes.
	for _, p := range []string{pos[1], pos[3]} {
		if err := op.Conn().Delete(p, -1); err != nil {
			t.Fatal(err)
		}
	}
	// The next in line queues again at once; the last one does not know yet.
	eventually(t, "the next in line queued again", func() bool {
		ls := locks()
		return len(ls) == 3 && !slices.ContainsFunc(ls, func(l zklock.LocalLock) bool { return l.Path == pos[1] })
	})
	queue := func() int { return len(lockNodes(t, op.Conn(), root)) }
	if n := queue(); n != 3 { // the holder, the middle waiter, the re-queued one
		t.Fatalf("%d nodes in the queue, want 3", n)
	}
	if err := h.Release(ctx); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if acquired.Load() != 3 || ov.violations != 0 {
		t.Fatalf("%d acquisitions, %d overlaps; want 3 and 0", acquired.Load(), ov.violations)
	}
	eventually(t, "an empty queue", func() bool { return queue() == 0 })
}

func TestIntegration_AcquireAll(t *testing.T) {
	root := zktest.UniqueRoot(t)
	c1, c2 := newClient(t, root), newClient(t, root)
	ctx := testCtx(t)
	// Opposite orders from two clients, many times: no deadlock.
	var wg sync.WaitGroup
	var o overlap
	for i, c := range []*zklock.Client{c1, c2} {
		set := []string{"A", "B"}
		if i == 1 {
			set = []string{"B", "A"}
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 20; j++ {
				l, err := c.AcquireAll(ctx, set)
				if err != nil {
					t.Error(err)
					return
				}
				o.enter()
				o.leave()
				if len(paths(l)) != 2 {
					t.Errorf("paths %v", paths(l))
				}
				l.Release(ctx)
			}
		}()
	}
	wg.Wait()
	if o.violations != 0 {
		t.Fatalf("%d overlaps", o.violations)
	}
	// All or nothing: B held elsewhere, a try of {A,B} takes neither.
	b, err := c2.Acquire(ctx, "B")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c1.AcquireAll(ctx, []string{"A", "B"}, zklock.Try()); !errors.Is(err, zklock.ErrLocked) {
		t.Fatalf("try all = %v", err)
	}
	eventually(t, "A released", func() bool { return len(lockNodes(t, c1.Conn(), root)) == 1 })
	// A part lost while waiting for the next one: the acquire gives
	// everything back and queues again for both (see also
	// TestIntegration_AcquireAllNoticesALostPart), and holds both once B
	// is free.
	bHolder := b // still holds B
	failed := make(chan error, 1)
	go func() {
		l, err := c1.AcquireAll(ctx, []string{"A", "B"})
		if err == nil {
			err = l.Release(ctx)
		}
		failed <- err
	}()
	eventually(t, "A held and B queued", func() bool { return len(c1.Locks()) == 2 })
	var aPath string
	for _, l := range c1.Locks() {
		if l.Held {
			aPath = l.Path
		}
	}
	if err := c2.Conn().Delete(aPath, -1); err != nil {
		t.Fatal(err)
	}
	eventually(t, "A held again on a new node", func() bool {
		ls := c1.Locks()
		return len(ls) == 2 && ls[0].Held && ls[0].Path != aPath
	})
	bHolder.Release(ctx)
	if err := <-failed; err != nil {
		t.Fatalf("AcquireAll after losing a part and queueing again = %v", err)
	}
	eventually(t, "nothing left", func() bool { return len(lockNodes(t, c1.Conn(), root)) == 0 })
	if l, err := c2.TryAcquire(ctx, "B"); err != nil {
		t.Fatalf("B blocked after the failed AcquireAll: %v", err)
	} else {
		l.Release(ctx)
	}

	// Losing one part loses the whole lease.
	l, err := c1.AcquireAll(ctx, []string{"A", "B"})
	if err != nil {
		t.Fatal(err)
	}
	if err := c2.Conn().Delete(paths(l)[1], -1); err != nil {
		t.Fatal(err)
	}
	<-l.Done()
	if !errors.Is(l.Err(), zklock.ErrLeaseLost) {
		t.Fatalf("Err = %v", l.Err())
	}
	eventually(t, "partner node released", func() bool { return len(lockNodes(t, c1.Conn(), root)) == 0 })
}

func TestIntegration_Inspect(t *testing.T) {
	root := zktest.UniqueRoot(t)
	c1 := newClient(t, root, zklock.WithLabel("worker-1"))
	c2 := newClient(t, root, zklock.WithLabel("worker-2"))
	ctx := testCtx(t)
	l, err := c1.Acquire(ctx, "q")
	if err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go c2.Acquire(wctx, "q", zklock.LeaseLabel("waiting-job"))
	eventually(t, "waiter", func() bool { return len(lockNodes(t, c1.Conn(), root)) == 2 })
	q, err := c1.Inspect(ctx, "q")
	if err != nil {
		t.Fatal(err)
	}
	if len(q.Nodes) != 2 || len(q.Holders()) != 1 || len(q.Waiters()) != 1 {
		t.Fatalf("queue %+v", q)
	}
	h, w := q.Holders()[0], q.Waiters()[0]
	if h.Path != l.Path() || h.Token != l.Token() || h.Owner.Label != "worker-1" || h.Owner.PID == 0 || h.Owner.Host == "" {
		t.Fatalf("holder %+v", h)
	}
	if w.Owner.Label != "waiting-job" || w.Position != 1 || w.SessionID != c2.SessionID() {
		t.Fatalf("waiter %+v", w)
	}
	if time.Since(h.Created) > time.Minute || time.Since(h.Created) < -time.Minute {
		t.Fatalf("created %v", h.Created)
	}
	rs, err := c1.Resources(ctx, "")
	if err != nil || len(rs) != 1 || rs[0] != "q" {
		t.Fatalf("Resources = %v, %v", rs, err)
	}
	locks := c2.Locks()
	if len(locks) != 1 || locks[0].Held || locks[0].Position != 1 {
		t.Fatalf("Locks = %+v", locks)
	}
	empty, err := c1.Inspect(ctx, "never-locked")
	if err != nil || len(empty.Nodes) != 0 {
		t.Fatalf("empty queue: %+v %v", empty, err)
	}
	l.Release(ctx)
}

func TestIntegration_ObserverEvents(t *testing.T) {
	root := zktest.UniqueRoot(t)
	rec := &recorder{}
	c1 := newClient(t, root)
	c2 := newClient(t, root, zklock.WithObserver(rec))
	ctx := testCtx(t)
	a, _ := c1.Acquire(ctx, "r")
	b, _ := c1.Acquire(ctx, "r", zklock.Try())
	_ = b
	got := make(chan *zklock.Lease)
	go func() {
		l, err := c2.Acquire(ctx, "r")
		if err != nil {
			t.Error(err)
		}
		got <- l
	}()
	eventually(t, "enqueued", func() bool { return rec.count(zklock.EventEnqueued) == 1 })
	a.Release(ctx)
	l := <-got
	l.Release(ctx)
	rec.mu.Lock()
	id := rec.events[0].ID // IDs are unique in the process, not per client
	rec.mu.Unlock()
	ks := rec.kinds(id)
	want := []zklock.EventKind{zklock.EventStarted, zklock.EventEnqueued, zklock.EventPosition, zklock.EventAcquired, zklock.EventReleased}
	if len(ks) != len(want) {
		t.Fatalf("events %v, want %v", ks, want)
	}
	for i := range ks {
		if ks[i] != want[i] {
			t.Fatalf("events %v, want %v", ks, want)
		}
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if rec.events[1].Position != 1 || rec.events[2].Position != 0 || rec.events[3].Wait <= 0 || rec.events[3].Token == 0 {
		t.Fatalf("event fields: %+v", rec.events)
	}
}

// A lease granted at once watches its node only after the node watch
// delay; a deletion before that is still found, when the watch is set.
func TestIntegration_NodeWatchDelay(t *testing.T) {
	root := zktest.UniqueRoot(t)
	ctx := testCtx(t)
	for _, delay := range []time.Duration{0, 200 * time.Millisecond} {
		c := newClient(t, root, zklock.WithNodeWatchDelay(delay))
		op := newClient(t, root)
		l, err := c.Acquire(ctx, "r")
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		if err := op.Conn().Delete(l.Path(), -1); err != nil {
			t.Fatal(err)
		}
		<-l.Done()
		if !errors.Is(l.Err(), zklock.ErrLeaseLost) {
			t.Fatalf("delay %v: Err = %v", delay, l.Err())
		}
		if took := time.Since(start); delay > 0 && took < delay/2 {
			t.Fatalf("delay %v: loss seen after %v, before the watch was due", delay, took)
		}
	}
	if _, err := zklock.Connect(ctx, []string{zktest.Shared().Addr()}, zklock.WithNodeWatchDelay(-1)); !errors.Is(err, zklock.ErrInvalidOption) {
		t.Fatalf("negative delay: %v", err)
	}
}
