package fence_test

import (
	"context"
	"database/sql"
	"slices"
	"testing"
	"time"

	"github.com/zklockkit/zklockkit/fence"
	"github.com/zklockkit/zklockkit/internal/pgtest"
)

// BenchmarkGuard measures what Guard adds to a one-row update
// transaction (BEGIN; UPDATE; COMMIT), per engine, and what the
// single-statement pattern adds (the same transaction whose UPDATE also
// sets the row's token column and checks it in its WHERE clause, as with
// ExecConditional). The three transactions take turns in one loop, in a
// rotating order, so that all see the same machine; it reports the median
// (p50) of each, in µs, and the overheads in percent of the plain one.
// Each fenced transaction moves its token forward (a new token each time,
// as with a new lease). ns/op is the mean of a round of three.
//
//	go test -run XXX -bench BenchmarkGuard -benchtime 2000x ./fence
//
// Engines: SQLite (a file in WAL mode, default synchronous), PostgreSQL
// with fsync off (the test cluster: commits are cheap, so the ratio is
// the least favourable) and with fsync on (as in production).
func BenchmarkGuard(b *testing.B) {
	b.Run("sqlite", func(b *testing.B) { benchGuard(b, sqliteEngine(b), false) })
	b.Run("postgres", func(b *testing.B) { benchGuard(b, postgresEngine(b), false) })
	b.Run("postgres-fsync", func(b *testing.B) {
		c, err := pgtest.Start(pgtest.WithFsync(true))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { c.Close() })
		db, err := sql.Open("pgx", c.DSN())
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { db.Close() })
		benchGuard(b, newEngine(b, "postgres", db), false)
	})
	b.Run("postgres-withdrawal", func(b *testing.B) { benchGuard(b, postgresEngine(b), true) })
}

// benchGuard times the three transactions on e. With withdrawal, each
// transaction is the shape of examples/fence's: read the balance, update
// it, append to a ledger (BEGIN; SELECT; UPDATE; INSERT; COMMIT).
func benchGuard(b *testing.B, e *engine, withdrawal bool) {
	ctx := context.Background()
	e.exec(b, ctx, e.db, "INSERT INTO "+e.data+" (id) VALUES ('acct')")
	update := e.q("UPDATE " + e.data + " SET balance = balance + 1 WHERE id = $1")
	conditional := e.q("UPDATE " + e.data + " SET balance = balance + 1, token = $2 WHERE id = $1 AND token <= $2")
	e.exec(b, ctx, e.db, "CREATE TABLE ledger_"+e.data+" (account TEXT NOT NULL, amount BIGINT NOT NULL)")
	read := e.q("SELECT balance FROM " + e.data + " WHERE id = $1")
	appendLedger := e.q("INSERT INTO ledger_" + e.data + " (account, amount) VALUES ($1, 1)")
	const plain, guarded, cond = 0, 1, 2
	var tok int64
	txn := func(kind int) time.Duration {
		start := time.Now()
		tx, err := e.db.BeginTx(ctx, nil)
		if err != nil {
			b.Fatal(err)
		}
		tok++
		if kind == guarded { // first in the transaction
			if err := e.fence.Guard(ctx, tx, fence.NewToken("acct", tok)); err != nil {
				b.Fatal(err)
			}
		}
		if withdrawal {
			var balance int64
			if err := tx.QueryRowContext(ctx, read, "acct").Scan(&balance); err != nil {
				b.Fatal(err)
			}
			if _, err := tx.ExecContext(ctx, appendLedger, "acct"); err != nil {
				b.Fatal(err)
			}
		}
		if kind == cond {
			_, err = fence.ExecConditional(ctx, tx, fence.NewToken("acct", tok), conditional, "acct", tok)
		} else {
			_, err = tx.ExecContext(ctx, update, "acct")
		}
		if err == nil {
			err = tx.Commit()
		}
		if err != nil {
			b.Fatal(err)
		}
		return time.Since(start)
	}
	for i := range 150 { // warm up: connections, prepared plans
		txn(i % 3)
	}
	var ds [3][]time.Duration
	b.ResetTimer()
	for i := range b.N {
		for j := range 3 { // rotate which one goes first
			k := (i + j) % 3
			ds[k] = append(ds[k], txn(k))
		}
	}
	b.StopTimer()
	p, g, c := median(ds[plain]), median(ds[guarded]), median(ds[cond])
	b.ReportMetric(float64(p.Nanoseconds())/1e3, "plain-p50-µs")
	b.ReportMetric(float64(g.Nanoseconds())/1e3, "guard-p50-µs")
	b.ReportMetric(float64(c.Nanoseconds())/1e3, "cond-p50-µs")
	b.ReportMetric(100*float64(g-p)/float64(p), "guard-overhead-%")
	b.ReportMetric(100*float64(c-p)/float64(p), "cond-overhead-%")
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}
