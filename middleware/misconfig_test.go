package middleware_test

import (
	"log/slog"
	"maps"
	"net/http"
	"strings"
	"testing"

	"github.com/zklockkit/zklockkit/internal/adaptertest"
	zkmw "github.com/zklockkit/zklockkit/middleware"
	"github.com/zklockkit/zklockkit/tracing"
	"github.com/zklockkit/zklockkit/zklock"
)

// A misconfiguration only a request reveals answers 500 "lock
// misconfigured", is logged once, at Error level, with the route, the
// template and the parameter, and every such request is counted in
// zklock.misconfigured, by route: a table middleware that cannot see the
// route (it wraps something that wraps the mux; counted as "(unrouted)",
// not by its path), and a per-route template naming a parameter its route
// lacks. A well-configured route counts nothing. Without Config.Logger,
// the log is slog.Default(). (Before, nothing was logged, then nothing
// counted.)
func TestMisconfigurationIsLoggedOnceAndCounted(t *testing.T) {
	var log adaptertest.Log
	defer slog.SetDefault(slog.Default())
	slog.SetDefault(log.Logger())
	meter := adaptertest.NewMeter(t)
	locker := zklock.NewMemoryLocker()
	table, err := zkmw.Config{Locker: locker, MeterProvider: meter.Provider, Routes: map[string]zkmw.Rule{
		"POST /accounts/{id}/withdraw": {Resource: "accounts/{id}"},
	}}.ToMiddleware()
	if err != nil {
		t.Fatal(err)
	}
	inner := http.NewServeMux()
	inner.Handle("POST /accounts/{id}/withdraw", lockedAs)
	logging := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { inner.ServeHTTP(w, r) })
	unrouted := serve(t, table(logging))

	mux := http.NewServeMux()
	mux.Handle("GET /x/{id}", zkmw.Lock(locker, zkmw.Resource("accounts/{account}"), zkmw.WithMeterProvider(meter.Provider))(lockedAs))
	mux.Handle("GET /y/{id}", zkmw.Lock(locker, zkmw.Resource("accounts/{id}"), zkmw.WithMeterProvider(meter.Provider))(lockedAs))
	perRoute := serve(t, mux)

	for range 3 {
		if a := call(t, http.MethodPost, unrouted+"/accounts/1/withdraw"); a.code != 500 || a.msg != "lock misconfigured" {
			t.Fatalf("table before routing: %+v", a)
		}
		if a := call(t, http.MethodGet, perRoute+"/x/1"); a.code != 500 || a.msg != "lock misconfigured" {
			t.Fatalf("template naming a missing parameter: %+v", a)
		}
		if a := call(t, http.MethodGet, perRoute+"/y/1"); a.code != 200 {
			t.Fatalf("well-configured route: %+v", a)
		}
	}
	want := map[adaptertest.Route]int64{
		{Adapter: tracing.AdapterHTTP, Route: tracing.RouteUnrouted}: 3,
		{Adapter: tracing.AdapterHTTP, Route: "/x/{id}"}:             3,
	}
	if got := meter.Misconfigured(t); !maps.Equal(got, want) {
		t.Errorf("%s: %v; want %v", tracing.MetricMisconfigured, got, want)
	}
	recs := log.Records()
	if len(recs) != 2 {
		t.Fatalf("logged %d records, want 2 (one per route): %+v", len(recs), recs)
	}
	for _, rec := range recs {
		if rec.Level != slog.LevelError || !strings.Contains(rec.Message, "lock misconfigured") {
			t.Errorf("record %+v: want Error level, saying lock misconfigured", rec)
		}
	}
	if a := recs[0].Attrs; a["route"] != "" || a["path"] != "/accounts/1/withdraw" || !strings.Contains(a["error"], "route is unknown") {
		t.Errorf("unknown route: logged %v", a)
	}
	if a := recs[1].Attrs; a["route"] != "/x/{id}" || a["template"] != "accounts/{account}" || a["parameter"] != "account" ||
		!strings.Contains(a["error"], `route "/x/{id}" has no parameter "account"`) {
		t.Errorf("missing parameter: logged %v", a)
	}
}
