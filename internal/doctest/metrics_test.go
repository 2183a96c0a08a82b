package doctest_test

import (
	"context"
	"go/constant"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/zklockkit/zklockkit/fence"
	"github.com/zklockkit/zklockkit/middleware"
	"github.com/zklockkit/zklockkit/tracing"
	"github.com/zklockkit/zklockkit/zklock"
)

// TestDocMetricNames checks every metric, label, span and attribute name
// the pages quote: a Prometheus name (zklock_...) must be one the
// OpenTelemetry Prometheus exporter shows for package tracing's metrics
// after an acquire, a refused try, a release and a loss, or for the
// adapters' after a misconfigured request; an OpenTelemetry name
// (zklock.x.y) on the pages about tracing must be one of package
// tracing's constants.
func TestDocMetricNames(t *testing.T) {
	root, pages := load(t)

	// What Prometheus shows.
	shown := map[string]bool{fence.DefaultTable: true} // the fence's table, also zklock_...
	for _, mf := range scrapeAll(t) {
		name := mf.GetName()
		shown[name] = true
		if mf.GetType() == dto.MetricType_HISTOGRAM {
			for _, s := range []string{"_bucket", "_sum", "_count"} {
				shown[name+s] = true
			}
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				shown[l.GetName()] = true
			}
		}
	}
	promName := regexp.MustCompile(`\bzklock_[a-z_]*[a-z]`)
	for _, p := range pages {
		for i, line := range p.Lines {
			for _, n := range promName.FindAllString(line, -1) {
				if !shown[n] {
					t.Errorf("%s:%d: %s is no metric or label the Prometheus exporter shows for package tracing or the adapters", p.Path, i+1, n)
				}
			}
		}
	}

	// Package tracing's names.
	named := map[string]bool{}
	for _, v := range constants(t, root, "github.com/zklockkit/zklockkit/tracing") {
		if v.Kind() == constant.String {
			named[constant.StringVal(v)] = true
		}
	}
	// A name, not a file's (docs/grafana/zklock.json).
	otelName := regexp.MustCompile(`(?:^|[^/\w])(zklock\.[a-z_]+(?:\.[a-z_]+)*)\b`)
	for _, p := range pages {
		if p.Path != "README.md" && p.Path != "docs/metrics.md" && p.Path != "docs/adapters.md" {
			continue // elsewhere zklock.x is a flag or a file name
		}
		for i, line := range p.Lines {
			for _, m := range otelName.FindAllStringSubmatch(line, -1) {
				if n := m[1]; !named[n] {
					t.Errorf("%s:%d: %s is none of package tracing's names (metrics, attributes, spans, events)", p.Path, i+1, n)
				}
			}
		}
	}
}

// scrapeAll returns what the Prometheus exporter shows for package
// tracing's observer after an acquire, a refused try, a release and a
// lost lease on a MemoryLocker, and for the HTTP middleware after a
// request it refused as misconfigured (the gRPC and Echo adapters record
// the same metric).
func scrapeAll(t *testing.T) []*dto.MetricFamily {
	t.Helper()
	registry := prometheus.NewRegistry()
	exporter, err := otelprom.New(otelprom.WithRegisterer(registry))
	if err != nil {
		t.Fatal(err)
	}
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(exporter))
	defer func() { _ = mp.Shutdown(context.Background()) }()
	obs := tracing.NewObserver(tracing.WithMeterProvider(mp))
	m := zklock.NewMemoryLocker(obs)
	ctx := context.Background()
	l, err := m.Acquire(ctx, "accounts/42")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Acquire(ctx, "accounts/42", zklock.Try()); err == nil {
		t.Fatal("a try on a held lock succeeded")
	}
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
	// A lease acquired and lost, as the observer hears of them (the
	// MemoryLocker loses no lease).
	const id = 1 << 40
	obs.Observe(ctx, zklock.Event{Kind: zklock.EventAcquired, ID: id, Resource: "accounts/7", Resources: []string{"accounts/7"},
		Mode: zklock.Exclusive, Token: 1, Time: time.Now()})
	obs.Observe(ctx, zklock.Event{Kind: zklock.EventLost, ID: id, Resource: "accounts/7", Resources: []string{"accounts/7"},
		Mode: zklock.Exclusive, Held: time.Millisecond, Err: &zklock.LostError{Resource: "accounts/7", Reason: zklock.LossNodeDeleted}, Time: time.Now()})
	// A Routes table middleware that wraps no ServeMux cannot know the
	// route: 500, counted in zklock.misconfigured.
	mw, err := middleware.Config{Locker: m, Routes: map[string]middleware.Rule{"GET /x": {}},
		Logger: slog.New(slog.DiscardHandler), MeterProvider: mp}.ToMiddleware()
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	mw(http.NotFoundHandler()).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/x", nil))
	if rec.Code != http.StatusInternalServerError {
		t.Fatalf("a request the table middleware cannot route: %d %s; want 500", rec.Code, rec.Body)
	}
	mfs, err := registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	return mfs
}
