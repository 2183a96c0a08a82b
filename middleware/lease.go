package middleware

import (
	"net/http"

	"github.com/zklockkit/zklockkit/zklock"
)

// LeaseFrom returns the lease the middleware holds for the request, or nil
// outside a locked route. It shows the lease (Token for fencing, Resource,
// Done, Err) but cannot release it: the middleware releases it after the
// handler returns.
func LeaseFrom(r *http.Request) *zklock.Lease {
	return zklock.LeaseFromContext(r.Context())
}
