// Package zkecho is Echo v4 middleware that runs a route's handler under a
// distributed lock. It is the net/http core of package middleware run
// under Echo: the same [Rule], templates and answers, with Echo's route
// parameters, route table keys and error handling. Package
// github.com/zklockkit/zklockkit/middleware/zkecho/v5 is the same for
// Echo v5.
//
//	e.POST("/accounts/:id/withdraw", withdraw,
//		zkecho.Lock(client, zkecho.Resource("accounts/{id}"), zkecho.MaxWait(2*time.Second)))
//
// Lock, like Echo's constructors, panics on a bad configuration at set-up;
// Config.ToMiddleware returns the error instead. For the whole app, a
// table from route ("METHOD /path" as registered) to Rule, with
// e.Use(mw), and [Config.CheckRoutes] with e.Routes() to find keys that
// match no route:
//
//	mw, err := zkecho.Config{
//		Locker: client,
//		Routes: map[string]zkecho.Rule{
//			"POST /accounts/:id/withdraw": {Resource: "accounts/{id}"},
//			"GET /accounts/:id":           {Resource: "accounts/{id}", ReadWrite: true},
//		},
//	}.ToMiddleware()
//
// Templates and their escaping, modes, Try and MaxWait, Limit, the
// handler's context and the Server-Timing header are described in package
// middleware. {*} is Echo's wildcard; its value is escaped like any other
// ("files/{*}" with "a/b.txt" locks "files/a%2Fb.txt"). Route parameters
// are decoded when Echo matched on the escaped path (Config.Param), so a
// key names the same resource as through net/http.
//
// [DefaultErrorHandler] answers with *echo.HTTPError values (423, 503
// with Retry-After, 400, 500) for Echo's HTTP error handler. A per-route
// template that names a parameter its route lacks cannot be seen before
// the route's first request in Echo v4 (Echo builds route middleware per
// request); it answers 500 "lock misconfigured" and the error handler
// gets the reason. Echo v5 checks it at registration (zkecho/v5's
// CheckRoute). Prefer the table, whose templates are checked at set-up.
package zkecho
