package zklock_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zklockkit/zklockkit/zklock"
	"github.com/zklockkit/zklockkit/zktest"
)

// rwCheck records who is inside: readers may share, a writer is alone.
type rwCheck struct {
	mu                  sync.Mutex
	readers, writers    int
	maxReaders          int
	violations, entries int
}

func (c *rwCheck) enter(write bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.entries++
	if write {
		c.writers++
	} else {
		c.readers++
	}
	if c.writers > 1 || (c.writers == 1 && c.readers > 0) {
		c.violations++
	}
	c.maxReaders = max(c.maxReaders, c.readers)
}

func (c *rwCheck) leave(write bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if write {
		c.writers--
	} else {
		c.readers--
	}
}

// 20 mixed contenders on two sessions: readers share, writers exclude
// everyone, and no reader is ever woken only to wait again.
func TestIntegration_ReadWriteLock(t *testing.T) {
	root := zktest.UniqueRoot(t)
	ctx := testCtx(t)
	rec := &recorder{}
	clients := []*zklock.Client{newClient(t, root, zklock.WithObserver(rec)), newClient(t, root, zklock.WithObserver(rec))}
	var chk rwCheck
	var wg sync.WaitGroup
	for i := 0; i < 20; i++ {
		write := i%4 == 0
		mode := zklock.Read
		if write {
			mode = zklock.Write
		}
		c := clients[i%2]
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := 0; r < 5; r++ {
				l, err := c.Acquire(ctx, "doc", mode)
				if err != nil {
					t.Error(err)
					return
				}
				chk.enter(write)
				time.Sleep(2 * time.Millisecond)
				chk.leave(write)
				l.Release(ctx)
			}
		}()
	}
	wg.Wait()
	if chk.violations != 0 || chk.entries != 100 {
		t.Fatalf("violations=%d entries=%d", chk.violations, chk.entries)
	}
	if chk.maxReaders < 2 {
		t.Fatalf("readers never shared the lock (max %d at once)", chk.maxReaders)
	}
	// A reader only ever waits on a writer, and a writer's release lets
	// every reader behind it in: a reader's wake-up is always followed by
	// its acquire, never by more waiting.
	rec.mu.Lock()
	defer rec.mu.Unlock()
	last := map[uint64]zklock.EventKind{}
	wasted := 0
	for _, e := range rec.events {
		if e.Mode == zklock.Read && last[e.ID] == zklock.EventPosition && e.Kind == zklock.EventPosition {
			wasted++
		}
		last[e.ID] = e.Kind
	}
	if wasted != 0 {
		t.Fatalf("%d reader wake-ups did not lead to an acquire", wasted)
	}
	t.Logf("100 critical sections, up to %d readers at once, 0 overlaps with a writer", chk.maxReaders)
}

// A waiting writer blocks readers that come after it (no writer starvation).
func TestIntegration_ReadWriteFairness(t *testing.T) {
	root := zktest.UniqueRoot(t)
	ctx := testCtx(t)
	a, b := newClient(t, root), newClient(t, root)
	r1, err := a.Acquire(ctx, "doc", zklock.Read)
	if err != nil {
		t.Fatal(err)
	}
	wrote := make(chan *zklock.Lease, 1)
	go func() {
		w, err := b.Acquire(ctx, "doc", zklock.Write)
		if err != nil {
			t.Error(err)
		}
		wrote <- w
	}()
	eventually(t, "writer queued", func() bool { return len(b.Locks()) == 1 })
	if _, err := a.Acquire(ctx, "doc", zklock.Read, zklock.Try()); !errors.Is(err, zklock.ErrLocked) {
		t.Fatalf("a reader overtook a waiting writer: %v", err)
	}
	r1.Release(ctx)
	w := <-wrote
	if w == nil {
		t.FailNow()
	}
	if _, err := a.Acquire(ctx, "doc", zklock.Read, zklock.Try()); !errors.Is(err, zklock.ErrLocked) {
		t.Fatalf("reader while a writer holds: %v", err)
	}
	w.Release(ctx)
}

func TestIntegration_Downgrade(t *testing.T) {
	root := zktest.UniqueRoot(t)
	ctx := testCtx(t)
	a, b := newClient(t, root), newClient(t, root)
	w, err := a.Acquire(ctx, "doc", zklock.Write)
	if err != nil {
		t.Fatal(err)
	}
	readerIn := make(chan *zklock.Lease, 1)
	go func() {
		l, err := b.Acquire(ctx, "doc", zklock.Read)
		if err != nil {
			t.Error(err)
		}
		readerIn <- l
	}()
	eventually(t, "reader queued", func() bool { return len(b.Locks()) == 1 })
	r, err := w.Downgrade(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(w.Err(), zklock.ErrReleased) || r.Mode() != zklock.Read || r.Err() != nil {
		t.Fatalf("after downgrade: write Err %v, read mode %v Err %v", w.Err(), r.Mode(), r.Err())
	}
	other := <-readerIn // the reader shares with our read lease
	if other == nil {
		t.FailNow()
	}
	other.Release(ctx)

	// With a writer queued behind us, a downgrade would let it in first:
	// refused, and the write lease is kept.
	r.Release(ctx)
	w2, err := a.Acquire(ctx, "doc", zklock.Write)
	if err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go b.Acquire(wctx, "doc", zklock.Write)
	eventually(t, "writer queued", func() bool { return len(b.Locks()) == 1 })
	if _, err := w2.Downgrade(ctx); !errors.Is(err, zklock.ErrDowngradeBlocked) {
		t.Fatalf("downgrade with a writer queued = %v", err)
	}
	if w2.Err() != nil {
		t.Fatalf("write lease lost by a refused downgrade: %v", w2.Err())
	}
	if n := lockNodes(t, a.Conn(), root); len(n) != 2 {
		t.Fatalf("nodes %v, want the write lease and the queued writer", n)
	}
	w2.Release(ctx)
}

func TestIntegration_Semaphore(t *testing.T) {
	root := zktest.UniqueRoot(t)
	ctx := testCtx(t)
	clients := []*zklock.Client{newClient(t, root), newClient(t, root)}
	var in, maxIn atomic.Int64
	var wg sync.WaitGroup
	for i := 0; i < 10; i++ {
		c := clients[i%2]
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := 0; r < 3; r++ {
				l, err := c.Acquire(ctx, "pool", zklock.Limit(3))
				if err != nil {
					t.Error(err)
					return
				}
				n := in.Add(1)
				for {
					m := maxIn.Load()
					if n <= m || maxIn.CompareAndSwap(m, n) {
						break
					}
				}
				time.Sleep(5 * time.Millisecond)
				in.Add(-1)
				l.Release(ctx)
			}
		}()
	}
	wg.Wait()
	if m := maxIn.Load(); m != 3 {
		t.Fatalf("at most %d holders at once, want exactly the limit 3", m)
	}
	// The limit is stored with the resource: a client asking for another
	// limit gets a clear error, not silent over-admission.
	l, err := clients[0].Acquire(ctx, "pool", zklock.Limit(3))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release(ctx)
	if _, err := clients[1].Acquire(ctx, "pool", zklock.Limit(5)); !errors.Is(err, zklock.ErrLimitMismatch) {
		t.Fatalf("limit 5 on a limit-3 semaphore = %v", err)
	}
	if _, err := clients[1].Acquire(ctx, "pool2", zklock.Limit(0)); !errors.Is(err, zklock.ErrInvalidOption) {
		t.Fatalf("limit 0 = %v", err)
	}
	if n := lockNodes(t, clients[0].Conn(), root); len(n) != 1 {
		t.Fatalf("nodes %v", n)
	}
}

func TestIntegration_Election(t *testing.T) {
	root := zktest.UniqueRoot(t)
	ctx := testCtx(t)
	cs := []*zklock.Client{newClient(t, root), newClient(t, root), newClient(t, root)}
	obs, err := cs[0].Observe(ctx, "scheduler")
	if err != nil {
		t.Fatal(err)
	}
	if l := <-obs; l.Path != "" {
		t.Fatalf("leader before any campaign: %+v", l)
	}
	if _, err := cs[0].Leader(ctx, "scheduler"); !errors.Is(err, zklock.ErrNoLeader) {
		t.Fatalf("Leader with no candidates = %v", err)
	}
	leases := make([]*zklock.Lease, 3)
	leases[0], err = cs[0].Campaign(ctx, "scheduler", []byte("node-0"))
	if err != nil {
		t.Fatal(err)
	}
	if l := <-obs; string(l.Value) != "node-0" || l.Token != leases[0].Token() {
		t.Fatalf("observed %+v", l)
	}
	elected := make(chan int, 2)
	for i := 1; i < 3; i++ {
		go func() {
			l, err := cs[i].Campaign(ctx, "scheduler", []byte("node-"+string(rune('0'+i))))
			if err != nil {
				t.Error(err)
				return
			}
			leases[i] = l
			elected <- i
		}()
	}
	eventually(t, "candidates queued", func() bool { return len(cs[1].Locks())+len(cs[2].Locks()) == 2 })
	// Resign: the next candidate leads.
	leases[0].Release(ctx)
	next := <-elected
	if l := <-obs; string(l.Value) != "node-"+string(rune('0'+next)) {
		t.Fatalf("observed %q after resign, want node-%d", l.Value, next)
	}
	// The leader's session ends: the last candidate leads.
	cs[next].Close()
	last := <-elected
	cur, err := cs[0].Leader(ctx, "scheduler")
	if err != nil || string(cur.Value) != "node-"+string(rune('0'+last)) || cur.SessionID != cs[last].SessionID() {
		t.Fatalf("Leader = %+v, %v", cur, err)
	}
	if _, err := cs[0].Campaign(ctx, "scheduler", bytes.Repeat([]byte("x"), zklock.MaxValueLen+1)); !errors.Is(err, zklock.ErrValueTooLarge) {
		t.Fatalf("oversized value = %v", err)
	}
	leases[last].Release(ctx)
}

// A leader cut off from ZooKeeper learns it lost leadership before another
// candidate is elected.
func TestIntegration_ElectionLossBeforeNewLeader(t *testing.T) {
	root := zktest.UniqueRoot(t)
	ctx := testCtx(t)
	p := newProxy(t)
	leaderC := newClientAt(t, p.Addr(), root)
	other := newClient(t, root)
	lead, err := leaderC.Campaign(ctx, "e", []byte("a"))
	if err != nil {
		t.Fatal(err)
	}
	var lostAt time.Time
	lost := make(chan struct{})
	go func() { <-lead.Done(); lostAt = time.Now(); close(lost) }()
	elected := make(chan time.Time, 1)
	go func() {
		l, err := other.Campaign(ctx, "e", []byte("b"))
		if err != nil {
			t.Error(err)
			return
		}
		elected <- time.Now()
		l.Release(ctx)
	}()
	eventually(t, "candidate queued", func() bool { return len(other.Locks()) == 1 })
	p.Blackhole(true)
	at := <-elected
	<-lost
	if !lostAt.Before(at) {
		t.Fatalf("old leader told %v after the new one was elected", lostAt.Sub(at))
	}
	t.Logf("old leader told %v before the new leader was elected", at.Sub(lostAt).Round(time.Millisecond))
	p.Blackhole(false)
}

func TestIntegration_Revocation(t *testing.T) {
	root := zktest.UniqueRoot(t)
	ctx := testCtx(t)
	a, b := newClient(t, root), newClient(t, root)
	l, err := a.Acquire(ctx, "r")
	if err != nil {
		t.Fatal(err)
	}
	n, err := b.RequestRelease(ctx, "r")
	if err != nil || n != 1 {
		t.Fatalf("RequestRelease = %d, %v", n, err)
	}
	select {
	case <-l.RevokeRequested():
	case <-time.After(20 * time.Second):
		t.Fatal("revocation request not seen")
	}
	if l.Err() != nil {
		t.Fatal("a revocation request must not take the lease")
	}
	l.Release(ctx)
	if n, err := b.RequestRelease(ctx, "r"); err != nil || n != 0 {
		t.Fatalf("RequestRelease with no holder = %d, %v", n, err)
	}
	if !strings.HasPrefix(l.Path(), root) {
		t.Fatal(l.Path())
	}
}
