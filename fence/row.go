package fence

import (
	"context"
	"database/sql"
	"fmt"
)

// Execer runs one statement: a *sql.DB, *sql.Conn or *sql.Tx.
type Execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// ExecConditional runs one statement that fences its row by itself, for
// code without a transaction: the row keeps the token of its last writer
// in a column, the statement sets it and its WHERE clause refuses a
// smaller one. A statement that changes no row is reported as a
// *StaleError (errors.Is ErrStaleToken, Stored 0: not read).
//
//	_, err := fence.ExecConditional(ctx, db, lease,
//		`UPDATE accounts SET owner = $1, fence_token = $2
//		 WHERE id = $3 AND fence_token <= $2`,
//		owner, lease.Token(), id)
//
// The statement must change a row whenever the token is not stale (here:
// the account exists), or a stale token cannot be told from another
// reason: keep other conditions out of its WHERE clause. The check is the row's own: it does not look
// at the fence table, and Guard does not look at the row's column; use one
// or the other for a given piece of data.
func ExecConditional(ctx context.Context, db Execer, h Holder, query string, args ...any) (sql.Result, error) {
	t, err := TokenOf(h)
	if err != nil {
		return nil, err
	}
	res, err := db.ExecContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("fence: conditional write of %q: %w", t.resource, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return nil, fmt.Errorf("fence: conditional write of %q: %w", t.resource, err)
	}
	if n == 0 {
		return res, &StaleError{Resource: t.resource, Token: t.value}
	}
	return res, nil
}
