package middleware

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/zklockkit/zklockkit/zklock"
)

// ErrInvalidConfig is matched by every configuration error: those of
// Config.ToMiddleware and Config.Core (and the panic of Lock and
// LockWithConfig), and those of the Echo adapters. A per-route rule whose
// template names a parameter its route lacks is one too: the Echo
// adapters report it when the route is registered (zkecho.CheckRoute, as
// Echo's hook); otherwise it is found at the route's first request,
// answered 500 and logged once (Config.Logger).
var ErrInvalidConfig = errors.New("zklock/middleware: invalid configuration")

// StatusClientClosedRequest is the status given to a request whose client
// went away while it waited for the lock (nginx's 499). Nobody reads the
// answer; it is for access logs.
const StatusClientClosedRequest = 499

// LockError is what the error handler receives when a request could not be
// locked, or lost its lock while the handler ran. It wraps the zklock
// error (or the error of a ResourceFunc, or a configuration error), so
// errors.Is(err, zklock.ErrLocked) and the like work on it.
type LockError struct {
	Resource   string        // the resource (several: joined by ","), when it could be computed
	Mode       zklock.Mode   // the lock mode asked for
	Waited     time.Duration // time spent in the acquire
	RetryAfter time.Duration // the configured Retry-After advice
	Err        error
}

// Error describes the failure and, when known, the resource (cut to 64
// bytes).
func (e *LockError) Error() string {
	if e.Resource == "" {
		return fmt.Sprintf("zklock/middleware: %v", e.Err)
	}
	return fmt.Sprintf("zklock/middleware: lock %q: %v", cut(e.Resource), e.Err)
}

// Unwrap returns the underlying error.
func (e *LockError) Unwrap() error { return e.Err }

// Answer is how every front end answers a lock failure.
type Answer struct {
	Status     int    // HTTP status code
	Message    string // short, for the client: "resource is locked"
	RetryAfter bool   // send Retry-After
}

// AnswerFor returns the answer to a lock failure err:
//
//   - zklock.ErrInvalidResource (a key that is no valid resource, a missing
//     or empty placeholder value): 400 Bad Request, with a message that
//     says why: the template or the name, and zklock's reason;
//   - zklock.ErrLocked (Try): 423 Locked, with Retry-After;
//   - zklock.ErrUnavailable (ZooKeeper unreachable), zklock.ErrClosed:
//     503 Service Unavailable, with Retry-After;
//   - zklock.ErrWaitTimeout (MaxWait passed), or the request's deadline:
//     503 Service Unavailable, with Retry-After;
//   - zklock.ErrLeaseLost (lost while the handler ran): 503, with
//     Retry-After;
//   - the request's context cancelled (client gone): 499;
//   - anything else (ErrInvalidConfig, zklock.ErrUpgrade, an error of a
//     ResourceFunc...): 500.
func AnswerFor(err error) Answer {
	switch {
	case errors.Is(err, ErrInvalidConfig):
		return Answer{http.StatusInternalServerError, "lock misconfigured", false}
	case errors.Is(err, zklock.ErrInvalidResource):
		return Answer{http.StatusBadRequest, invalidResourceMessage(err), false}
	case errors.Is(err, zklock.ErrLocked):
		return Answer{http.StatusLocked, "resource is locked", true}
	case errors.Is(err, zklock.ErrUnavailable), errors.Is(err, zklock.ErrClosed):
		return Answer{http.StatusServiceUnavailable, "lock service unavailable", true}
	case errors.Is(err, zklock.ErrWaitTimeout), errors.Is(err, context.DeadlineExceeded):
		return Answer{http.StatusServiceUnavailable, "lock wait limit exceeded", true}
	case errors.Is(err, zklock.ErrLeaseLost):
		return Answer{http.StatusServiceUnavailable, "lock lost", true}
	case errors.Is(err, context.Canceled):
		return Answer{StatusClientClosedRequest, "client closed request", false}
	}
	return Answer{http.StatusInternalServerError, http.StatusText(http.StatusInternalServerError), false}
}

// invalidResourceMessage tells the client why its request names no valid
// resource: "invalid lock resource", then the *zklock.ResourceError's
// resource (quoted, and cut short) and reason. A template's error names
// the template and the placeholder, never the value ("invalid lock
// resource \"accounts/{id}\": value of {id}: contains a control
// character"): a value may be a secret (a cookie, a header) or hostile.
func invalidResourceMessage(err error) string {
	const msg = "invalid lock resource"
	re, ok := errors.AsType[*zklock.ResourceError](err)
	switch {
	case !ok:
		return msg
	case re.Resource == "":
		return msg + ": " + re.Reason
	}
	return fmt.Sprintf("%s %q: %s", msg, cut(re.Resource), re.Reason)
}

// cut shortens s for a message to 64 bytes.
func cut(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}

// SetRetryAfter sets the Retry-After header from the *LockError in err,
// when the answer calls for it.
func SetRetryAfter(h http.Header, a Answer, err error) {
	var le *LockError
	if a.RetryAfter && errors.As(err, &le) && le.RetryAfter > 0 {
		h.Set("Retry-After", retryAfter(le.RetryAfter))
	}
}

// DefaultErrorHandler answers a lock failure as AnswerFor says, with a
// JSON body {"message": "..."} (the body Echo's default error handler
// writes, so that every front end answers alike).
func DefaultErrorHandler(w http.ResponseWriter, r *http.Request, err error) {
	a := AnswerFor(err)
	SetRetryAfter(w.Header(), a, err)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(a.Status)
	_ = json.NewEncoder(w).Encode(struct {
		Message string `json:"message"`
	}{a.Message})
}

// retryAfter formats d as whole seconds, rounded up, at least 1.
func retryAfter(d time.Duration) string {
	s := int64((d + time.Second - 1) / time.Second)
	return strconv.FormatInt(max(s, 1), 10)
}
