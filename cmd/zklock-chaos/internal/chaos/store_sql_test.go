package chaos

import (
	"context"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zklockkit/zklockkit/fence"
	"github.com/zklockkit/zklockkit/internal/pgtest"
)

// testStore starts a store of kind (PostgreSQL: a cluster of its own) and
// returns it with its tables installed.
func testStore(t *testing.T, kind string, conns int) *sqlStore {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var dsn string
	switch kind {
	case StorePostgres:
		c, err := pgtest.Start()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		dsn = storeDSN(kind, c.DSN())
	case StoreSQLite:
		dsn = storeDSN(kind, filepath.Join(t.TempDir(), "store.db"))
	}
	s, err := openSQLStore(kind, dsn, conns)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if err := s.install(ctx); err != nil {
		t.Fatal(err)
	}
	return s
}

// The store's transactions on the real engines: a writer is refused below
// the fence's token (fence.Guard), readers and semaphore holders are not
// fenced, and the rows read back give every committed write, per resource
// in commit order, with nothing of the refused ones.
func TestIntegration_SQLStore(t *testing.T) {
	for _, kind := range []string{StoreSQLite, StorePostgres} {
		t.Run(kind, func(t *testing.T) {
			s := testStore(t, kind, 4)
			ctx := context.Background()
			var id int64
			write := func(res, mode string, tok int64) dbVerdict {
				id++
				return s.Write(ctx, writeRequest{Proc: 7, Slot: 1, Op: id, Resource: res, Token: tok, Mode: mode, Sent: 1000 + id, ID: writeID(7, id)})
			}
			for i, c := range []struct {
				res, mode string
				tok       int64
				outcome   string
				stored    int64
			}{
				{"a", ModeExclusive, 10, WriteCommitted, 0},
				{"a", ModeExclusive, 9, WriteStale, 10}, // an older writer: refused by the fence
				{"a", ModeExclusive, 10, WriteCommitted, 0},
				{"a", ModeRead, 5, WriteCommitted, 0}, // readers are not fenced
				{"a", ModeExclusive, 12, WriteCommitted, 0},
				{"b", ModeSemaphore, 30, WriteCommitted, 0},
				{"b", ModeSemaphore, 20, WriteCommitted, 0}, // nor semaphore holders
			} {
				v := write(c.res, c.mode, c.tok)
				if v.Outcome != c.outcome || v.Accepted != (c.outcome == WriteCommitted) || v.Stored != c.stored {
					t.Fatalf("write %d (%s %s %d): %+v; want %s (stored %d)", i, c.res, c.mode, c.tok, v, c.outcome, c.stored)
				}
			}
			rows, problems, err := s.committedRows(ctx)
			if err != nil || len(problems) > 0 {
				t.Fatalf("read back: %v %v", err, problems)
			}
			var got []string
			for _, r := range rows {
				if r.Kind != EvCommitted || r.Proc != 7 || r.Slot != 1 || r.WriteID != writeID(7, r.Op) || r.Sent != 1000+r.Op {
					t.Fatalf("row %+v", r)
				}
				got = append(got, strings.Join([]string{r.Resource, r.Mode, itoa(r.Order), itoa(r.Token)}, ":"))
			}
			want := []string{"a:x:1:10", "a:x:2:10", "a:r:3:5", "a:x:4:12", "b:sem:1:30", "b:sem:2:20"}
			if !slices.Equal(got, want) {
				t.Fatalf("rows %v, want %v", got, want)
			}

			// A log that lost a row, or a register ahead of its log, does
			// not read back as whole.
			if _, err := s.db.ExecContext(ctx, "DELETE FROM "+logTable+" WHERE resource = 'a' AND n = 2"); err != nil {
				t.Fatal(err)
			}
			if _, err := s.db.ExecContext(ctx, "UPDATE "+registerTable+" SET n = 3 WHERE resource = 'b'"); err != nil {
				t.Fatal(err)
			}
			_, problems, err = s.committedRows(ctx)
			if err != nil || len(problems) != 2 || !strings.Contains(problems[0], "a: version 3 follows 1") || !strings.Contains(problems[1], "b: register at version 3") {
				t.Fatalf("problems %q, err %v", problems, err)
			}
		})
	}
}

// Concurrent writers of one resource on PostgreSQL: every accepted write
// gets its own version, and the versions follow the commit order, so the
// fenced writes' tokens never go down along them.
func TestIntegration_SQLStoreConcurrent(t *testing.T) {
	s := testStore(t, StorePostgres, 8)
	ctx := context.Background()
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 40 {
				// Tokens handed out in one order, guarded in another.
				tok := int64(100 + i*8 + (7 - g))
				s.Write(ctx, writeRequest{Proc: g + 1, Op: int64(i + 1), Resource: "r", Token: tok, Mode: ModeExclusive, ID: writeID(g+1, int64(i+1))})
			}
		})
	}
	wg.Wait()
	rows, problems, err := s.committedRows(ctx)
	if err != nil || len(problems) > 0 {
		t.Fatalf("read back: %v %v", err, problems)
	}
	if len(rows) < 40 {
		t.Fatalf("only %d of 320 writes committed", len(rows))
	}
	for i := 1; i < len(rows); i++ {
		if rows[i].Token < rows[i-1].Token {
			t.Fatalf("row %d (token %d) after row %d (token %d): a stale write committed", rows[i].Order, rows[i].Token, rows[i-1].Order, rows[i-1].Token)
		}
	}
	t.Logf("%d of 320 writes committed", len(rows))
}

// A writer stopped inside its transaction (here: a transaction that sends
// nothing more, which is what the server sees of a stopped process) holds
// the resource's rows until PostgreSQL ends it after pgIdleInTx; a writer
// waiting for those rows then goes on, well within pgLockTimeout. The
// stopped one learns, when it runs again, that its transaction was
// aborted. A transaction that is busy, not idle, makes the waiter give up
// after pgLockTimeout instead.
func TestIntegration_SQLStorePausedWriter(t *testing.T) {
	s := testStore(t, StorePostgres, 4)
	ctx := context.Background()
	req := func(op, tok int64) writeRequest {
		return writeRequest{Proc: 3, Op: op, Resource: "p", Token: tok, Mode: ModeExclusive, ID: writeID(3, op)}
	}
	// The stopped writer guards and writes, then stops before its commit.
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if err := s.fence.Guard(ctx, tx, fence.NewToken("p", 10)); err != nil {
		t.Fatal(err)
	}
	if err := s.record(ctx, tx, req(1, 10)); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	v := s.Write(ctx, req(2, 11)) // waits for the stopped writer's rows
	waited := time.Since(start)
	if !v.Accepted || waited < pgIdleInTx*9/10 || waited > pgLockTimeout {
		t.Fatalf("next writer: %+v after %v; want committed after about %v", v, waited, pgIdleInTx)
	}
	err = tx.Commit() // the stopped writer runs again
	if err == nil || writeOutcome(err) != WriteAborted {
		t.Fatalf("stopped writer's commit: %v (%T), outcome %s; want %s", err, err, writeOutcome(err), WriteAborted)
	}
	t.Logf("next writer waited %v; the stopped one was told: %v", waited.Round(time.Millisecond), err)

	// A busy transaction holds the rows past pgLockTimeout.
	busy, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Rollback()
	if err := s.fence.Guard(ctx, busy, fence.NewToken("p", 12)); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := busy.ExecContext(ctx, "SELECT pg_sleep($1)", (pgLockTimeout + time.Second).Seconds())
		done <- err
	}()
	time.Sleep(100 * time.Millisecond)
	start = time.Now()
	v = s.Write(ctx, req(3, 13))
	if v.Accepted || v.Outcome != WriteLockTimeout || time.Since(start) < pgLockTimeout*9/10 {
		t.Fatalf("writer behind a busy transaction: %+v after %v; want %s after %v", v, time.Since(start), WriteLockTimeout, pgLockTimeout)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := busy.Commit(); err != nil {
		t.Fatal(err)
	}
	rows, problems, err := s.committedRows(ctx)
	if err != nil || len(problems) > 0 || len(rows) != 1 || rows[0].Token != 11 {
		t.Fatalf("rows %+v, problems %v, err %v; want the next writer's only", rows, problems, err)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// Why SQLite is written by the hub: its write lock covers the whole file,
// and nothing ends the transaction of a process that stopped inside it.
// A second process writing another resource waits for its whole busy
// timeout and gives up (WriteBusy); it would for as long as the first one
// stays stopped.
func TestIntegration_SQLiteStoppedWriterBlocksEveryone(t *testing.T) {
	path := filepath.Join(t.TempDir(), "store.db")
	first := testStoreAt(t, StoreSQLite, storeDSN(StoreSQLite, path))
	busy := 300 * time.Millisecond
	second := testStoreAt(t, StoreSQLite, strings.Replace(storeDSN(StoreSQLite, path), "busy_timeout(10000)", "busy_timeout(300)", 1))
	ctx := context.Background()
	tx, err := first.db.BeginTx(ctx, nil) // _txlock=immediate: the write lock, now
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if err := first.fence.Guard(ctx, tx, fence.NewToken("a", 10)); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	v := second.Write(ctx, writeRequest{Proc: 2, Op: 1, Resource: "b", Token: 5, Mode: ModeExclusive, ID: writeID(2, 1)})
	if v.Accepted || v.Outcome != WriteBusy || time.Since(start) < busy*9/10 {
		t.Fatalf("a writer of another resource: %+v after %v; want %s after %v", v, time.Since(start), WriteBusy, busy)
	}
}

// testStoreAt opens a second handle on an installed store.
func testStoreAt(t *testing.T, kind, dsn string) *sqlStore {
	t.Helper()
	s, err := openSQLStore(kind, dsn, 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if err := s.install(context.Background()); err != nil {
		t.Fatal(err)
	}
	return s
}
