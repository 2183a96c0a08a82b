package fence

import (
	"context"
	"database/sql"
	"fmt"
)

// Fence is a table that keeps, per resource, the largest fencing token
// that has written, and the statements that move it forward. It is safe
// for concurrent use; it holds no connection, only SQL text.
type Fence struct {
	dialect Dialect
	table   string
	sql     statements
}

// New returns the fence on a table that already exists (created by
// Install, or by a migration from Schema). It needs WithDialect.
func New(opts ...Option) (*Fence, error) {
	c := newConfig(opts)
	if c.err != nil {
		return nil, c.err
	}
	if c.dialect == "" {
		return nil, fmt.Errorf("%w: New needs fence.WithDialect (Install can ask the database)", ErrUnknownDialect)
	}
	return newFence(c)
}

func newFence(c config) (*Fence, error) {
	st, err := c.dialect.statements(c.table)
	if err != nil {
		return nil, err
	}
	return &Fence{dialect: c.dialect, table: c.table, sql: st}, nil
}

// Install creates the fence table if it does not exist and returns the
// fence. Without WithDialect it asks the database which dialect it speaks
// (one or two small queries). It is idempotent, also when several
// processes install at once. db is usually a *sql.DB; a *sql.Tx works too
// (in a migration).
func Install(ctx context.Context, db Tx, opts ...Option) (*Fence, error) {
	c := newConfig(opts)
	if c.err != nil {
		return nil, c.err
	}
	if c.dialect == "" {
		d, err := detect(ctx, db)
		if err != nil {
			return nil, err
		}
		c.dialect = d
	}
	f, err := newFence(c)
	if err != nil {
		return nil, err
	}
	if _, err := db.ExecContext(ctx, f.sql.create); err != nil {
		// PostgreSQL's CREATE TABLE IF NOT EXISTS can still fail when
		// another session creates the table at the same moment; the
		// table being there is all that was asked.
		if _, tx := db.(*sql.Tx); tx || !f.exists(ctx, db) {
			return nil, fmt.Errorf("fence: creating table %s: %w", f.table, err)
		}
	}
	return f, nil
}

func (f *Fence) exists(ctx context.Context, db Tx) bool {
	var n int
	err := db.QueryRowContext(ctx, "SELECT count(*) FROM "+quoteTable(f.table)+" WHERE resource = ''").Scan(&n)
	return err == nil
}

// Schema returns the CREATE TABLE statement Install runs, for a migration
// tool.
func (f *Fence) Schema() string { return f.sql.create }

// Table returns the fence table's name.
func (f *Fence) Table() string { return f.table }

// Dialect returns the fence's SQL dialect.
func (f *Fence) Dialect() Dialect { return f.dialect }
