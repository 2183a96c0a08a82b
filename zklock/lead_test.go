package zklock_test

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/zklockkit/zklockkit/zklock"
	"github.com/zklockkit/zklockkit/zktest"
)

// terms records leadership terms: at most one at a time.
type terms struct {
	mu      sync.Mutex
	leading string
	overlap int
	by      map[string]int
	total   int
}

func (tm *terms) begin(who string) {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	if tm.leading != "" {
		tm.overlap++
	}
	tm.leading = who
	tm.by[who]++
	tm.total++
}

func (tm *terms) end(who string) {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	if tm.leading == who {
		tm.leading = ""
	}
}

// Three processes lead in turn: each term runs fn alone; when fn returns
// the leader resigns and campaigns again, so every candidate leads.
func TestIntegration_LeadInTurn(t *testing.T) {
	root := zktest.UniqueRoot(t)
	ctx, cancel := context.WithCancel(testCtx(t))
	defer cancel()
	tm := &terms{by: map[string]int{}}
	const want = 12
	var wg sync.WaitGroup
	errs := make(chan error, 3)
	for _, who := range []string{"a", "b", "c"} {
		c := newClient(t, root)
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- c.Lead(ctx, "scheduler", []byte(who), func(lctx context.Context) error {
				tm.begin(who)
				defer tm.end(who)
				l, err := c.Leader(lctx, "scheduler")
				if err != nil || string(l.Value) != who {
					t.Errorf("%s leads, but Leader = %q, %v", who, l.Value, err)
				}
				time.Sleep(20 * time.Millisecond)
				tm.mu.Lock()
				done := tm.total >= want
				tm.mu.Unlock()
				if done {
					cancel()
				}
				return nil
			}, zklock.RequeueDelay(10*time.Millisecond))
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Lead returned %v; want the context's error", err)
		}
	}
	if tm.overlap != 0 {
		t.Fatalf("%d terms overlapped another", tm.overlap)
	}
	for _, who := range []string{"a", "b", "c"} {
		if tm.by[who] == 0 {
			t.Fatalf("%s never led in %d terms: %v", who, tm.total, tm.by)
		}
	}
	t.Logf("%d terms: %v", tm.total, tm.by)
}

// A leader cut off from ZooKeeper is told (its fn's context ends) before
// anyone else leads, and a new leader is elected within the bound of
// docs/guarantees.md (zklock.LeaderGapBound) on the shared server.
func TestIntegration_LeadLossBeforeTakeover(t *testing.T) {
	root := zktest.UniqueRoot(t)
	ctx, cancel := context.WithCancel(testCtx(t))
	defer cancel()
	p := newProxy(t)
	a := newClientAt(t, p.Addr(), root)
	b := newClient(t, root)
	aLost, bLeads := leaderAndCandidate(ctx, t, a, b)
	time.Sleep(200 * time.Millisecond)
	cut := time.Now()
	p.Blackhole(true)
	defer p.Blackhole(false)
	eventually(t, "b leads", func() bool { return bLeads.Load() != 0 })
	lost, led := time.Unix(0, aLost.Load()), time.Unix(0, bLeads.Load())
	if aLost.Load() == 0 || !lost.Before(led) {
		t.Fatalf("a told of its loss at %v, b leads at %v: a must know first", lost, led)
	}
	gap := led.Sub(cut)
	t.Logf("a told %v after the cut, b leads %v after it (%v later)", lost.Sub(cut), gap, led.Sub(lost))
	// 500ms: the shared server's tickTime (main_test.go).
	if bound := zklock.LeaderGapBound(testSessionTimeout, 500*time.Millisecond, false); gap > bound {
		t.Fatalf("new leader %v after the old one was cut off; want within %v (docs/guarantees.md)", gap, bound)
	}
}

// StopOnError returns fn's error; bad options and a nil fn are refused.
func TestIntegration_LeadStopOnError(t *testing.T) {
	root := zktest.UniqueRoot(t)
	ctx := testCtx(t)
	c := newClient(t, root)
	boom := errors.New("boom")
	if err := c.Lead(ctx, "e", nil, func(context.Context) error { return boom }, zklock.StopOnError()); !errors.Is(err, boom) {
		t.Fatalf("Lead with StopOnError = %v; want fn's error", err)
	}
	if err := c.Lead(ctx, "e", nil, nil); !errors.Is(err, zklock.ErrInvalidOption) {
		t.Fatalf("Lead with no fn = %v", err)
	}
	if err := c.Lead(ctx, "", nil, func(context.Context) error { return nil }); !errors.Is(err, zklock.ErrInvalidResource) {
		t.Fatalf("Lead of a bad name = %v", err)
	}
	if n := lockNodes(t, c.Conn(), root); len(n) != 0 {
		t.Fatalf("nodes left: %v", n)
	}
}

// A panic in Lead's function resigns before it goes on: another
// candidate leads at once, and no node is left.
func TestIntegration_LeadPanicResigns(t *testing.T) {
	root := zktest.UniqueRoot(t)
	ctx := testCtx(t)
	c, other := newClient(t, root), newClient(t, root)
	func() {
		defer func() {
			if r := recover(); r != "boom" {
				t.Fatalf("recovered %v; want fn's panic", r)
			}
		}()
		_ = c.Lead(ctx, "e", []byte("c"), func(context.Context) error { panic("boom") })
	}()
	if n := lockNodes(t, c.Conn(), root); len(n) != 0 {
		t.Fatalf("nodes left after the panic: %v", n)
	}
	l, err := other.Campaign(ctx, "e", []byte("other"), zklock.Try())
	if err != nil {
		t.Fatalf("another candidate after the panic: %v", err)
	}
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
}

// Proclaim changes the leader's value without a new election; Observe
// reports it, as it reports a change of leader.
func TestIntegration_ProclaimAndObserve(t *testing.T) {
	root := zktest.UniqueRoot(t)
	ctx := testCtx(t)
	c := newClient(t, root)
	obs, err := newClient(t, root).Observe(ctx, "e")
	if err != nil {
		t.Fatal(err)
	}
	next := func() zklock.Leader {
		t.Helper()
		select {
		case l := <-obs:
			return l
		case <-time.After(5 * time.Second):
			t.Fatal("Observe sent nothing")
		}
		return zklock.Leader{}
	}
	if l := next(); l.Path != "" {
		t.Fatalf("first observation %+v; want no leader", l)
	}
	l, err := c.Campaign(ctx, "e", []byte("v1"))
	if err != nil {
		t.Fatal(err)
	}
	if got := next(); string(got.Value) != "v1" || got.Path != l.Path() {
		t.Fatalf("observed %+v; want v1 at %s", got, l.Path())
	}
	if err := l.Proclaim(ctx, []byte("v2")); err != nil {
		t.Fatal(err)
	}
	if got := next(); string(got.Value) != "v2" || got.Path != l.Path() {
		t.Fatalf("observed %+v after Proclaim; want v2 at %s", got, l.Path())
	}
	if got, err := c.Leader(ctx, "e"); err != nil || string(got.Value) != "v2" || got.Token != l.Token() {
		t.Fatalf("Leader = %+v, %v; want v2 with the lease's token", got, err)
	}
	plain, err := c.Acquire(ctx, "x")
	if err != nil {
		t.Fatal(err)
	}
	if err := plain.Proclaim(ctx, []byte("no")); !errors.Is(err, zklock.ErrInvalidOption) {
		t.Fatalf("Proclaim on a lock lease = %v", err)
	}
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if err := l.Proclaim(ctx, []byte("late")); !errors.Is(err, zklock.ErrReleased) {
		t.Fatalf("Proclaim after resigning = %v; want ErrReleased", err)
	}
	if got := next(); got.Path != "" {
		t.Fatalf("observed %+v after resigning; want no leader", got)
	}
}

// A zklock Lead and a Curator LeaderSelector on one raw path elect one
// leader at a time across both languages.
func TestIntegration_InteropCuratorLeaderSelector(t *testing.T) {
	root := zktest.UniqueRoot(t)
	ctx, cancel := context.WithCancel(testCtx(t))
	defer cancel()
	path := root + "/election"
	c := newClient(t, root)
	leading := make(chan bool, 8)
	done := make(chan error, 1)
	go func() {
		done <- c.Lead(ctx, path, []byte("zklock"), func(lctx context.Context) error {
			leading <- true
			<-lctx.Done()
			leading <- false
			return nil
		}, zklock.RawPath(), zklock.MutexLayout(), zklock.RequeueDelay(10*time.Millisecond))
	}()
	if !<-leading {
		t.Fatal("zklock did not lead first")
	}
	sel := startCurator(t, path, "selector")
	sel.quiet(500 * time.Millisecond) // Curator waits while zklock leads
	// End zklock's term from outside, as an operator would: its node
	// goes, its fn's context ends, and it campaigns again behind Curator.
	l, err := c.Leader(ctx, path, zklock.RawPath())
	if err != nil || string(l.Value) != "zklock" {
		t.Fatalf("Leader = %+v, %v; want zklock", l, err)
	}
	if err := c.Conn().Delete(l.Path, -1); err != nil { // zklock's leadership ends
		t.Fatal(err)
	}
	if <-leading {
		t.Fatal("zklock's term did not end")
	}
	sel.expect("ACQUIRED", 30*time.Second)
	l, err = c.Leader(ctx, path, zklock.RawPath())
	if err != nil || l.SessionID == c.SessionID() {
		t.Fatalf("Leader while Curator leads = %+v, %v", l, err)
	}
	select {
	case <-leading:
		t.Fatal("zklock led while Curator's LeaderSelector led")
	case <-time.After(500 * time.Millisecond):
	}
	sel.release()
	select {
	case v := <-leading:
		if !v {
			t.Fatal("unexpected end of term")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("zklock did not lead again after Curator resigned")
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Lead = %v", err)
	}
}

// An observer reports "no leader" only when no candidate is queued: a
// leader that resigns while another candidate joins hands over without a
// zero Leader in between (the observer, woken by the join, may read the
// leaving node's data after it is gone; it must list again, not report
// the gap).
func TestIntegration_ObserveHandOverHasNoGap(t *testing.T) {
	root := zktest.UniqueRoot(t)
	ctx := testCtx(t)
	a, b := newClient(t, root), newClient(t, root)
	obs, err := newClient(t, root).Observe(ctx, "e")
	if err != nil {
		t.Fatal(err)
	}
	seen := make(chan zklock.Leader, 1024)
	go func() {
		for l := range obs {
			seen <- l
		}
		close(seen)
	}()
	if l := <-seen; l.Path != "" {
		t.Fatalf("first observation %+v; want no leader", l)
	}
	const rounds = 40
	cur, err := a.Campaign(ctx, "e", []byte("0"))
	if err != nil {
		t.Fatal(err)
	}
	clients := [2]*zklock.Client{a, b}
	for i := 1; i <= rounds; i++ {
		next := make(chan *zklock.Lease, 1)
		go func() {
			l, err := clients[i%2].Campaign(ctx, "e", []byte(strconv.Itoa(i)))
			if err != nil {
				t.Error(err)
			}
			next <- l
		}()
		// Resign once the next candidate is queued: the observer, woken
		// by its node, lists both and reads the leader's data, which the
		// resign may delete in between.
		for len(clients[i%2].Locks()) == 0 {
			time.Sleep(50 * time.Microsecond)
		}
		time.Sleep(time.Duration(i%5) * 200 * time.Microsecond)
		if err := cur.Release(ctx); err != nil {
			t.Fatal(err)
		}
		if cur = <-next; cur == nil {
			return
		}
	}
	var last zklock.Leader
	deadline := time.After(10 * time.Second)
	for string(last.Value) != strconv.Itoa(rounds) {
		select {
		case l := <-seen:
			if l.Path == "" {
				t.Fatalf("observed no leader after %q, while the next candidate was queued", last.Value)
			}
			last = l
		case <-deadline:
			t.Fatalf("the observer's last value is %q; want %d", last.Value, rounds)
		}
	}
}
