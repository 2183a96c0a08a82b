package zklock_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/zklockkit/zklockkit/zklock"
)

func TestMemoryLocker(t *testing.T) {
	ctx := context.Background()
	m := zklock.NewMemoryLocker()
	l, err := m.Acquire(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Acquire(ctx, "a", zklock.Try()); !errors.Is(err, zklock.ErrLocked) {
		t.Fatalf("try: %v", err)
	}
	if _, err := m.Acquire(ctx, "a", zklock.MaxWait(20*time.Millisecond)); !errors.Is(err, zklock.ErrWaitTimeout) {
		t.Fatalf("max wait: %v", err)
	}
	if h, w := m.Holders("a"); h != 1 || w != 0 {
		t.Fatalf("holders %d waiting %d", h, w)
	}
	// FIFO order.
	var order []int
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := 0; i < 5; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l, err := m.Acquire(ctx, "a")
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			order = append(order, i)
			mu.Unlock()
			l.Release(ctx)
		}()
		for {
			if _, w := m.Holders("a"); w == i+1 {
				break
			}
			time.Sleep(time.Millisecond)
		}
	}
	inner, err := m.Acquire(l.Context(ctx), "a")
	if err != nil || inner.Token() != l.Token() {
		t.Fatalf("re-entry: %v", err)
	}
	inner.Release(ctx)
	l.Release(ctx)
	wg.Wait()
	for i, v := range order {
		if v != i {
			t.Fatalf("order %v, want FIFO", order)
		}
	}
	// Readers share, writers wait; loss is signalled.
	r1, _ := m.Acquire(ctx, "rw", zklock.Read)
	r2, err := m.Acquire(ctx, "rw", zklock.Read, zklock.Try())
	if err != nil {
		t.Fatalf("second reader: %v", err)
	}
	if _, err := m.Acquire(ctx, "rw", zklock.Write, zklock.Try()); !errors.Is(err, zklock.ErrLocked) {
		t.Fatalf("writer with readers: %v", err)
	}
	m.Expire()
	<-r1.Done()
	<-r2.Done()
	if !errors.Is(r1.Err(), zklock.ErrSessionExpired) || !errors.Is(r2.Release(ctx), zklock.ErrLeaseLost) {
		t.Fatalf("loss: %v", r1.Err())
	}
	if h, w := m.Holders("rw"); h != 0 || w != 0 {
		t.Fatalf("after expire: %d held %d waiting", h, w)
	}
	if _, err := m.Acquire(ctx, ""); !errors.Is(err, zklock.ErrInvalidResource) {
		t.Fatalf("empty name: %v", err)
	}
}

// A semaphore's limit is its live queue's: another limit is refused while
// the queue has nodes, and free again once it is empty.
func TestMemoryLockerLimitMismatch(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	m := zklock.NewMemoryLocker()
	l, err := m.Acquire(ctx, "s", zklock.Limit(1))
	if err != nil {
		t.Fatal(err)
	}
	for _, opts := range [][]zklock.AcquireOption{{zklock.Limit(2)}, {zklock.Limit(2), zklock.Try()}} {
		if _, err := m.Acquire(ctx, "s", opts...); !errors.Is(err, zklock.ErrLimitMismatch) {
			t.Fatalf("limit 2 on a queue of limit 1: %v, want ErrLimitMismatch", err)
		}
	}
	if h, w := m.Holders("s"); h != 1 || w != 0 {
		t.Fatalf("after the refusals: %d held, %d waiting; want the first holder alone", h, w)
	}
	l.Release(ctx)
	l2, err := m.Acquire(ctx, "s", zklock.Limit(2))
	if err != nil {
		t.Fatalf("limit 2 on an empty queue: %v", err)
	}
	l2.Release(ctx)
}

func TestMemoryLockerTryWithMaxWait(t *testing.T) {
	m := zklock.NewMemoryLocker()
	if _, err := m.Acquire(context.Background(), "a", zklock.Try(), zklock.MaxWait(time.Second)); !errors.Is(err, zklock.ErrInvalidOption) {
		t.Fatalf("Try with MaxWait: %v, want ErrInvalidOption", err)
	}
}

// positions counts EventPosition events: a waiter reports one each time it
// is woken and finds its place changed.
type positions struct {
	mu sync.Mutex
	n  int
}

func (p *positions) Observe(_ context.Context, e zklock.Event) {
	if e.Kind == zklock.EventPosition {
		p.mu.Lock()
		p.n++
		p.mu.Unlock()
	}
}

func (p *positions) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.n
}

// A release wakes the waiters the rule now lets hold, and no other: each
// hand-off down a queue of 8 is one wake-up (a waiter woken for nothing
// would report its new position too). A semaphore hands a slot on
// whichever holder leaves.
func TestMemoryLockerWakesOnlyWhoMayHold(t *testing.T) {
	ctx := testCtx(t)
	var pos positions
	m := zklock.NewMemoryLocker(&pos)
	const n = 8
	first, err := m.Acquire(ctx, "q")
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan *zklock.Lease, n)
	for i := range n {
		go func() {
			l, err := m.Acquire(ctx, "q")
			if err != nil {
				t.Error(err)
			}
			got <- l
		}()
		eventually(t, "waiter queued", func() bool { _, w := m.Holders("q"); return w == i+1 })
	}
	first.Release(ctx)
	for range n {
		l := <-got
		if l == nil {
			t.FailNow()
		}
		l.Release(ctx)
	}
	if p := pos.count(); p != n {
		t.Fatalf("%d position reports for %d hand-offs, want one each", p, n)
	}

	// limit 2: A and B hold, C waits; B leaves first.
	a, _ := m.Acquire(ctx, "s", zklock.Limit(2))
	b, _ := m.Acquire(ctx, "s", zklock.Limit(2))
	c := make(chan *zklock.Lease, 1)
	go func() {
		l, err := m.Acquire(ctx, "s", zklock.Limit(2))
		if err != nil {
			t.Error(err)
		}
		c <- l
	}()
	eventually(t, "C queued", func() bool { _, w := m.Holders("s"); return w == 1 })
	b.Release(ctx)
	select {
	case l := <-c:
		l.Release(ctx)
	case <-time.After(2 * time.Second):
		t.Fatal("C still waits for a free slot after B left")
	}
	a.Release(ctx)
}

// Downgrade on a MemoryLocker lease has the semantics it has on ZooKeeper.
func TestMemoryLockerDowngrade(t *testing.T) {
	ctx := testCtx(t)
	m := zklock.NewMemoryLocker()
	w, err := m.Acquire(ctx, "doc", zklock.Write)
	if err != nil {
		t.Fatal(err)
	}
	// A reader waiting behind the writer holds once it is downgraded.
	reader := make(chan *zklock.Lease, 1)
	go func() {
		l, err := m.Acquire(ctx, "doc", zklock.Read)
		if err != nil {
			t.Error(err)
		}
		reader <- l
	}()
	eventually(t, "reader queued", func() bool { _, n := m.Holders("doc"); return n == 1 })
	// Re-entered: refused.
	inner, err := m.Acquire(w.Context(ctx), "doc", zklock.Write)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Downgrade(ctx); !errors.Is(err, zklock.ErrDowngradeBlocked) {
		t.Fatalf("downgrade of a re-entered lease: %v, want ErrDowngradeBlocked", err)
	}
	inner.Release(ctx)
	r, err := w.Downgrade(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if r.Mode() != zklock.Read || !errors.Is(w.Err(), zklock.ErrReleased) || r.Err() != nil {
		t.Fatalf("after downgrade: mode %v, write lease %v, read lease %v", r.Mode(), w.Err(), r.Err())
	}
	select {
	case l := <-reader:
		l.Release(ctx)
	case <-time.After(2 * time.Second):
		t.Fatal("the reader queued behind the write lease still waits after the downgrade")
	}
	if _, err := r.Downgrade(ctx); !errors.Is(err, zklock.ErrInvalidOption) {
		t.Fatalf("downgrade of a read lease: %v, want ErrInvalidOption", err)
	}
	r.Release(ctx)

	// A writer queued behind: refused, the write lease kept.
	w, _ = m.Acquire(ctx, "doc", zklock.Write)
	wctx, cancel := context.WithCancel(ctx)
	writer := make(chan error, 1)
	go func() {
		_, err := m.Acquire(wctx, "doc", zklock.Write)
		writer <- err
	}()
	eventually(t, "writer queued", func() bool { _, n := m.Holders("doc"); return n == 1 })
	if _, err := w.Downgrade(ctx); !errors.Is(err, zklock.ErrDowngradeBlocked) {
		t.Fatalf("downgrade with a writer queued: %v, want ErrDowngradeBlocked", err)
	}
	if w.Err() != nil {
		t.Fatalf("refused downgrade ended the write lease: %v", w.Err())
	}
	cancel()
	<-writer
	w.Release(ctx)
	if _, err := w.Downgrade(ctx); !errors.Is(err, zklock.ErrReleased) {
		t.Fatalf("downgrade after release: %v, want ErrReleased", err)
	}

	// A Lease already released, whose state a re-entry keeps: its
	// holder gave it up, so it cannot be downgraded either.
	w, _ = m.Acquire(ctx, "doc", zklock.Write)
	inner, _ = m.Acquire(w.Context(ctx), "doc", zklock.Write)
	w.Release(ctx)
	if _, err := w.Downgrade(ctx); !errors.Is(err, zklock.ErrReleased) {
		t.Fatalf("downgrade through a released Lease: %v, want ErrReleased", err)
	}
	if inner.Err() != nil {
		t.Fatalf("the re-entry lost its lease: %v", inner.Err())
	}
	inner.Release(ctx)
}

// AcquireAll under the context of a lease that holds some of the
// resources re-enters those and acquires the rest: one lease, whose
// release counts the re-entered ones down and deletes its new nodes.
func TestMemoryLockerAcquireAllReentersInPart(t *testing.T) {
	ctx := testCtx(t)
	m := zklock.NewMemoryLocker()
	l, err := m.Acquire(ctx, "x")
	if err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(l.Context(ctx), 2*time.Second)
	defer cancel()
	both, err := m.AcquireAll(wctx, []string{"x", "y"})
	if err != nil {
		t.Fatalf("AcquireAll of x (held by the context's lease) and y: %v", err)
	}
	l.Release(ctx)
	if h, _ := m.Holders("x"); h != 1 {
		t.Fatalf("x released while the AcquireAll's lease re-enters it (%d holders)", h)
	}
	both.Release(ctx)
	for _, r := range []string{"x", "y"} {
		if h, w := m.Holders(r); h+w != 0 {
			t.Fatalf("%s: %d held, %d waiting after both releases", r, h, w)
		}
	}
	// A read lease and a write request: refused.
	rl, _ := m.Acquire(ctx, "x", zklock.Read)
	if _, err := m.AcquireAll(rl.Context(ctx), []string{"x", "y"}, zklock.Write); !errors.Is(err, zklock.ErrUpgrade) {
		t.Fatalf("write AcquireAll under a read lease: %v, want ErrUpgrade", err)
	}
	rl.Release(ctx)
}

// Operator deletions: a waiter queues again at the back; a multi-resource
// acquire that loses a part it holds starts over; a holder is lost.
func TestMemoryLockerDeletedNodes(t *testing.T) {
	ctx := testCtx(t)
	m := zklock.NewMemoryLocker()
	hy, _ := m.Acquire(ctx, "y")
	got := make(chan *zklock.Lease, 1)
	go func() {
		l, err := m.AcquireAll(ctx, []string{"x", "y"})
		if err != nil {
			t.Error(err)
		}
		got <- l
	}()
	eventually(t, "x held, y waited for", func() bool { h, _ := m.Holders("x"); _, w := m.Holders("y"); return h == 1 && w == 1 })
	m.LoseResource("x") // the held part
	// It starts over: x again (free), then y at the back, behind a
	// newcomer queued meanwhile.
	eventually(t, "x held again", func() bool { h, _ := m.Holders("x"); return h == 1 })
	hy.Release(ctx)
	l := <-got
	if l == nil {
		t.FailNow()
	}
	m.LoseResource("y")
	<-l.Done()
	var lost *zklock.LostError
	if !errors.As(l.Err(), &lost) || lost.Reason != zklock.LossNodeDeleted {
		t.Fatalf("lease after its node on y was deleted: %v", l.Err())
	}
	if h, w := m.Holders("x"); h+w != 0 {
		t.Fatalf("x: %d held %d waiting after the lease was lost", h, w)
	}

	// Expire: holders lost, waiters queue again (the first now holds).
	h, _ := m.Acquire(ctx, "z")
	go func() {
		l, err := m.Acquire(ctx, "z")
		if err != nil {
			t.Error(err)
		}
		got <- l
	}()
	eventually(t, "waiter queued", func() bool { _, w := m.Holders("z"); return w == 1 })
	m.Expire()
	<-h.Done()
	if !errors.Is(h.Err(), zklock.ErrSessionExpired) {
		t.Fatalf("holder after Expire: %v", h.Err())
	}
	l = <-got
	if l == nil {
		t.FailNow()
	}
	if l.Token() <= h.Token()+1 {
		t.Fatalf("the waiter holds with token %d: not a new node (holder had %d)", l.Token(), h.Token())
	}
	l.Release(ctx)
}
