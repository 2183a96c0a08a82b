// Package middleware runs HTTP handlers under a distributed lock:
// concurrent requests that touch the same resource run one at a time
// across every replica of the service, requests for different resources
// run in parallel.
//
// It is the net/http core of zklockkit's HTTP front ends: a
// func(http.Handler) http.Handler for the standard library's ServeMux
// (and chi, gorilla/mux, any router, through [Router]), and the
// [Core] that the Echo adapters build on (package
// github.com/zklockkit/zklockkit/middleware/zkecho for Echo v4, and
// .../zkecho/v5 for Echo v5). Every front end takes the same [Rule],
// the same resource templates, and gives the same answers.
//
// # Per route
//
//	client, err := zklock.Connect(ctx, []string{"127.0.0.1:2181"})
//	...
//	mux.Handle("POST /accounts/{id}/withdraw",
//		zkmw.Lock(client, zkmw.Resource("accounts/{id}"), zkmw.MaxWait(2*time.Second))(withdraw))
//
// Lock panics on a bad configuration at set-up; [Config.ToMiddleware]
// returns the error instead. The Locker is any [zklock.Locker]: a
// *zklock.Client in production, or another implementation in a unit test.
//
// # A table for the app
//
// A table from route ("METHOD /pattern" as registered) to [Rule]; routes
// not in it are not locked. The middleware must know the matched route:
// wrapping a *http.ServeMux itself, mw(mux), it asks the mux which route
// will serve the request (404, 405 and redirects are not locked); it may
// also wrap each of the mux's handlers. With chi, add it with r.With or
// inside r.Group; with gorilla/mux, r.Use. A table middleware that cannot
// know the route (placed before another router, or around something that
// wraps the mux) answers 500 rather than let requests through unlocked,
// and logs why once (Config.Logger).
//
//	mw, err := zkmw.Config{
//		Locker: client,
//		Routes: map[string]zkmw.Rule{
//			"POST /accounts/{id}/withdraw": {Resource: "accounts/{id}"},
//			"GET /accounts/{id}":           {Resource: "accounts/{id}", ReadWrite: true},
//		},
//	}.ToMiddleware()
//	...
//	http.ListenAndServe(addr, mw(mux))
//
// [Config.CheckRoutes] finds table keys that match no registered route.
//
// # Resources
//
// A [Rule] names its resources with templates in zklockkit's one resource
// language: route parameters ({id} or {param:id}), query parameters
// ({query:name}), headers ({header:X-Tenant}) and cookies
// ({cookie:session}). A placeholder's value is escaped ("/" as "%2F", "%"
// as "%25"), so distinct keys never name the same resource and a key
// cannot add a level to the name; the gRPC interceptors and generated
// code escape alike, so "accounts/{id}" names one resource whichever
// front end locks it. Two placeholders must be separated by text
// containing "/", and "{{" "}}" are literal braces. By default the
// resource is the route's pattern without its leading slash, parameters
// filled in: "accounts/42/withdraw". A missing or empty value, or a name
// zklock refuses (control characters, invalid UTF-8, over
// [zklock.MaxResourceLen] bytes), answers 400 with a message that names
// the template, the placeholder and the reason, never the value
// ("invalid lock resource \"accounts/{id}\": value of {id}: contains a
// control character"). Several templates
// ([Rule].Resources) lock all their resources, all or nothing; two that
// name the same resource for a request lock it once.
//
// # Modes and waiting
//
// [Exclusive] (the default) admits one request at a time; [ReadWrite]
// lets GET and HEAD requests share the lock while other methods take it
// alone; [Read] and [Write] fix the mode for every method; [Rule].Limit
// makes a semaphore. By default a request waits for the lock as long as
// it lives; [Rule].Try answers 423 at once when the resource is busy, and
// [Rule].MaxWait bounds the wait (also while ZooKeeper is unreachable).
// Try and MaxWait exclude each other: the configuration is refused with
// an error that matches both ErrInvalidConfig and zklock.ErrInvalidOption.
//
// # During the request
//
// The handler runs with the request's context replaced by the lease's
// context ([zklock.Lease.Context]): it is cancelled if the lock is lost
// mid-request, and it carries the lease, so code called by the handler
// that acquires the same resource through the same Locker with that
// context re-enters the lock instead of deadlocking. [LeaseFrom] gives the
// lease (for its fencing token). The lease is released when the handler
// returns, whether it succeeds or panics, and when the client goes away
// (the release does not depend on the request's context).
//
// # Answers
//
// [AnswerFor] is the table every front end answers by: 423 Locked with
// Retry-After when busy with Try, 503 with Retry-After when MaxWait passed,
// ZooKeeper is unreachable or the lock was lost, 400 for an invalid
// resource (saying why), 500 for a misconfiguration. [DefaultErrorHandler] writes it
// as JSON {"message": "..."}; replace it with Config.ErrorHandler, which
// receives a *[LockError] that wraps the zklock error.
//
// A Server-Timing header reports the lock wait, e.g.
//
//	Server-Timing: zklock;dur=12.4;desc="accounts/42"
//
// It is set before the handler runs; Config.DisableServerTiming turns it
// off.
package middleware
