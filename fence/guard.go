package fence

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/zklockkit/zklockkit/zklock"
)

// Guard moves the fence of h's resource forward to h's token, inside the
// caller's transaction tx, in one statement: it stores the token if none
// is stored, or if the one stored is not larger, and otherwise fails with
// a *StaleError (errors.Is ErrStaleToken). An equal token is accepted: the
// same lease may write twice.
//
// The check commits or rolls back with tx. Call Guard first in the
// transaction, before reading what the transaction will write: from then
// on the fence's row is locked by tx until it ends, so no other holder of
// the resource can write in between, and statements after Guard see every
// write of an earlier token (see the package doc for isolation levels).
// After ErrStaleToken, roll back.
//
// h is a *zklock.Lease, a Token carried from another process (FromRequest,
// fencegrpc.FromIncoming), or any Holder; TokenOf says which leases are
// refused. Guard does not ask whether the lease is still held: the store
// decides, which is what refuses a holder that was paused past its loss.
// A *sql.DB is refused with ErrNotInTransaction: the check would commit on
// its own.
func (f *Fence) Guard(ctx context.Context, tx Tx, h Holder) error {
	t, err := TokenOf(h)
	if err != nil {
		return err
	}
	if _, ok := tx.(*sql.DB); ok {
		return ErrNotInTransaction
	}
	res, err := tx.ExecContext(ctx, f.sql.guard, t.resource, t.value)
	if err != nil {
		return fmt.Errorf("fence: guard of %q: %w", t.resource, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("fence: guard of %q: %w", t.resource, err)
	}
	if n > 0 {
		return nil
	}
	// Refused. Read what is stored, for the error only.
	stale := &StaleError{Resource: t.resource, Token: t.value}
	_ = tx.QueryRowContext(ctx, f.sql.stored, t.resource).Scan(&stale.Stored)
	return stale
}

// GuardFromContext is Guard with the lease carried by ctx
// (zklock.LeaseFromContext): the one the Echo and net/http middleware, the
// gRPC interceptors and generated wrappers put in the context of the code
// they run under a lock. Without one it returns ErrNoToken.
func (f *Fence) GuardFromContext(ctx context.Context, tx Tx) error {
	l := zklock.LeaseFromContext(ctx)
	if l == nil {
		return fmt.Errorf("%w: the context carries no lease", ErrNoToken)
	}
	return f.Guard(ctx, tx, l)
}
