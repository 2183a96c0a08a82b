package fence_test

import (
	"database/sql"
	"errors"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zklockkit/zklockkit/fence"
)

// Two leases of one resource, granted one after the other by ZooKeeper,
// write through the fence in interleaved transactions, many times over on
// each engine. Whenever the newer lease's Guard comes first (committed, or
// still open while the older one's Guard waits on it), the older token
// loses: every time, counted. When the newer transaction rolls back, the
// older one may write (nothing newer was written); when the older one
// writes first, it is accepted and the newer one after it.
func TestIntegration_InterleavedLeases(t *testing.T) {
	const iterations = 60 // per kind of interleaving, per engine
	for _, e := range engines(t) {
		t.Run(e.name, func(t *testing.T) {
			ctx := testCtx(t)
			c := newClient(t)
			var refused, kinds [4]int
			for i := range 4 * iterations {
				kind := i % 4
				r := "acct/" + strconv.Itoa(i)
				older, newer := leasePair(t, c, r)
				begin := func() *sql.Tx {
					tx, err := e.db.BeginTx(ctx, nil)
					must(t, err)
					return tx
				}
				var olderErr error
				switch kind {
				case 0: // the newer commits, then the older tries
					must(t, e.fencedWrite(ctx, newer, r))
					olderErr = e.fencedWrite(ctx, older, r)
				case 1, 2: // the newer guards; the older guards while the newer is open; the newer commits (1) or rolls back (2)
					txNew := begin()
					must(t, e.fence.Guard(ctx, txNew, newer))
					txOld := begin()
					done := make(chan error, 1)
					go func() { done <- e.fence.Guard(ctx, txOld, older) }()
					e.waitBlocked(t, done)
					if kind == 1 {
						must(t, txNew.Commit())
					} else {
						must(t, txNew.Rollback())
					}
					olderErr = <-done
					if olderErr == nil {
						must(t, txOld.Commit())
					} else {
						_ = txOld.Rollback()
					}
				case 3: // the older writes first: accepted, then the newer, then the older again
					must(t, e.fencedWrite(ctx, older, r))
					must(t, e.fencedWrite(ctx, newer, r))
					olderErr = e.fencedWrite(ctx, older, r)
				}
				kinds[kind]++
				wantStale := kind != 2
				switch {
				case wantStale && errors.Is(olderErr, fence.ErrStaleToken):
					refused[kind]++
				case !wantStale && olderErr == nil:
				default:
					t.Fatalf("iteration %d (kind %d): older token %d: %v", i, kind, older.Token(), fmtErr(olderErr))
				}
				want := newer.Token()
				if kind == 2 {
					want = older.Token()
				}
				if got := e.stored(t, r); got != want {
					t.Fatalf("iteration %d (kind %d): stored %d, want %d", i, kind, got, want)
				}
			}
			t.Logf("%s: older token refused %d/%d after the newer committed, %d/%d while the newer was open; "+
				"accepted %d/%d after the newer rolled back; refused %d/%d after writing first",
				e.name, refused[0], kinds[0], refused[1], kinds[1], kinds[2], kinds[2], refused[3], kinds[3])
		})
	}
}

// waitBlocked returns once the Guard running in the background is waiting
// for the open transaction: in PostgreSQL, once its backend waits on a
// lock (it never returns before: asserted); in SQLite, whose busy handler
// cannot be seen from outside, after a short while.
func (e *engine) waitBlocked(t *testing.T, done <-chan error) {
	t.Helper()
	if e.name != "postgres" {
		select {
		case err := <-done:
			t.Fatalf("the older Guard returned while the newer transaction was open: %v", err)
		case <-time.After(5 * time.Millisecond):
		}
		return
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		var n int
		must(t, e.db.QueryRow(`SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE $1`,
			`INSERT INTO "`+e.fence.Table()+`"%`).Scan(&n))
		if n == 1 {
			return
		}
		select {
		case err := <-done:
			t.Fatalf("the older Guard returned while the newer transaction was open: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("the older Guard is not waiting on a lock")
		}
		time.Sleep(time.Millisecond)
	}
}

// Guard at READ COMMITTED, PostgreSQL's default: many concurrent
// transactions with tokens given out in one order and guarding in
// another. Each one that Guard accepts then reads the data row and must
// never find a larger token there (a newer writer committed before it),
// and its write must be the last word until a larger token's. Counted:
// every transaction is accepted or refused, the row's write count equals
// the accepted ones, and the fence ends at the largest accepted token.
func TestIntegration_ReadCommitted(t *testing.T) {
	e := postgresEngine(t)
	ctx := testCtx(t)
	e.exec(t, ctx, e.db, "INSERT INTO "+e.data+" (id) VALUES ('acct')")
	e.db.SetMaxOpenConns(16)
	const workers, perWorker = 8, 40
	var next, maxAccepted atomic.Int64
	var accepted, refused, violations atomic.Int64
	var wg sync.WaitGroup
	errc := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 7))
			for range perWorker {
				tok := next.Add(1)
				time.Sleep(time.Duration(rng.IntN(1500)) * time.Microsecond) // let later tokens overtake
				err := func() error {
					tx, err := e.db.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelReadCommitted})
					if err != nil {
						return err
					}
					defer tx.Rollback()
					if err := e.fence.Guard(ctx, tx, fence.NewToken("acct", tok)); err != nil {
						return err
					}
					var seen int64
					if err := tx.QueryRowContext(ctx, "SELECT token FROM "+e.data+" WHERE id = 'acct'").Scan(&seen); err != nil {
						return err
					}
					if seen > tok {
						violations.Add(1)
					}
					time.Sleep(time.Duration(rng.IntN(300)) * time.Microsecond) // hold the row a little
					if _, err := tx.ExecContext(ctx, "UPDATE "+e.data+" SET token = $1, writes = writes + 1 WHERE id = 'acct'", tok); err != nil {
						return err
					}
					return tx.Commit()
				}()
				switch {
				case err == nil:
					accepted.Add(1)
					for m := maxAccepted.Load(); tok > m && !maxAccepted.CompareAndSwap(m, tok); m = maxAccepted.Load() {
					}
				case errors.Is(err, fence.ErrStaleToken):
					refused.Add(1)
				default:
					errc <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Fatal(err)
	}
	var tok, writes int64
	must(t, e.db.QueryRowContext(ctx, "SELECT token, writes FROM "+e.data+" WHERE id = 'acct'").Scan(&tok, &writes))
	t.Logf("%d transactions: %d accepted, %d refused, %d violations; row written %d times, last by token %d",
		workers*perWorker, accepted.Load(), refused.Load(), violations.Load(), writes, tok)
	switch {
	case violations.Load() != 0:
		t.Fatalf("%d accepted transactions found a larger token already written", violations.Load())
	case accepted.Load()+refused.Load() != workers*perWorker:
		t.Fatal("transactions unaccounted for")
	case writes != accepted.Load() || tok != maxAccepted.Load() || e.stored(t, "acct") != tok:
		t.Fatalf("row: %d writes, token %d; fence %d; want %d writes, token %d", writes, tok, e.stored(t, "acct"), accepted.Load(), maxAccepted.Load())
	case refused.Load() == 0:
		t.Fatal("no token was refused: the test did not interleave")
	}
}

// At REPEATABLE READ a transaction whose snapshot predates a newer
// token's commit cannot even run its Guard: PostgreSQL refuses it with a
// serialization failure (retry), never lets it through.
func TestIntegration_RepeatableRead(t *testing.T) {
	e := postgresEngine(t)
	ctx := testCtx(t)
	must(t, e.fencedWrite(ctx, fence.NewToken("acct", 5), "acct"))
	old, err := e.db.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelRepeatableRead})
	must(t, err)
	defer old.Rollback()
	var n int
	must(t, old.QueryRowContext(ctx, "SELECT count(*) FROM "+e.data).Scan(&n)) // takes the snapshot
	must(t, e.fencedWrite(ctx, fence.NewToken("acct", 9), "acct"))
	err = e.fence.Guard(ctx, old, fence.NewToken("acct", 7))
	if err == nil {
		t.Fatal("a stale token passed at REPEATABLE READ")
	}
	t.Logf("older token at REPEATABLE READ: %v", err)
	if got := e.stored(t, "acct"); got != 9 {
		t.Fatalf("stored %d", got)
	}
}
