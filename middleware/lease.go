package middleware

import (
	"github.com/labstack/echo/v4"
	"github.com/zklockkit/zklockkit/zklock"
)

// LeaseFrom returns the lease the middleware holds for the request, or nil
// outside a locked route. It shows the lease (Token for fencing, Resource,
// Done, Err) but cannot release it: the middleware releases it after the
// handler returns.
func LeaseFrom(c echo.Context) *zklock.Lease {
	return zklock.LeaseFromContext(c.Request().Context())
}
