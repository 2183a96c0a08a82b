package fence_test

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/zklockkit/zklockkit/fence"
	"github.com/zklockkit/zklockkit/zklock"
)

// The fence's rule on each engine: the first token is stored, an equal one
// and a larger one are accepted, a smaller one is refused with a
// *StaleError naming what is stored, and a refused or rolled-back Guard
// leaves the stored token as it was.
func TestGuard(t *testing.T) {
	for _, e := range engines(t) {
		t.Run(e.name, func(t *testing.T) {
			ctx := testCtx(t)
			const r = "accounts/42"
			guard := func(tok int64, commit bool) error {
				tx, err := e.db.BeginTx(ctx, nil)
				must(t, err)
				defer tx.Rollback()
				if err := e.fence.Guard(ctx, tx, fence.NewToken(r, tok)); err != nil {
					return err
				}
				if commit {
					return tx.Commit()
				}
				return tx.Rollback()
			}
			steps := []struct {
				tok    int64
				commit bool
				stale  bool
				stored int64
			}{
				{tok: 10, commit: true, stored: 10},
				{tok: 10, commit: true, stored: 10},             // equal: the same lease again
				{tok: 11, commit: true, stored: 11},             // larger
				{tok: 9, commit: true, stale: true, stored: 11}, // smaller
				{tok: 20, commit: false, stored: 11},            // rolled back with the transaction
				{tok: 12, commit: true, stored: 12},             // so 12 is still newer than anything written
			}
			for i, s := range steps {
				err := guard(s.tok, s.commit)
				var se *fence.StaleError
				switch {
				case s.stale && (!errors.Is(err, fence.ErrStaleToken) || !errors.As(err, &se) || se.Stored != 11 || se.Token != 9 || se.Resource != r):
					t.Fatalf("step %d: token %d: %v, want a *StaleError holding 11", i, s.tok, fmtErr(err))
				case !s.stale && err != nil:
					t.Fatalf("step %d: token %d: %v", i, s.tok, err)
				}
				if got := e.stored(t, r); got != s.stored {
					t.Fatalf("step %d: stored %d, want %d", i, got, s.stored)
				}
			}
			if got := e.stored(t, "accounts/43"); got != 0 {
				t.Fatalf("another resource has token %d", got)
			}
			// The longest resource accepted fits the engine's key.
			long := strings.Repeat("é", fence.MaxResourceLen/2)
			tx, err := e.db.BeginTx(ctx, nil)
			must(t, err)
			must(t, e.fence.Guard(ctx, tx, fence.NewToken(long, 3)))
			must(t, tx.Commit())
			if got := e.stored(t, long); got != 3 {
				t.Fatalf("long resource: stored %d", got)
			}
		})
	}
}

// Guard refuses what cannot fence: a *sql.DB (the check would commit
// alone), invalid tokens, and leases whose token orders nothing: read,
// semaphore and multi-resource leases. Exclusive, write and election
// leases are accepted.
func TestGuardRefuses(t *testing.T) {
	e := sqliteEngine(t)
	ctx := testCtx(t)
	tx, err := e.db.BeginTx(ctx, nil)
	must(t, err)
	defer tx.Rollback()
	if err := e.fence.Guard(ctx, e.db, fence.NewToken("r", 1)); !errors.Is(err, fence.ErrNotInTransaction) {
		t.Fatalf("*sql.DB: %v", err)
	}
	for _, tok := range []fence.Token{
		fence.NewToken("r", 0), fence.NewToken("r", -5), fence.NewToken("", 3),
		fence.NewToken("bad\x00name", 3), fence.NewToken("\xff", 3), fence.NewToken(strings.Repeat("x", fence.MaxResourceLen+1), 3),
	} {
		if err := e.fence.Guard(ctx, tx, tok); !errors.Is(err, fence.ErrInvalidToken) {
			t.Fatalf("%q: %v, want ErrInvalidToken", tok.String(), err)
		}
	}
	if err := e.fence.Guard(ctx, tx, nil); !errors.Is(err, fence.ErrNoToken) {
		t.Fatalf("nil holder: %v", err)
	}

	c := newClient(t)
	var mu sync.Mutex
	acquire := func(f func() (*zklock.Lease, error)) *zklock.Lease {
		mu.Lock()
		defer mu.Unlock()
		l, err := f()
		must(t, err)
		t.Cleanup(func() { l.Release(context.Background()) })
		return l
	}
	read := acquire(func() (*zklock.Lease, error) { return c.Acquire(ctx, "rw", zklock.Read) })
	sema := acquire(func() (*zklock.Lease, error) { return c.Acquire(ctx, "sema", zklock.Limit(2)) })
	multiRead := acquire(func() (*zklock.Lease, error) { return c.AcquireAll(ctx, []string{"ra", "rb"}, zklock.Read) })
	for _, l := range []*zklock.Lease{read, sema, multiRead} {
		if err := e.fence.Guard(ctx, tx, l); !errors.Is(err, fence.ErrUnfenceable) {
			t.Fatalf("%s lease of %q: %v, want ErrUnfenceable", l.Mode(), l.Resource(), err)
		}
	}
	write := acquire(func() (*zklock.Lease, error) { return c.Acquire(ctx, "w", zklock.Write) })
	excl := acquire(func() (*zklock.Lease, error) { return c.Acquire(ctx, "x") })
	leader := acquire(func() (*zklock.Lease, error) { return c.Campaign(ctx, "leader", []byte("me")) })
	multi := acquire(func() (*zklock.Lease, error) { return c.AcquireAll(ctx, []string{"a", "b"}) })
	for _, l := range []*zklock.Lease{write, excl, leader, multi} {
		if err := e.fence.Guard(ctx, tx, l); err != nil {
			t.Fatalf("%s lease of %q: %v", l.Mode(), l.Resource(), err)
		}
	}
	must(t, tx.Commit())
	if got := e.stored(t, "leader"); got != leader.Token() {
		t.Fatalf("leader: stored %d, want %d", got, leader.Token())
	}
}

// GuardFromContext uses the lease a context carries (as every adapter
// hands it to the code it runs), and says ErrNoToken without one.
func TestGuardFromContext(t *testing.T) {
	e := postgresEngine(t)
	ctx := testCtx(t)
	c := newClient(t)
	l, err := c.Acquire(ctx, "orders/7")
	must(t, err)
	defer l.Release(ctx)
	tx, err := e.db.BeginTx(ctx, nil)
	must(t, err)
	defer tx.Rollback()
	if err := e.fence.GuardFromContext(ctx, tx); !errors.Is(err, fence.ErrNoToken) {
		t.Fatalf("no lease: %v", err)
	}
	must(t, e.fence.GuardFromContext(l.Context(ctx), tx))
	must(t, tx.Commit())
	if got := e.stored(t, "orders/7"); got != l.Token() {
		t.Fatalf("stored %d, want the lease's token %d", got, l.Token())
	}
}

// Install is idempotent, also when several sessions install the same new
// table at once (PostgreSQL's CREATE TABLE IF NOT EXISTS alone is not);
// it tells the dialect; options are checked.
func TestInstall(t *testing.T) {
	ctx := testCtx(t)
	pg, err := sql.Open("pgx", pgCluster.DSN())
	must(t, err)
	defer pg.Close()
	lite := sqliteEngine(t).db
	table := "install_" + suffix()
	for _, db := range []*sql.DB{pg, lite} {
		var wg sync.WaitGroup
		errs := make([]error, 8)
		fences := make([]*fence.Fence, 8)
		for i := range errs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				fences[i], errs[i] = fence.Install(ctx, db, fence.WithTable(table))
			}()
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			t.Fatal(err)
		}
		if f := fences[0]; f.Table() != table || !strings.Contains(f.Schema(), table) {
			t.Fatalf("table %q, schema %q", f.Table(), f.Schema())
		}
	}
	f, err := fence.Install(ctx, pg)
	must(t, err)
	if f.Dialect() != fence.Postgres || f.Table() != fence.DefaultTable {
		t.Fatalf("postgres: %s %s", f.Dialect(), f.Table())
	}
	f, err = fence.Install(ctx, lite, fence.WithDialect(fence.SQLite))
	must(t, err)
	if f.Dialect() != fence.SQLite {
		t.Fatalf("sqlite: %s", f.Dialect())
	}
	for _, name := range []string{"", "Fence", "1fence", "a.b.c", "fence;drop", `"x"`, strings.Repeat("a", 64)} {
		if _, err := fence.New(fence.WithDialect(fence.Postgres), fence.WithTable(name)); !errors.Is(err, zklock.ErrInvalidOption) {
			t.Fatalf("table %q: %v", name, err)
		}
	}
	if _, err := fence.New(fence.WithDialect("mysql")); !errors.Is(err, zklock.ErrInvalidOption) || !errors.Is(err, fence.ErrUnknownDialect) {
		t.Fatalf("dialect mysql: %v", err)
	}
	if _, err := fence.New(); !errors.Is(err, fence.ErrUnknownDialect) {
		t.Fatalf("no dialect: %v", err)
	}
	if f, err := fence.New(fence.WithDialect(fence.SQLite), fence.WithTable("locks.fence")); err != nil || !strings.Contains(f.Schema(), `"locks"."fence"`) {
		t.Fatalf("schema-qualified: %v", err)
	}
}
