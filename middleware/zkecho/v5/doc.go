// Package zkecho is Echo v5 middleware that runs a route's handler under a
// distributed lock: the v5 twin of
// github.com/zklockkit/zklockkit/middleware/zkecho (Echo v4), with the
// same Config, Rule, templates and answers, over the net/http core of
// package middleware.
//
//	e := echo.New()
//	e.OnAddRoute = zkecho.CheckRoute // a template naming a parameter its route lacks fails here
//	e.POST("/accounts/:id/withdraw", withdraw,
//		zkecho.Lock(client, zkecho.Resource("accounts/{id}"), zkecho.Try()))
//
// For the whole app, a table with e.Use(mw) and [Config.CheckRoutes] with
// e.Router().Routes(). [DefaultErrorHandler] answers with Echo v5's
// *echo.HTTPError, wrapping the lock error.
//
// Without CheckRoute, a per-route template naming a parameter its route
// lacks is found by the route's first request: every request to the
// route answers 500 "lock misconfigured", the reason is logged once at
// Error level to Config.Logger, and every such request is counted in the
// metric zklock.misconfigured (Config.MeterProvider).
//
// Route parameters are decoded when Echo matched on the escaped path, as
// Echo's default router leaves them raw; with
// echo.RouterConfig.UnescapePathParamValues set, set Config.Param to
// c.Param so that values are not decoded twice.
package zkecho
