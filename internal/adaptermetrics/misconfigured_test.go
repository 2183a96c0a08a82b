package adaptermetrics_test

import (
	"context"
	"maps"
	"testing"

	"go.opentelemetry.io/otel"

	"github.com/zklockkit/zklockkit/internal/adaptermetrics"
	"github.com/zklockkit/zklockkit/internal/adaptertest"
	"github.com/zklockkit/zklockkit/tracing"
)

const scope = "github.com/zklockkit/zklockkit/middleware"

// Each Add counts one request, by adapter and route; an unknown route is
// counted as "(unrouted)"; the meter is the adapter's scope, at the
// module's version.
func TestMisconfiguredCounts(t *testing.T) {
	meter := adaptertest.NewMeter(t)
	ctx := context.Background()
	m := adaptermetrics.NewMisconfigured(meter.Provider, scope, tracing.AdapterHTTP)
	m.Add(ctx, "/x/{id}")
	m.Add(ctx, "/x/{id}")
	m.Add(ctx, "")
	adaptermetrics.NewMisconfigured(adaptermetrics.ForAdapter(meter.Provider, tracing.AdapterEcho), scope, tracing.AdapterHTTP).Add(ctx, "/y/:id")
	want := map[adaptertest.Route]int64{
		{Adapter: "http", Route: "/x/{id}"}:    2,
		{Adapter: "http", Route: "(unrouted)"}: 1,
		{Adapter: "echo", Route: "/y/:id"}:     1,
	}
	if got := meter.Misconfigured(t); !maps.Equal(got, want) {
		t.Errorf("counted %v; want %v", got, want)
	}
	for _, sm := range meter.Collect(t).ScopeMetrics {
		if sm.Scope.Name != scope || sm.Scope.Version != tracing.Version() {
			t.Errorf("scope %s %s; want %s %s", sm.Scope.Name, sm.Scope.Version, scope, tracing.Version())
		}
	}
}

// Without a provider, the counter is the global provider's, set before
// or after the adapter was built: an application that sets one gets the
// metric with no code. (The test sets the process's global provider for
// good: nothing else in this package uses it.)
func TestMisconfiguredGlobalProvider(t *testing.T) {
	meter := adaptertest.NewMeter(t)
	ctx := context.Background()
	before := adaptermetrics.NewMisconfigured(nil, scope, tracing.AdapterGRPC)
	echo := adaptermetrics.NewMisconfigured(adaptermetrics.ForAdapter(nil, tracing.AdapterEcho), scope, tracing.AdapterHTTP)
	otel.SetMeterProvider(meter.Provider)
	after := adaptermetrics.NewMisconfigured(nil, scope, tracing.AdapterGRPC)
	before.Add(ctx, "/bank.v1.Bank/Transfer")
	after.Add(ctx, "/bank.v1.Bank/Transfer")
	echo.Add(ctx, "/y/:id")
	want := map[adaptertest.Route]int64{
		{Adapter: "grpc", Route: "/bank.v1.Bank/Transfer"}: 2,
		{Adapter: "echo", Route: "/y/:id"}:                 1,
	}
	if got := meter.Misconfigured(t); !maps.Equal(got, want) {
		t.Errorf("counted %v; want %v", got, want)
	}
}
