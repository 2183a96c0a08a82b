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
// with Retry-After, 400 saying why, 500) for Echo's HTTP error handler.
//
// A per-route template that names a parameter its route lacks is found
// when the route is registered with [CheckRoute] as Echo's hook (the
// registration panics with the reason), as in Echo v5:
//
//	e := echo.New()
//	e.OnAddRouteHandler = zkecho.CheckRoute
//
// Without it, Echo v4 builds route middleware per request, so the route's
// first request finds it: every request to the route answers 500 "lock
// misconfigured", the reason (route, template, parameter) is logged once
// at Error level to Config.Logger, and every such request is counted in
// the metric zklock.misconfigured (Config.MeterProvider). A table's
// templates are checked when the middleware is built.
package zkecho
