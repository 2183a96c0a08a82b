package lockertest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/zklockkit/zklockkit/zklock"
)

// Bound is how long the suite lets a Locker take to hand a free lock to a
// waiter, or to answer a try.
const Bound = 5 * time.Second

// Option adds checks that not every Locker supports.
type Option func(*config)

type config struct {
	modes     bool
	semaphore bool
	lose      func(t *testing.T, l *zklock.Lease)
}

// Modes checks read/write locks: readers share, a writer excludes.
func Modes() Option { return func(c *config) { c.modes = true } }

// Semaphore checks zklock.Limit: at most n holders.
func Semaphore() Option { return func(c *config) { c.semaphore = true } }

// Lose checks loss: lose must make the backend lose l (delete its node,
// expire its session...); the suite then expects Done closed, an Err
// matching zklock.ErrLeaseLost, and the lease's Context cancelled.
func Lose(lose func(t *testing.T, l *zklock.Lease)) Option {
	return func(c *config) { c.lose = lose }
}

// Run runs the suite. newLockers returns two Lockers of one backend that
// contend as two processes would (they may be one Locker twice).
func Run(t *testing.T, newLockers func(t *testing.T) (a, b zklock.Locker), opts ...Option) {
	var cfg config
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	tests := []struct {
		name string
		run  func(t *testing.T, a, b zklock.Locker, r string)
		on   bool
	}{
		{"AcquireRelease", acquireRelease, true},
		{"TryBusy", tryBusy, true},
		{"WaiterHolds", waiterHolds, true},
		{"MaxWait", maxWait, true},
		{"CancelWhileWaiting", cancelWhileWaiting, true},
		{"TokensGrow", tokensGrow, true},
		{"Reentry", reentry, true},
		{"AcquireAllAllOrNothing", allOrNothing, true},
		{"BadInput", badInput, true},
		{"ReadersShareWritersExclude", modes, cfg.modes},
		{"Semaphore", semaphore, cfg.semaphore},
		{"ModesExcludeEachOther", mixedModes, cfg.modes && cfg.semaphore},
		{"Lost", func(t *testing.T, a, b zklock.Locker, r string) { lost(t, a, r, cfg.lose) }, cfg.lose != nil},
	}
	for _, tc := range tests {
		if !tc.on {
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			a, b := newLockers(t)
			tc.run(t, a, b, "lockertest/"+strings.ReplaceAll(t.Name(), "/", "-"))
		})
	}
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return c
}

func must(t *testing.T, l *zklock.Lease, err error) *zklock.Lease {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// held fails the test on an acquire's error, and returns its lease.
func held(t *testing.T) func(*zklock.Lease, error) *zklock.Lease {
	return func(l *zklock.Lease, err error) *zklock.Lease {
		t.Helper()
		return must(t, l, err)
	}
}

func release(t *testing.T, l *zklock.Lease) {
	t.Helper()
	if err := l.Release(context.Background()); err != nil {
		t.Fatalf("Release: %v", err)
	}
}

func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// async runs an acquire on its own goroutine.
func async(f func() (*zklock.Lease, error)) <-chan result {
	ch := make(chan result, 1)
	go func() {
		l, err := f()
		ch <- result{l, err}
	}()
	return ch
}

type result struct {
	l   *zklock.Lease
	err error
}

func within(t *testing.T, ch <-chan result, what string) result {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(Bound):
		t.Fatalf("%s: no answer within %v", what, Bound)
	}
	return result{}
}

func quiet(t *testing.T, ch <-chan result, what string) {
	t.Helper()
	select {
	case r := <-ch:
		t.Fatalf("%s returned (%v, %v) while it should wait", what, r.l, r.err)
	case <-time.After(100 * time.Millisecond):
	}
}

func acquireRelease(t *testing.T, a, _ zklock.Locker, r string) {
	c := ctx(t)
	l := held(t)(a.Acquire(c, r))
	if l.Err() != nil || closed(l.Done()) {
		t.Fatalf("a held lease: Err %v, Done closed %v", l.Err(), closed(l.Done()))
	}
	if l.Resource() != r || l.Token() <= 0 || l.Path() == "" {
		t.Fatalf("lease Resource %q Token %d Path %q; want %q, a positive token, a path", l.Resource(), l.Token(), l.Path(), r)
	}
	if ps := l.Parts(); len(ps) != 1 || ps[0].Resource != r || ps[0].Token != l.Token() {
		t.Fatalf("Parts %+v", ps)
	}
	lctx := l.Context(c)
	if zklock.LeaseFromContext(lctx) == nil {
		t.Fatal("Lease.Context carries no lease")
	}
	release(t, l)
	if !closed(l.Done()) || !errors.Is(l.Err(), zklock.ErrReleased) || lctx.Err() == nil {
		t.Fatalf("after Release: Done closed %v, Err %v, Context %v", closed(l.Done()), l.Err(), lctx.Err())
	}
	if err := l.Release(c); !errors.Is(err, zklock.ErrReleased) {
		t.Fatalf("second Release = %v, want ErrReleased", err)
	}
}

func tryBusy(t *testing.T, a, b zklock.Locker, r string) {
	c := ctx(t)
	l := held(t)(a.Acquire(c, r))
	got := within(t, async(func() (*zklock.Lease, error) { return b.Acquire(c, r, zklock.Try()) }), "a try of a held lock")
	if !errors.Is(got.err, zklock.ErrLocked) {
		t.Fatalf("try of a held lock = %v, want ErrLocked", got.err)
	}
	release(t, l)
	got = within(t, async(func() (*zklock.Lease, error) { return b.Acquire(c, r, zklock.Try()) }), "a try of a free lock")
	release(t, must(t, got.l, got.err))
}

func waiterHolds(t *testing.T, a, b zklock.Locker, r string) {
	c := ctx(t)
	l := held(t)(a.Acquire(c, r))
	w := async(func() (*zklock.Lease, error) { return b.Acquire(c, r) })
	quiet(t, w, "an acquire of a held lock")
	release(t, l)
	got := within(t, w, "the waiter, once the lock was released")
	release(t, must(t, got.l, got.err))
}

func maxWait(t *testing.T, a, b zklock.Locker, r string) {
	c := ctx(t)
	l := held(t)(a.Acquire(c, r))
	defer release(t, l)
	got := within(t, async(func() (*zklock.Lease, error) { return b.Acquire(c, r, zklock.MaxWait(200*time.Millisecond)) }), "MaxWait")
	if !errors.Is(got.err, zklock.ErrWaitTimeout) {
		t.Fatalf("MaxWait on a held lock = %v, want ErrWaitTimeout", got.err)
	}
}

func cancelWhileWaiting(t *testing.T, a, b zklock.Locker, r string) {
	c := ctx(t)
	l := held(t)(a.Acquire(c, r))
	wctx, cancel := context.WithCancel(c)
	w := async(func() (*zklock.Lease, error) { return b.Acquire(wctx, r) })
	quiet(t, w, "an acquire of a held lock")
	cancel()
	if got := within(t, w, "a cancelled wait"); !errors.Is(got.err, context.Canceled) {
		t.Fatalf("cancelled wait = %v, want context.Canceled", got.err)
	}
	release(t, l)
	// The cancelled waiter left nothing that blocks the next.
	got := within(t, async(func() (*zklock.Lease, error) { return b.Acquire(c, r, zklock.Try()) }), "a try after the cancel")
	release(t, must(t, got.l, got.err))
}

func tokensGrow(t *testing.T, a, b zklock.Locker, r string) {
	c := ctx(t)
	var last int64
	for i := range 4 {
		lk := a
		if i%2 == 1 {
			lk = b
		}
		l := held(t)(lk.Acquire(c, r))
		if l.Token() <= last {
			t.Fatalf("lease %d has token %d, not above %d", i, l.Token(), last)
		}
		last = l.Token()
		release(t, l)
	}
}

func reentry(t *testing.T, a, b zklock.Locker, r string) {
	c := ctx(t)
	outer := held(t)(a.Acquire(c, r))
	got := within(t, async(func() (*zklock.Lease, error) { return a.Acquire(outer.Context(c), r) }), "a re-entry")
	inner := held(t)(got.l, got.err)
	// Each Lease ends when it is released, the node with the last one:
	// its Err, Done and contexts say so, whichever goes first, with
	// channels and contexts asked for before and after.
	innerDone, innerCtx := inner.Done(), inner.Context(c)
	release(t, inner)
	if !closed(innerDone) || !closed(inner.Done()) || !errors.Is(inner.Err(), zklock.ErrReleased) ||
		innerCtx.Err() == nil || inner.Context(c).Err() == nil {
		t.Fatalf("the re-entry, released: Done closed %v, %v; Err %v; Context %v, %v; want it ended",
			closed(innerDone), closed(inner.Done()), inner.Err(), innerCtx.Err(), inner.Context(c).Err())
	}
	if outer.Err() != nil || closed(outer.Done()) {
		t.Fatalf("the outer lease after the re-entry's release: Err %v, Done closed %v; want it held", outer.Err(), closed(outer.Done()))
	}
	if got := within(t, async(func() (*zklock.Lease, error) { return b.Acquire(c, r, zklock.Try()) }), "a try"); !errors.Is(got.err, zklock.ErrLocked) {
		t.Fatalf("after the inner release, another try = %v; want ErrLocked (the outer lease holds)", got.err)
	}
	// The outer lease released first: it ends, the re-entry holds on.
	got = within(t, async(func() (*zklock.Lease, error) { return a.Acquire(outer.Context(c), r) }), "a second re-entry")
	inner = held(t)(got.l, got.err)
	outerDone := outer.Done()
	release(t, outer)
	if !closed(outerDone) || !errors.Is(outer.Err(), zklock.ErrReleased) {
		t.Fatalf("the outer lease, released first: Done closed %v, Err %v; want it ended", closed(outerDone), outer.Err())
	}
	if inner.Err() != nil || closed(inner.Done()) || inner.Context(c).Err() != nil {
		t.Fatalf("the re-entry after the outer release: Err %v, Done closed %v; want it held", inner.Err(), closed(inner.Done()))
	}
	if got := within(t, async(func() (*zklock.Lease, error) { return b.Acquire(c, r, zklock.Try()) }), "a try"); !errors.Is(got.err, zklock.ErrLocked) {
		t.Fatalf("after the outer release, another try = %v; want ErrLocked (the re-entry holds)", got.err)
	}
	release(t, inner)
}

func allOrNothing(t *testing.T, a, b zklock.Locker, r string) {
	c := ctx(t)
	x, y := r+"/x", r+"/y"
	busy := held(t)(b.Acquire(c, y))
	got := within(t, async(func() (*zklock.Lease, error) { return a.AcquireAll(c, []string{x, y}, zklock.Try()) }), "a try of {x, y}")
	if !errors.Is(got.err, zklock.ErrLocked) {
		t.Fatalf("try of {x, y} with y held = %v, want ErrLocked", got.err)
	}
	got = within(t, async(func() (*zklock.Lease, error) { return b.Acquire(c, x, zklock.Try()) }), "a try of x")
	release(t, must(t, got.l, got.err)) // x was not kept
	release(t, busy)
	all := held(t)(a.AcquireAll(c, []string{y, x}))
	if ps := all.Parts(); len(ps) != 2 {
		t.Fatalf("AcquireAll parts %+v", ps)
	}
	release(t, all)
}

func badInput(t *testing.T, a, _ zklock.Locker, r string) {
	c := ctx(t)
	for _, tc := range []struct {
		what string
		err  error
		f    func() (*zklock.Lease, error)
	}{
		{"an empty name", zklock.ErrInvalidResource, func() (*zklock.Lease, error) { return a.Acquire(c, "") }},
		{"a name listed twice", zklock.ErrInvalidResource, func() (*zklock.Lease, error) { return a.AcquireAll(c, []string{r, r}) }},
		{"no resources", zklock.ErrInvalidResource, func() (*zklock.Lease, error) { return a.AcquireAll(c, nil) }},
		{"Try with MaxWait", zklock.ErrInvalidOption, func() (*zklock.Lease, error) {
			return a.Acquire(c, r, zklock.Try(), zklock.MaxWait(time.Second))
		}},
		{"a limit of 0", zklock.ErrInvalidOption, func() (*zklock.Lease, error) { return a.Acquire(c, r, zklock.Limit(0)) }},
	} {
		if l, err := tc.f(); !errors.Is(err, tc.err) || l != nil {
			t.Errorf("%s: %v, %v; want %v", tc.what, l, err, tc.err)
		}
	}
}

func modes(t *testing.T, a, b zklock.Locker, r string) {
	c := ctx(t)
	r1 := held(t)(a.Acquire(c, r, zklock.Read))
	r2 := within(t, async(func() (*zklock.Lease, error) { return b.Acquire(c, r, zklock.Read) }), "a second reader")
	must(t, r2.l, r2.err)
	if got := within(t, async(func() (*zklock.Lease, error) { return b.Acquire(c, r, zklock.Write, zklock.Try()) }), "a writer's try"); !errors.Is(got.err, zklock.ErrLocked) {
		t.Fatalf("writer's try while read = %v, want ErrLocked", got.err)
	}
	w := async(func() (*zklock.Lease, error) { return b.Acquire(c, r, zklock.Write) })
	quiet(t, w, "a writer while readers hold")
	release(t, r1)
	release(t, r2.l)
	got := within(t, w, "the writer, once the readers left")
	release(t, must(t, got.l, got.err))
}

func semaphore(t *testing.T, a, b zklock.Locker, r string) {
	c := ctx(t)
	var holders []*zklock.Lease
	for i := range 2 {
		lk := a
		if i == 1 {
			lk = b
		}
		holders = append(holders, held(t)(lk.Acquire(c, r, zklock.Limit(2))))
	}
	w := async(func() (*zklock.Lease, error) { return a.Acquire(c, r, zklock.Limit(2)) })
	quiet(t, w, "a third holder of a limit of 2")
	release(t, holders[0]) // the first holder leaves: its slot goes to the waiter
	got := within(t, w, "the waiter, once a slot was free")
	release(t, must(t, got.l, got.err))
	release(t, holders[1])
}

// mixedModes: on one resource, leases of two modes conflict unless both
// read or both take a semaphore slot: a try of each mode fails with
// ErrLocked while a lease of another holds, or waits in the queue ahead of
// it. Semaphore waiters behind an exclusive holder wait, and as many as
// the limit hold once it leaves.
func mixedModes(t *testing.T, a, b zklock.Locker, r string) {
	c := ctx(t)
	modes := []struct {
		name string
		opts []zklock.AcquireOption
	}{
		{"exclusive", nil},
		{"read", []zklock.AcquireOption{zklock.Read}},
		{"write", []zklock.AcquireOption{zklock.Write}},
		{"limit 3", []zklock.AcquireOption{zklock.Limit(3)}},
	}
	for i, h := range modes {
		for j, w := range modes {
			res := fmt.Sprintf("%s-%d-%d", r, i, j)
			hl := held(t)(a.Acquire(c, res, h.opts...))
			got := within(t, async(func() (*zklock.Lease, error) {
				return b.Acquire(c, res, append(w.opts, zklock.Try())...)
			}), w.name+"'s try")
			share := i == j && (h.name == "read" || h.name == "limit 3")
			switch {
			case share && got.err != nil:
				t.Errorf("%s's try while %s holds = %v; want it held", w.name, h.name, got.err)
			case !share && !errors.Is(got.err, zklock.ErrLocked):
				t.Errorf("%s's try while %s holds = %v, %v; want ErrLocked", w.name, h.name, got.l, got.err)
			}
			if got.err == nil {
				release(t, got.l)
			}
			release(t, hl)
		}
	}
	// A semaphore holder, then an exclusive waiter: a semaphore acquire
	// that comes after the waiter waits behind it, slots free or not.
	res := r + "-behind-waiter"
	s1 := held(t)(a.Acquire(c, res, zklock.Limit(3)))
	x := async(func() (*zklock.Lease, error) { return b.Acquire(c, res) })
	quiet(t, x, "an exclusive acquire while a semaphore slot is held")
	if got := within(t, async(func() (*zklock.Lease, error) {
		return b.Acquire(c, res, zklock.Limit(3), zklock.Try())
	}), "a semaphore try behind an exclusive waiter"); !errors.Is(got.err, zklock.ErrLocked) {
		t.Errorf("semaphore try behind an exclusive waiter = %v, %v; want ErrLocked", got.l, got.err)
	}
	release(t, s1)
	gx := within(t, x, "the exclusive waiter, once the semaphore holder left")
	release(t, must(t, gx.l, gx.err))

	// Behind an exclusive holder, two semaphore waiters of a limit of 2
	// wait, and both hold once it leaves.
	res = r + "-behind-holder"
	xl := held(t)(a.Acquire(c, res))
	w1 := async(func() (*zklock.Lease, error) { return b.Acquire(c, res, zklock.Limit(2)) })
	w2 := async(func() (*zklock.Lease, error) { return a.Acquire(c, res, zklock.Limit(2)) })
	quiet(t, w1, "a semaphore acquire behind an exclusive holder")
	quiet(t, w2, "a second one")
	release(t, xl)
	g1 := within(t, w1, "the first semaphore waiter, once the exclusive holder left")
	g2 := within(t, w2, "the second one")
	release(t, must(t, g1.l, g1.err))
	release(t, must(t, g2.l, g2.err))
}

func lost(t *testing.T, a zklock.Locker, r string, lose func(*testing.T, *zklock.Lease)) {
	c := ctx(t)
	l := held(t)(a.Acquire(c, r))
	lctx := l.Context(c)
	lose(t, l)
	select {
	case <-l.Done():
	case <-time.After(Bound):
		t.Fatalf("lease not lost %v after the backend lost it", Bound)
	}
	if !errors.Is(l.Err(), zklock.ErrLeaseLost) || lctx.Err() == nil {
		t.Fatalf("lost lease: Err %v, Context %v", l.Err(), lctx.Err())
	}
	if err := context.Cause(lctx); !errors.Is(err, zklock.ErrLeaseLost) {
		t.Fatalf("the lease's Context ended with cause %v, want the loss", err)
	}
	if err := l.Release(c); !errors.Is(err, zklock.ErrLeaseLost) {
		t.Fatalf("Release of a lost lease = %v, want its loss", err)
	}
}
