package zklock_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/zklockkit/zklockkit/zklock"
	"github.com/zklockkit/zklockkit/zktest"
)

// conflictingOptions are acquire options that ask for different things:
// each pair is refused with ErrInvalidOption, in either order.
var conflictingOptions = []struct {
	name string
	a, b zklock.AcquireOption
}{
	{"Read and Write", zklock.Read, zklock.Write},
	{"Read and Exclusive", zklock.Read, zklock.Exclusive},
	{"Write and Exclusive", zklock.Write, zklock.Exclusive},
	{"Read and Limit", zklock.Read, zklock.Limit(2)},
	{"Write and Limit", zklock.Write, zklock.Limit(2)},
	{"two limits", zklock.Limit(2), zklock.Limit(3)},
	{"Try and MaxWait", zklock.Try(), zklock.MaxWait(time.Second)},
	// Limit(0) is refused alone; with another option too, in either order
	// (a new user's probe: Limit(0) then Read was a read lock).
	{"Limit(0) and Read", zklock.Limit(0), zklock.Read},
	{"Limit(0) and Limit(3)", zklock.Limit(0), zklock.Limit(3)},
	{"Limit(-1) and Exclusive", zklock.Limit(-1), zklock.Exclusive},
}

// One option means one thing: a pair of options that ask for different
// locks is refused whatever its order, on ZooKeeper and in memory, and no
// node is left behind. (Before, the last option won: Limit then Read was
// a read lock, Read then Limit a semaphore.)
func TestIntegration_ConflictingAcquireOptionsAreRefused(t *testing.T) {
	root := zktest.UniqueRoot(t)
	ctx := testCtx(t)
	c := newClient(t, root)
	lockers := []struct {
		name string
		l    zklock.Locker
	}{{"zookeeper", c}, {"memory", zklock.NewMemoryLocker()}}
	for _, lk := range lockers {
		for _, p := range conflictingOptions {
			for i, order := range [][2]zklock.AcquireOption{{p.a, p.b}, {p.b, p.a}} {
				how := []string{"in the order named", "reversed"}[i]
				l, err := lk.l.Acquire(ctx, "conflict", order[0], order[1])
				if l != nil {
					l.Release(ctx)
				}
				if !errors.Is(err, zklock.ErrInvalidOption) {
					t.Errorf("%s: %s, %s: %v; want ErrInvalidOption", lk.name, p.name, how, err)
				}
				l, err = lk.l.AcquireAll(ctx, []string{"conflict-a", "conflict-b"}, order[0], order[1])
				if l != nil {
					l.Release(ctx)
				}
				if !errors.Is(err, zklock.ErrInvalidOption) {
					t.Errorf("%s: AcquireAll with %s, %s: %v; want ErrInvalidOption", lk.name, p.name, how, err)
				}
			}
		}
	}
	if n := lockNodes(t, c.Conn(), root); len(n) != 0 {
		t.Fatalf("refused acquires left nodes: %v", n)
	}
}

// Options that agree are taken in either order: a mode repeated, a limit
// repeated, and Exclusive with a Limit, which is the semaphore.
func TestAgreeingAcquireOptionsAreTaken(t *testing.T) {
	ctx := context.Background()
	m := zklock.NewMemoryLocker()
	for _, tc := range []struct {
		name string
		opts []zklock.AcquireOption
		want zklock.Mode
	}{
		{"Read twice", []zklock.AcquireOption{zklock.Read, zklock.Read}, zklock.Read},
		{"Limit twice", []zklock.AcquireOption{zklock.Limit(2), zklock.Limit(2)}, zklock.Semaphore},
		{"Exclusive then Limit", []zklock.AcquireOption{zklock.Exclusive, zklock.Limit(2)}, zklock.Semaphore},
		{"Limit then Exclusive", []zklock.AcquireOption{zklock.Limit(2), zklock.Exclusive}, zklock.Semaphore},
		{"MaxWait replaced", []zklock.AcquireOption{zklock.MaxWait(time.Second), zklock.MaxWait(2 * time.Second)}, zklock.Exclusive},
	} {
		l, err := m.Acquire(ctx, "agree/"+tc.name, tc.opts...)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if l.Mode() != tc.want {
			t.Errorf("%s: a %v lease; want %v", tc.name, l.Mode(), tc.want)
		}
		l.Release(ctx)
	}
}

// A nil Context is refused with ErrInvalidOption, on the caller's
// goroutine: a new user's probe saw Acquire(nil, ...) panic on a goroutine
// of the client's, which ends the process.
func TestIntegration_NilContextIsRefused(t *testing.T) {
	c := newClient(t, zktest.UniqueRoot(t))
	var nilCtx context.Context
	for _, lk := range []struct {
		name string
		l    zklock.Locker
	}{{"zookeeper", c}, {"memory", zklock.NewMemoryLocker()}} {
		if _, err := lk.l.Acquire(nilCtx, "r"); !errors.Is(err, zklock.ErrInvalidOption) {
			t.Errorf("%s: Acquire(nil) = %v; want ErrInvalidOption", lk.name, err)
		}
		if _, err := lk.l.Acquire(nilCtx, "r", zklock.Try()); !errors.Is(err, zklock.ErrInvalidOption) {
			t.Errorf("%s: a try with nil = %v; want ErrInvalidOption", lk.name, err)
		}
		if _, err := lk.l.AcquireAll(nilCtx, []string{"a", "b"}); !errors.Is(err, zklock.ErrInvalidOption) {
			t.Errorf("%s: AcquireAll(nil) = %v; want ErrInvalidOption", lk.name, err)
		}
	}
	if _, err := c.Campaign(nilCtx, "e", nil); !errors.Is(err, zklock.ErrInvalidOption) {
		t.Errorf("Campaign(nil) = %v; want ErrInvalidOption", err)
	}
	if err := c.Lead(nilCtx, "e", nil, func(context.Context) error { return nil }); !errors.Is(err, zklock.ErrInvalidOption) {
		t.Errorf("Lead(nil) = %v; want ErrInvalidOption", err)
	}
}

// A LeaseLabel whose owner record ZooKeeper could not store is
// ErrValueTooLarge on the MemoryLocker too, as on the Client.
func TestIntegration_OversizedLabelIsRefusedEverywhere(t *testing.T) {
	c := newClient(t, zktest.UniqueRoot(t))
	ctx := testCtx(t)
	label := strings.Repeat("\x00", zklock.MaxValueLen/5) // 6 bytes each in JSON
	for _, lk := range []struct {
		name string
		l    zklock.Locker
	}{{"zookeeper", c}, {"memory", zklock.NewMemoryLocker()}} {
		l, err := lk.l.Acquire(ctx, "r", zklock.LeaseLabel(label))
		if l != nil {
			_ = l.Release(ctx)
		}
		if !errors.Is(err, zklock.ErrValueTooLarge) {
			t.Errorf("%s: an oversized label = %v; want ErrValueTooLarge", lk.name, err)
		}
		l, err = lk.l.Acquire(ctx, "r", zklock.LeaseLabel(strings.Repeat("x", 1000)))
		if err != nil {
			t.Errorf("%s: a label of 1,000 bytes = %v", lk.name, err)
		} else {
			_ = l.Release(ctx)
		}
	}
}
