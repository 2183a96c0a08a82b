package chaos

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/zklockkit/zklockkit/internal/pgtest"
)

// workerStoreConns bounds each worker's connections to a PostgreSQL
// store: one per lane that writes, and the load phase's waiters share
// them. Eight workers and a respawned one stay under pgtest's 100.
const workerStoreConns = 8

// dbStore is a campaign's store in a database: the campaign's own handle
// on it (to create its tables and read the rows back), and who writes.
//
// PostgreSQL is written by the workers, each with its own connections, so
// that a worker stopped mid-transaction really holds its rows until the
// server ends its transaction (pgIdleInTx). SQLite is written by the hub
// for them, on one connection: SQLite has one write lock for the whole
// file and no server to end a stopped process's transaction, so a worker
// paused inside one would stop every writer of every resource for as
// long as it stays stopped (1.5 to 2 session timeouts), and busy_timeout
// could only make them give up.
type dbStore struct {
	kind      string
	store     *sqlStore
	cluster   *pgtest.Cluster // PostgreSQL's
	workerDSN string          // PostgreSQL: the workers write; empty: the hub does
}

// CheckStore returns nil if a campaign can write to store kind: a known
// kind (StoreMemory, StoreSQLite, StorePostgres, StoreZK), and for
// StorePostgres PostgreSQL's server binaries installed (an error wrapping
// pgtest.ErrNotInstalled says how to install them).
func CheckStore(kind string) error {
	switch kind {
	case StoreMemory, StoreSQLite, StoreZK:
		return nil
	case StorePostgres:
		return pgtest.Installed()
	}
	return fmt.Errorf("chaos: unknown store %q (want %s, %s, %s or %s)", kind, StoreMemory, StoreSQLite, StorePostgres, StoreZK)
}

// startDBStore starts the store of kind (StoreSQLite: a file in dir;
// StorePostgres: a throwaway cluster) and creates its tables.
func startDBStore(ctx context.Context, kind, dir string) (*dbStore, error) {
	d := &dbStore{kind: kind}
	var dsn string
	conns := 1
	switch kind {
	case StoreSQLite:
		dsn = storeDSN(kind, filepath.Join(dir, "store.db"))
	case StorePostgres:
		c, err := pgtest.Start()
		if err != nil {
			return nil, err
		}
		d.cluster = c
		dsn = storeDSN(kind, c.DSN())
		d.workerDSN, conns = dsn, 2
	default:
		if err := CheckStore(kind); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("chaos: the %s store is not a database", kind)
	}
	s, err := openSQLStore(kind, dsn, conns)
	if err == nil {
		d.store = s
		err = s.install(ctx)
	}
	if err != nil {
		return nil, errors.Join(err, d.Close())
	}
	return d, nil
}

// readBack records every committed row (EvCommitted), what contradicts
// itself in them (NoteStoreInconsistent), then NoteStoreRead; or
// NoteStoreUnread. Call it once nothing writes any more.
func (d *dbStore) readBack(ctx context.Context, h *hub) {
	rows, problems, err := d.store.committedRows(ctx)
	recordReadBack(h, d.kind, rows, problems, err)
}

// Close closes the campaign's handle and stops PostgreSQL.
func (d *dbStore) Close() error {
	var err error
	if d.store != nil {
		err = d.store.Close()
	}
	if d.cluster != nil {
		err = errors.Join(err, d.cluster.Close())
	}
	return err
}
