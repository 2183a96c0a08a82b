package adaptertest

import (
	"context"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/zklockkit/zklockkit/tracing"
)

// Meter is a MeterProvider of the OpenTelemetry SDK whose metrics a test
// reads when it likes, through a ManualReader.
type Meter struct {
	Provider *sdkmetric.MeterProvider
	reader   *sdkmetric.ManualReader
}

// NewMeter returns a Meter, shut down when the test ends.
func NewMeter(t testing.TB) *Meter {
	t.Helper()
	reader := sdkmetric.NewManualReader()
	m := &Meter{Provider: sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)), reader: reader}
	t.Cleanup(func() { _ = m.Provider.Shutdown(context.Background()) })
	return m
}

// Collect returns what the provider's instruments hold now.
func (m *Meter) Collect(t testing.TB) metricdata.ResourceMetrics {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := m.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	return rm
}

// Route is a series of tracing.MetricMisconfigured: the values of its
// attributes.
type Route struct{ Adapter, Route string }

// Misconfigured returns the counts of tracing.MetricMisconfigured by
// series (none when nothing was counted). It fails the test if the
// instrument is not a monotonic int64 counter of unit {request}, or a
// series carries attributes other than its two.
func (m *Meter) Misconfigured(t testing.TB) map[Route]int64 {
	t.Helper()
	out := map[Route]int64{}
	for _, sm := range m.Collect(t).ScopeMetrics {
		for _, md := range sm.Metrics {
			if md.Name != tracing.MetricMisconfigured {
				continue
			}
			s, ok := md.Data.(metricdata.Sum[int64])
			if !ok || !s.IsMonotonic || md.Unit != "{request}" {
				t.Fatalf("%s (scope %s) is a %T of unit %q; want a monotonic int64 counter of {request}", md.Name, sm.Scope.Name, md.Data, md.Unit)
			}
			for _, dp := range s.DataPoints {
				adapter, _ := dp.Attributes.Value(tracing.AdapterKey)
				route, _ := dp.Attributes.Value(tracing.RouteKey)
				if dp.Attributes.Len() != 2 {
					t.Errorf("%s point with attributes %v; want %s and %s only", md.Name, dp.Attributes.ToSlice(), tracing.AdapterKey, tracing.RouteKey)
				}
				out[Route{adapter.AsString(), route.AsString()}] += dp.Value
			}
		}
	}
	return out
}

// ServeMisconfigured sends n GET requests for path to h, each of which
// must be answered 500 "lock misconfigured", and n for okPath, a
// well-configured route, each of which must be answered 200 with the body
// okBody.
func ServeMisconfigured(t testing.TB, h http.Handler, n int, path, okPath, okBody string) {
	t.Helper()
	for range n {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		if rec.Code != 500 || !strings.Contains(rec.Body.String(), "lock misconfigured") {
			t.Fatalf("GET %s: %d %s; want 500 lock misconfigured", path, rec.Code, rec.Body)
		}
		rec = httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, okPath, nil))
		if rec.Code != 200 || rec.Body.String() != okBody {
			t.Fatalf("GET %s, a well-configured route: %d %s; want 200 %s", okPath, rec.Code, rec.Body, okBody)
		}
	}
}

// WantMisconfigured checks that log holds one record, at Error level,
// with the attributes attrs (among others), and that meter counted want
// in tracing.MetricMisconfigured, nothing else.
func WantMisconfigured(t testing.TB, log *Log, meter *Meter, attrs map[string]string, want map[Route]int64) {
	t.Helper()
	recs := log.Records()
	if len(recs) != 1 || recs[0].Level != slog.LevelError {
		t.Errorf("logged %+v; want one Error record", recs)
	} else {
		for k, v := range attrs {
			if recs[0].Attrs[k] != v {
				t.Errorf("logged %s=%q; want %q (record %+v)", k, recs[0].Attrs[k], v, recs[0])
			}
		}
	}
	if got := meter.Misconfigured(t); !maps.Equal(got, want) {
		t.Errorf("%s: %v; want %v", tracing.MetricMisconfigured, got, want)
	}
}
