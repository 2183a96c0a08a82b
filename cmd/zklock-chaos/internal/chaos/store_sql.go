package chaos

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net/url"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	_ "github.com/jackc/pgx/v5/stdlib" // driver "pgx"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/zklockkit/zklockkit/fence"
)

// The database's own bounds on a paused writer (PostgreSQL). A worker
// stopped inside its transaction holds the resource's fence and register
// rows: the server ends that transaction once it has been idle for
// pgIdleInTx, and a transaction waiting for those rows gives up after
// pgLockTimeout, so that a pause costs the others at most about a second.
const (
	pgIdleInTx    = time.Second
	pgLockTimeout = 2 * time.Second
)

// sqlStore is the campaign's fenced store in a real database. A write is
// one transaction: a writer's (exclusive, write, leader, a part of an
// AcquireAll) begins with fence.Guard of its token, as any user of the
// fence would; then the resource's register row moves to its next
// version n, and the write is logged with that n. The register row's lock
// orders the committed writes of a resource, whatever the fence does:
// the log's n is the resource's commit order, which the checker reads
// back (committedRows) to decide what was accepted and in which order.
// Readers and semaphore holders do not guard (fence refuses their leases:
// several hold at once).
type sqlStore struct {
	kind  string
	db    *sql.DB
	fence *fence.Fence
}

// The store's own tables, beside the fence's (fence.DefaultTable).
const (
	registerTable = "chaos_register"
	logTable      = "chaos_log"
)

// openSQLStore opens the store of kind at dsn with at most conns
// connections. The tables must exist (install).
func openSQLStore(kind, dsn string, conns int) (*sqlStore, error) {
	var driverName string
	var d fence.Dialect
	switch kind {
	case StorePostgres:
		driverName, d = "pgx", fence.Postgres
	case StoreSQLite:
		driverName, d = "sqlite", fence.SQLite
	default:
		return nil, fmt.Errorf("chaos: no database store %q", kind)
	}
	f, err := fence.New(fence.WithDialect(d))
	if err != nil {
		return nil, err
	}
	db, err := sql.Open(driverName, dsn)
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(conns)
	db.SetMaxIdleConns(conns)
	return &sqlStore{kind: kind, db: db, fence: f}, nil
}

// storeDSN returns how workers and the hub open the store: PostgreSQL
// with the bounds on a paused writer; SQLite in WAL mode, transactions
// begun IMMEDIATE (the write lock first, as the fence's docs advise), a
// busy timeout for the row reader.
func storeDSN(kind, base string) string {
	switch kind {
	case StorePostgres:
		u, err := url.Parse(base)
		if err != nil {
			return base
		}
		q := u.Query()
		q.Set("lock_timeout", fmt.Sprintf("%dms", pgLockTimeout.Milliseconds()))
		q.Set("idle_in_transaction_session_timeout", fmt.Sprintf("%dms", pgIdleInTx.Milliseconds()))
		u.RawQuery = q.Encode()
		return u.String()
	case StoreSQLite:
		return "file:" + base + "?_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_pragma=busy_timeout(10000)&_txlock=immediate"
	}
	return base
}

// install creates the fence's table and the store's, if needed.
func (s *sqlStore) install(ctx context.Context) error {
	if _, err := fence.Install(ctx, s.db, fence.WithDialect(s.fence.Dialect())); err != nil {
		return err
	}
	for _, q := range []string{
		"CREATE TABLE IF NOT EXISTS " + registerTable + " (resource TEXT PRIMARY KEY, n BIGINT NOT NULL, token BIGINT NOT NULL, wid BIGINT NOT NULL)",
		"CREATE TABLE IF NOT EXISTS " + logTable + " (wid BIGINT PRIMARY KEY, resource TEXT NOT NULL, n BIGINT NOT NULL, token BIGINT NOT NULL, " +
			"mode TEXT NOT NULL, proc INTEGER NOT NULL, slot INTEGER NOT NULL, op BIGINT NOT NULL, sent BIGINT NOT NULL, UNIQUE (resource, n))",
	} {
		if _, err := s.db.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("chaos: store tables: %w", err)
		}
	}
	return nil
}

func (s *sqlStore) Close() error { return s.db.Close() }

// dbVerdict is what a writer learns of its transaction (in a database, or
// in ZooKeeper).
type dbVerdict struct {
	Accepted bool   // it committed
	Outcome  string // WriteCommitted, WriteStale, ...
	Stored   int64  // WriteStale: the larger token the fence holds (0 if unread)
	Order    int64  // committed, in the ZooKeeper store: the log entry its answer named (n), 0 if unknown
	Err      string
}

// Write runs w's transaction.
func (s *sqlStore) Write(ctx context.Context, w writeRequest) dbVerdict {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return s.failed(err)
	}
	defer tx.Rollback() //nolint:errcheck // after Commit, a no-op
	if fenced(w.Mode) {
		if err := s.fence.Guard(ctx, tx, fence.NewToken(w.Resource, w.Token)); err != nil {
			return s.failed(err)
		}
	}
	if err := s.record(ctx, tx, w); err != nil {
		return s.failed(err)
	}
	if err := tx.Commit(); err != nil {
		return s.failed(err)
	}
	return dbVerdict{Accepted: true, Outcome: WriteCommitted}
}

// fenced reports whether writes of the store mode go through the fence.
func fenced(mode string) bool { return mode != ModeRead && mode != ModeSemaphore }

// record moves w's resource's register to its next version and logs w
// with it.
func (s *sqlStore) record(ctx context.Context, tx *sql.Tx, w writeRequest) error {
	if s.kind == StorePostgres {
		// One round trip: the register's new version feeds the log.
		_, err := tx.ExecContext(ctx, "WITH r AS (INSERT INTO "+registerTable+" AS g (resource, n, token, wid) VALUES ($1, 1, $2, $3) "+
			"ON CONFLICT (resource) DO UPDATE SET n = g.n + 1, token = EXCLUDED.token, wid = EXCLUDED.wid RETURNING n) "+
			"INSERT INTO "+logTable+" (wid, resource, n, token, mode, proc, slot, op, sent) SELECT $3, $1, r.n, $2, $4, $5, $6, $7, $8 FROM r",
			w.Resource, w.Token, w.ID, w.Mode, w.Proc, w.Slot, w.Op, w.Sent)
		return err
	}
	var n int64
	if err := tx.QueryRowContext(ctx, "INSERT INTO "+registerTable+" AS g (resource, n, token, wid) VALUES (?1, 1, ?2, ?3) "+
		"ON CONFLICT (resource) DO UPDATE SET n = g.n + 1, token = excluded.token, wid = excluded.wid RETURNING n",
		w.Resource, w.Token, w.ID).Scan(&n); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, "INSERT INTO "+logTable+" (wid, resource, n, token, mode, proc, slot, op, sent) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
		w.ID, w.Resource, n, w.Token, w.Mode, w.Proc, w.Slot, w.Op, w.Sent)
	return err
}

// failed turns a transaction's error into a verdict.
func (s *sqlStore) failed(err error) dbVerdict {
	v := dbVerdict{Outcome: writeOutcome(err), Err: err.Error()}
	var stale *fence.StaleError
	if errors.As(err, &stale) {
		v.Stored = stale.Stored
	}
	return v
}

// writeOutcome classifies a failed transaction.
func writeOutcome(err error) string {
	var pg *pgconn.PgError
	var lite *sqlite.Error
	switch {
	case errors.Is(err, fence.ErrStaleToken):
		return WriteStale
	case errors.Is(err, context.DeadlineExceeded):
		return WriteTimeout
	case errors.As(err, &pg):
		switch pg.Code {
		case "55P03": // lock_not_available: lock_timeout
			return WriteLockTimeout
		case "25P03", "57P01", "57P02", "57P03": // idle_in_transaction_session_timeout; the server shutting down
			return WriteAborted
		}
	case errors.As(err, &lite):
		if lite.Code()&0xff == sqlite3.SQLITE_BUSY {
			return WriteBusy
		}
	case errors.Is(err, driver.ErrBadConn), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, sql.ErrTxDone),
		pgconn.SafeToRetry(err):
		// The server closed the connection under the transaction (it
		// said why on a socket the writer, paused, never read).
		return WriteAborted
	}
	return WriteError
}

// dbWrite runs req's transaction on s and returns the writer's report: an
// EvWrite whose Called and T are when the transaction began and ended.
func dbWrite(ctx context.Context, s *sqlStore, req writeRequest) Event {
	ctx, cancel := context.WithTimeout(ctx, dbWriteTimeout)
	defer cancel()
	called := time.Now().UnixNano()
	return writeEvent(req, called, s.Write(ctx, req))
}

// writeEvent returns a writer's report of req to a store outside the
// campaign process, which began at called and ended now with v.
func writeEvent(req writeRequest, called int64, v dbVerdict) Event {
	return Event{Kind: EvWrite, T: time.Now().UnixNano(), Called: called, Proc: req.Proc, Slot: req.Slot, Op: req.Op,
		Resource: req.Resource, Mode: req.Mode, Token: req.Token, Sent: req.Sent, WriteID: req.ID,
		Accepted: v.Accepted, Max: v.Stored, Order: v.Order, Outcome: v.Outcome, Err: v.Err}
}

// dbWriteTimeout bounds a write's transaction: well above the database's
// own bounds (pgLockTimeout, pgIdleInTx), so that they, not this, end a
// wait behind a paused writer.
const dbWriteTimeout = 10 * time.Second
