package fence

import (
	"errors"
	"fmt"
)

var (
	// ErrStaleToken is returned (as a *StaleError) when the fence already
	// holds a larger token for the resource: a later lease has written, so
	// this one must not.
	ErrStaleToken = errors.New("fence: stale fencing token")

	// ErrNoToken is returned when there is no token to fence with: the
	// context carries no lease (GuardFromContext), or a request carries no
	// token (FromRequest, fencegrpc.FromIncoming).
	ErrNoToken = errors.New("fence: no fencing token")

	// ErrInvalidToken is returned for a token that cannot fence anything: a
	// value below 1, an empty or malformed resource, or a header or
	// metadata value that does not parse.
	ErrInvalidToken = errors.New("fence: invalid fencing token")

	// ErrUnfenceable is returned for a lease whose token orders nothing on
	// its own: a read or semaphore lease (several hold at once) or a
	// multi-resource lease (its Token is the largest of its nodes', not the
	// one of each resource).
	ErrUnfenceable = errors.New("fence: lease cannot be fenced")

	// ErrNotInTransaction is returned when Guard is given a *sql.DB: the
	// check would commit on its own and protect nothing.
	ErrNotInTransaction = errors.New("fence: Guard needs a transaction")

	// ErrUnknownDialect is returned by Install when it cannot tell which SQL
	// dialect the database speaks; name it with WithDialect.
	ErrUnknownDialect = errors.New("fence: unknown SQL dialect")
)

// StaleError is the error of a refused token. It matches ErrStaleToken.
type StaleError struct {
	Resource string
	Token    int64 // the token refused
	Stored   int64 // the larger token the fence holds (0 if it could not be read)
}

func (e *StaleError) Error() string {
	if e.Stored == 0 {
		return fmt.Sprintf("fence: token %d for %q is stale: a larger token has written", e.Token, e.Resource)
	}
	return fmt.Sprintf("fence: token %d for %q is stale: the fence holds %d", e.Token, e.Resource, e.Stored)
}

// Is reports whether target is ErrStaleToken.
func (e *StaleError) Is(target error) bool { return target == ErrStaleToken }
