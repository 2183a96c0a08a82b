package fence

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/zklockkit/zklockkit/internal/canary"
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
	ts, err := tokensOf(h)
	if err != nil {
		return err
	}
	if _, ok := tx.(*sql.DB); ok {
		return ErrNotInTransaction
	}
	for _, t := range ts {
		if err := f.guard(ctx, tx, t); err != nil {
			return err
		}
	}
	return nil
}

// tokensOf returns the tokens to guard for h: one per resource of a
// multi-resource lease (its Parts, in canonical order, so that two
// transactions lock the fence's rows in the same order), else TokenOf's.
func tokensOf(h Holder) ([]Token, error) {
	p, ok := h.(interface{ Parts() []zklock.Part })
	if !ok || len(p.Parts()) < 2 {
		t, err := TokenOf(h)
		return []Token{t}, err
	}
	if m, ok := h.(interface{ Mode() zklock.Mode }); ok {
		switch mode := m.Mode(); mode {
		case zklock.Read, zklock.Semaphore:
			return nil, fmt.Errorf("%w: a %s lease of %q is shared with other holders", ErrUnfenceable, mode, h.Resource())
		}
	}
	var ts []Token
	for _, part := range p.Parts() {
		t := Token{resource: part.Resource, value: part.Token}
		if err := t.validate(); err != nil {
			return nil, err
		}
		ts = append(ts, t)
	}
	return ts, nil
}

// guard moves t's resource's stored token forward to t, or refuses.
func (f *Fence) guard(ctx context.Context, tx Tx, t Token) error {
	res, err := tx.ExecContext(ctx, f.sql.guard, t.resource, t.value)
	if err != nil {
		return fmt.Errorf("fence: guard of %q: %w", t.resource, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("fence: guard of %q: %w", t.resource, err)
	}
	if n > 0 || canary.On(canary.StoreAcceptsAnyToken) { // the canary: a stale token accepted
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
