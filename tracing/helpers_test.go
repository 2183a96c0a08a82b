package tracing_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/zklockkit/zklockkit/tracing"
	"github.com/zklockkit/zklockkit/zklock"
	"github.com/zklockkit/zklockkit/zktest"
)

// patience bounds every wait for a condition: generous, because the
// machine is shared and ZooKeeper fsyncs every write.
const patience = 60 * time.Second

// telemetry is a real OpenTelemetry SDK with in-memory span and metric
// readers.
type telemetry struct {
	spans  *tracetest.SpanRecorder
	tp     *sdktrace.TracerProvider
	reader *sdkmetric.ManualReader
	mp     *sdkmetric.MeterProvider
}

func newTelemetry(t testing.TB) *telemetry {
	tel := &telemetry{spans: tracetest.NewSpanRecorder(), reader: sdkmetric.NewManualReader()}
	tel.tp = sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()), sdktrace.WithSpanProcessor(tel.spans))
	tel.mp = sdkmetric.NewMeterProvider(sdkmetric.WithReader(tel.reader))
	t.Cleanup(func() {
		_ = tel.tp.Shutdown(context.Background())
		_ = tel.mp.Shutdown(context.Background())
	})
	return tel
}

// observer returns a new Observer reporting to tel.
func (tel *telemetry) observer(opts ...tracing.Option) *tracing.Observer {
	return tracing.NewObserver(append([]tracing.Option{
		tracing.WithTracerProvider(tel.tp), tracing.WithMeterProvider(tel.mp)}, opts...)...)
}

func (tel *telemetry) tracer() trace.Tracer { return tel.tp.Tracer("test") }

// ended returns the ended spans named name, in the order they ended.
func (tel *telemetry) ended(name string) []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, s := range tel.spans.Ended() {
		if s.Name() == name {
			out = append(out, s)
		}
	}
	return out
}

// waitEnded waits until n spans named name have ended and returns them.
func (tel *telemetry) waitEnded(t *testing.T, name string, n int) []sdktrace.ReadOnlySpan {
	t.Helper()
	var spans []sdktrace.ReadOnlySpan
	waitFor(t, fmt.Sprintf("%d ended %s spans", n, name), func() bool {
		spans = tel.ended(name)
		return len(spans) >= n
	})
	return spans
}

// metrics collects the current metrics of the tracing scope by name.
func (tel *telemetry) metrics(t *testing.T) map[string]metricdata.Metrics {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := tel.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	out := make(map[string]metricdata.Metrics)
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name != tracing.ScopeName {
			continue
		}
		for _, m := range sm.Metrics {
			out[m.Name] = m
		}
	}
	return out
}

// histogram returns the data point of metric name whose attributes are
// exactly kvs (ok false if none).
func histogram(t *testing.T, ms map[string]metricdata.Metrics, name string, kvs ...attribute.KeyValue) (metricdata.HistogramDataPoint[float64], bool) {
	t.Helper()
	m, ok := ms[name]
	if !ok {
		return metricdata.HistogramDataPoint[float64]{}, false
	}
	h, ok := m.Data.(metricdata.Histogram[float64])
	if !ok {
		t.Fatalf("%s is a %T, want a float64 histogram", name, m.Data)
	}
	want := attribute.NewSet(kvs...)
	for _, dp := range h.DataPoints {
		if dp.Attributes.Equals(&want) {
			return dp, true
		}
	}
	return metricdata.HistogramDataPoint[float64]{}, false
}

// sum returns the value of the int64 sum name with attributes exactly kvs
// (0 if there is no such point).
func sum(t *testing.T, ms map[string]metricdata.Metrics, name string, kvs ...attribute.KeyValue) int64 {
	t.Helper()
	m, ok := ms[name]
	if !ok {
		return 0
	}
	s, ok := m.Data.(metricdata.Sum[int64])
	if !ok {
		t.Fatalf("%s is a %T, want an int64 sum", name, m.Data)
	}
	want := attribute.NewSet(kvs...)
	for _, dp := range s.DataPoints {
		if dp.Attributes.Equals(&want) {
			return dp.Value
		}
	}
	return 0
}

// sumAll returns the total of every point of the int64 sum name.
func sumAll(t *testing.T, ms map[string]metricdata.Metrics, name string) int64 {
	t.Helper()
	m, ok := ms[name]
	if !ok {
		return 0
	}
	var total int64
	for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
		total += dp.Value
	}
	return total
}

// attr returns the value of key on span (the last one set).
func attr(s sdktrace.ReadOnlySpan, key attribute.Key) (attribute.Value, bool) {
	return lookup(s.Attributes(), key)
}

func lookup(kvs []attribute.KeyValue, key attribute.Key) (attribute.Value, bool) {
	for i := len(kvs) - 1; i >= 0; i-- {
		if kvs[i].Key == key {
			return kvs[i].Value, true
		}
	}
	return attribute.Value{}, false
}

// wantAttr fails unless span has key with value want.
func wantAttr(t *testing.T, s sdktrace.ReadOnlySpan, key attribute.Key, want attribute.Value) {
	t.Helper()
	got, ok := attr(s, key)
	if !ok {
		t.Errorf("%s span: no attribute %s (want %s)", s.Name(), key, want.String())
		return
	}
	if got != want {
		t.Errorf("%s span: %s = %s (%s), want %s (%s)", s.Name(), key, got.String(), got.Type(), want.String(), want.Type())
	}
}

// eventNames lists the names of a span's events.
func eventNames(s sdktrace.ReadOnlySpan) []string {
	var names []string
	for _, e := range s.Events() {
		names = append(names, e.Name)
	}
	return names
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(patience)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", patience, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// connect opens a Client to the shared server under root.
func connect(t testing.TB, root string, opts ...zklock.Option) *zklock.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	c, err := zklock.Connect(ctx, []string{zktest.Shared().Addr()}, append([]zklock.Option{zklock.WithRoot(root)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// session returns a session id as the spans show it.
func session(id int64) string { return fmt.Sprintf("0x%x", uint64(id)) }

// events is an Observer that forwards the events it sees of some kinds.
type events struct {
	ch    chan zklock.Event
	kinds []zklock.EventKind
}

func newEvents(kinds ...zklock.EventKind) *events {
	return &events{ch: make(chan zklock.Event, 64), kinds: kinds}
}

func (ev *events) Observe(_ context.Context, e zklock.Event) {
	if slices.Contains(ev.kinds, e.Kind) {
		ev.ch <- e
	}
}

func (ev *events) next(t *testing.T, kind zklock.EventKind) zklock.Event {
	t.Helper()
	timer := time.NewTimer(patience)
	defer timer.Stop()
	for {
		select {
		case e := <-ev.ch:
			if e.Kind == kind {
				return e
			}
		case <-timer.C:
			t.Fatalf("timed out after %v waiting for a %v event", patience, kind)
		}
	}
}

// acquisition is the outcome of an acquire run in the background.
type acquisition struct {
	l   *zklock.Lease
	err error
}

// inBackground runs acquire on a goroutine of its own; its outcome arrives
// on the channel returned.
func inBackground(acquire func() (*zklock.Lease, error)) <-chan acquisition {
	ch := make(chan acquisition, 1)
	go func() {
		l, err := acquire()
		ch <- acquisition{l, err}
	}()
	return ch
}
