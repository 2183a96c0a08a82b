package tracing_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/zklockkit/zklockkit/tracing"
	"github.com/zklockkit/zklockkit/zklock"
	"github.com/zklockkit/zklockkit/zktest"
)

// openMetrics is the Accept header of a Prometheus that scrapes
// OpenMetrics, the text format that carries exemplars.
const openMetrics = "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1"

// exemplarRE matches a bucket of the wait histogram with its exemplar:
// labels, then "# {trace_id=...,span_id=...} value timestamp".
var (
	exemplarRE = regexp.MustCompile(`(?m)^zklock_acquire_duration_seconds_bucket\{(.*?)\} \d+ # \{(.*?)\} ([0-9.e+-]+)`)
	spanIDRE   = regexp.MustCompile(`span_id="([0-9a-f]{16})"`)
	traceIDRE  = regexp.MustCompile(`trace_id="([0-9a-f]{32})"`)
)

type exemplar struct {
	labels, spanID, traceID string
	value                   float64
}

// exposition serves a Prometheus registry fed by an OpenTelemetry
// exporter, as docs/metrics.md wires it (OpenMetrics on), and an Observer
// reporting to it and to a span recorder.
type exposition struct {
	url   string
	spans *tracetest.SpanRecorder
	tp    *sdktrace.TracerProvider
	obs   *tracing.Observer
}

func newExposition(t *testing.T) *exposition {
	registry := prometheus.NewRegistry()
	exporter, err := otelprom.New(otelprom.WithRegisterer(registry))
	if err != nil {
		t.Fatal(err)
	}
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(exporter))
	x := &exposition{spans: tracetest.NewSpanRecorder()}
	x.tp = sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()), sdktrace.WithSpanProcessor(x.spans))
	t.Cleanup(func() {
		_ = mp.Shutdown(context.Background())
		_ = x.tp.Shutdown(context.Background())
	})
	x.obs = tracing.NewObserver(tracing.WithMeterProvider(mp), tracing.WithTracerProvider(x.tp))
	srv := httptest.NewServer(promhttp.HandlerFor(registry, promhttp.HandlerOpts{EnableOpenMetrics: true}))
	t.Cleanup(srv.Close)
	x.url = srv.URL
	return x
}

// scrape returns the exposition as the given Accept header gets it.
func (x *exposition) scrape(t *testing.T, accept string) string {
	t.Helper()
	req, _ := http.NewRequest("GET", x.url, nil)
	req.Header.Set("Accept", accept)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func exemplars(text string) []exemplar {
	var out []exemplar
	for _, m := range exemplarRE.FindAllStringSubmatch(text, -1) {
		v, _ := strconv.ParseFloat(m[3], 64)
		e := exemplar{labels: m[1], value: v}
		if s := spanIDRE.FindStringSubmatch(m[2]); s != nil {
			e.spanID = s[1]
		}
		if s := traceIDRE.FindStringSubmatch(m[2]); s != nil {
			e.traceID = s[1]
		}
		out = append(out, e)
	}
	return out
}

// slowAcquire makes c wait about d for resource behind another client,
// under a request span, and returns the wait.
func slowAcquire(t *testing.T, x *exposition, c, holder *zklock.Client, resource string, d time.Duration) time.Duration {
	t.Helper()
	ctx := context.Background()
	h, err := holder.Acquire(ctx, resource)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		time.Sleep(d)
		_ = h.Release(ctx)
	}()
	rctx, request := x.tp.Tracer("test").Start(ctx, "request")
	start := time.Now()
	l, err := c.Acquire(rctx, resource)
	wait := time.Since(start)
	request.End()
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Release(rctx); err != nil {
		t.Fatal(err)
	}
	return wait
}

// TestIntegration_WaitExemplar: a slow acquire's wait, scraped in the
// OpenMetrics format, carries an exemplar naming the acquire's own span
// (zklock.acquire) and trace, so that a spike on a dashboard leads to the
// trace of an acquire that made it. The classic text format carries none.
func TestIntegration_WaitExemplar(t *testing.T) {
	x := newExposition(t)
	root := zktest.UniqueRoot(t)
	c := connect(t, root, zklock.WithObserver(x.obs))
	holder := connect(t, root)
	wait := slowAcquire(t, x, c, holder, "accounts/7", 300*time.Millisecond)

	var acquire sdktrace.ReadOnlySpan
	for _, s := range x.spans.Ended() {
		if s.Name() == tracing.SpanAcquire {
			acquire = s
		}
	}
	if acquire == nil {
		t.Fatal("the slow acquire has no zklock.acquire span")
	}
	text := x.scrape(t, openMetrics)
	found := false
	for _, e := range exemplars(text) {
		if !strings.Contains(e.labels, `zklock_outcome="acquired"`) || e.value < 0.25 {
			continue
		}
		found = true
		if e.spanID != acquire.SpanContext().SpanID().String() || e.traceID != acquire.SpanContext().TraceID().String() {
			t.Errorf("the slow wait's exemplar names span %s of trace %s; want the acquire span %s of trace %s",
				e.spanID, e.traceID, acquire.SpanContext().SpanID(), acquire.SpanContext().TraceID())
		}
		if d := time.Duration(e.value * float64(time.Second)); d > wait || d < wait-50*time.Millisecond {
			t.Errorf("exemplar value %v, the acquire waited %v", d, wait)
		}
	}
	if !found {
		t.Fatalf("no exemplar of a wait over 250ms in:\n%s", text)
	}
	if classic := x.scrape(t, "text/plain;version=0.0.4"); strings.Contains(classic, "trace_id=") || !strings.Contains(classic, "zklock_acquire_duration_seconds_bucket") {
		t.Errorf("the classic text format has exemplars, or no histogram:\n%s", classic)
	}
}

// TestIntegration_WaitExemplarOff: OTEL_METRICS_EXEMPLAR_FILTER=always_off
// turns exemplars off in the SDK, whatever the Observer records with.
func TestIntegration_WaitExemplarOff(t *testing.T) {
	t.Setenv("OTEL_METRICS_EXEMPLAR_FILTER", "always_off")
	x := newExposition(t)
	root := zktest.UniqueRoot(t)
	c := connect(t, root, zklock.WithObserver(x.obs))
	holder := connect(t, root)
	slowAcquire(t, x, c, holder, "accounts/8", 100*time.Millisecond)
	if text := x.scrape(t, openMetrics); strings.Contains(text, "trace_id=") {
		t.Errorf("exemplars with the filter off:\n%s", text)
	}
}
