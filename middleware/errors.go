package middleware

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/zklockkit/zklockkit/zklock"
)

// ErrInvalidConfig is matched by every configuration error reported by
// Config.ToMiddleware (and by the panic of Lock and LockWithConfig). It is
// also returned at request time, answered 500, when a route-parameter
// placeholder names a parameter the route does not have (a per-route
// middleware cannot see its route before the first request).
var ErrInvalidConfig = errors.New("zklock/middleware: invalid configuration")

// StatusClientClosedRequest is the status given to a request whose client
// went away while it waited for the lock (nginx's 499). Nobody reads the
// answer; it is for access logs.
const StatusClientClosedRequest = 499

// LockError is what the ErrorHandler receives when a request could not be
// locked, or lost its lock while the handler ran. It wraps the zklock
// error (or the error of a ResourceFunc), so errors.Is(err,
// zklock.ErrLocked) and the like work on it.
type LockError struct {
	Resource   string        // the resource, when it could be computed
	Mode       zklock.Mode   // the lock mode asked for
	Waited     time.Duration // time spent in the acquire
	RetryAfter time.Duration // the configured Retry-After advice
	Err        error
}

// Error describes the failure and the resource (cut to 64 bytes).
func (e *LockError) Error() string {
	r := e.Resource
	if len(r) > 64 {
		r = r[:64] + "..."
	}
	return fmt.Sprintf("zklock/middleware: lock %q: %v", r, e.Err)
}

// Unwrap returns the underlying error.
func (e *LockError) Unwrap() error { return e.Err }

// DefaultErrorHandler answers lock failures with an *echo.HTTPError (a JSON
// {"message": ...} body under Echo's default HTTP error handler), with the
// original error as its Internal error:
//
//   - an *echo.HTTPError (from a ResourceFunc): as is;
//   - zklock.ErrInvalidResource (a key that is no valid resource, a missing
//     placeholder value): 400 Bad Request;
//   - zklock.ErrLocked (Try): 423 Locked, with Retry-After;
//   - zklock.ErrUnavailable (ZooKeeper unreachable), zklock.ErrClosed:
//     503 Service Unavailable, with Retry-After;
//   - zklock.ErrWaitTimeout (MaxWait passed), or the request's deadline:
//     503 Service Unavailable, with Retry-After;
//   - zklock.ErrLeaseLost (lost while the handler ran): 503;
//   - the request's context cancelled (client gone): 499;
//   - anything else (ErrInvalidConfig, zklock.ErrUpgrade...): 500.
func DefaultErrorHandler(c echo.Context, err error) error {
	var he *echo.HTTPError
	if errors.As(err, &he) {
		return he
	}
	retry := time.Duration(0)
	var le *LockError
	if errors.As(err, &le) {
		retry = le.RetryAfter
	}
	answer := func(code int, msg string, withRetry bool) error {
		if withRetry && retry > 0 {
			c.Response().Header().Set(echo.HeaderRetryAfter, retryAfter(retry))
		}
		return &echo.HTTPError{Code: code, Message: msg, Internal: err}
	}
	switch {
	case errors.Is(err, zklock.ErrInvalidResource):
		return answer(http.StatusBadRequest, "invalid lock resource", false)
	case errors.Is(err, zklock.ErrLocked):
		return answer(http.StatusLocked, "resource is locked", true)
	case errors.Is(err, zklock.ErrUnavailable), errors.Is(err, zklock.ErrClosed):
		return answer(http.StatusServiceUnavailable, "lock service unavailable", true)
	case errors.Is(err, zklock.ErrWaitTimeout), errors.Is(err, context.DeadlineExceeded):
		return answer(http.StatusServiceUnavailable, "lock wait limit exceeded", true)
	case errors.Is(err, zklock.ErrLeaseLost):
		return answer(http.StatusServiceUnavailable, "lock lost", true)
	case errors.Is(err, context.Canceled):
		return answer(StatusClientClosedRequest, "client closed request", false)
	}
	return answer(http.StatusInternalServerError, http.StatusText(http.StatusInternalServerError), false)
}

// retryAfter formats d as whole seconds, rounded up, at least 1.
func retryAfter(d time.Duration) string {
	s := int64((d + time.Second - 1) / time.Second)
	return strconv.FormatInt(max(s, 1), 10)
}
