// Package middleware is Echo v4 middleware that runs a route's handler under
// a distributed lock: concurrent requests that touch the same resource run
// one at a time across every replica of the service, requests for different
// resources run in parallel.
//
// The package shares its name with Echo's own middleware package; import
// it under an alias:
//
//	import (
//		echomw "github.com/labstack/echo/v4/middleware"
//		zkmw "github.com/zklockkit/zklockkit/middleware"
//	)
//
// # Per route
//
//	client, err := zklock.Connect(ctx, []string{"127.0.0.1:2181"})
//	...
//	e.POST("/accounts/:id/withdraw", withdraw,
//		zkmw.Lock(client, zkmw.Resource("accounts/{id}"), zkmw.MaxWait(2*time.Second)))
//
// Lock, like Echo's constructors, panics on a bad configuration at set-up;
// Config.ToMiddleware returns the error instead. The Locker is any
// [zklock.Locker]: a *zklock.Client in production, or another
// implementation in a unit test.
//
// # Once for the app
//
// A table from route ("METHOD /path" as registered) to [Rule]; routes not
// in it are not locked:
//
//	mw, err := zkmw.Config{
//		Locker: client,
//		Routes: map[string]zkmw.Rule{
//			"POST /accounts/:id/withdraw": {Resource: "accounts/{id}"},
//			"GET /accounts/:id":           {Resource: "accounts/{id}", Mode: zkmw.ReadWrite},
//		},
//	}.ToMiddleware()
//	if err != nil { ... }
//	e.Use(mw)
//
// [Config.CheckRoutes] with e.Routes() finds table keys that match no
// route.
//
// # Resources
//
// A [Rule] names its resource with a template over route parameters
// ({id} or {param:id}), query parameters ({query:name}) and headers
// ({header:X-Tenant}), or with a function of the echo.Context. By default
// the resource is the route's path without its leading slash, parameters
// filled in: "accounts/42/withdraw". Values are inserted verbatim; zklock
// maps every resource name to a single znode under its root, so no input
// can reach outside it. A name zklock refuses (control characters, invalid
// UTF-8, over [zklock.MaxResourceLen] bytes) or a missing value answers 400.
//
// # Modes and waiting
//
// [Exclusive] (the default) admits one request at a time; [ReadWrite]
// lets GET and HEAD requests share the lock while other methods take it
// alone; [Read] and [Write] fix the mode for every method. By default a
// request waits for the lock as long as it lives; [Rule].Try answers 423 at
// once when the resource is busy, and [Rule].MaxWait bounds the wait
// (also while ZooKeeper is unreachable).
//
// # During the request
//
// The handler runs with the request's context replaced by the lease's
// context ([zklock.Lease.Context]): it is cancelled if the lock is lost
// mid-request, and it carries the lease, so code called by the handler that
// acquires the same resource through the same Locker with that context
// re-enters the lock instead of deadlocking. [LeaseFrom] gives the lease
// (for its fencing token). The lease is released when the handler returns,
// whether it succeeds, returns an error or panics, and when the client
// goes away (the context is cancelled; the release does not depend on it).
//
// # Responses
//
// [DefaultErrorHandler] answers with *echo.HTTPError values: 423 Locked
// with Retry-After when busy in Try mode, 503 with Retry-After when
// MaxWait passed or ZooKeeper is unreachable, 400 for an invalid resource.
// Replace it with Config.ErrorHandler; it receives a *[LockError] that
// wraps the zklock error.
//
// A Server-Timing header reports the lock wait, e.g.
//
//	Server-Timing: zklock;dur=12.4;desc="accounts/42"
//
// It is set before the handler runs; Config.DisableServerTiming turns it
// off.
package middleware
