package tracing_test

import (
	"bufio"
	"context"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/zklockkit/zklockkit/tracing"
	"github.com/zklockkit/zklockkit/zklock"
	"github.com/zklockkit/zklockkit/zktest"
)

// The lock metrics on a Prometheus /metrics endpoint: the OpenTelemetry
// Prometheus exporter is the MeterProvider's reader, and the Observer
// reports to that MeterProvider. The example scrapes the endpoint and
// prints each lock metric's name and type as Prometheus shows them, with
// its labels.
func ExampleNewObserver_prometheus() {
	registry := prometheus.NewRegistry()
	exporter, err := otelprom.New(otelprom.WithRegisterer(registry))
	if err != nil {
		log.Fatal(err)
	}
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(exporter))
	defer func() { _ = mp.Shutdown(context.Background()) }()

	ctx := context.Background()
	c, err := zklock.Connect(ctx, []string{zktest.Shared().Addr()}, // your ensemble
		zklock.WithRoot("/zktest/ExampleNewObserver_prometheus"),
		zklock.WithObserver(tracing.NewObserver(tracing.WithMeterProvider(mp))))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	// In a service: http.Handle("/metrics", promhttp.HandlerFor(registry, promhttp.HandlerOpts{})).
	srv := httptest.NewServer(promhttp.HandlerFor(registry, promhttp.HandlerOpts{}))
	defer srv.Close()

	lease, err := c.Acquire(ctx, "accounts/42")
	if err != nil {
		log.Fatal(err)
	}
	if _, err := c.TryAcquire(ctx, "accounts/42"); err == nil {
		log.Fatal("a second lease on a held lock")
	}
	if err := lease.Release(ctx); err != nil {
		log.Fatal(err)
	}
	// A lease lost: someone deletes its node.
	lost, err := c.Acquire(ctx, "accounts/7")
	if err != nil {
		log.Fatal(err)
	}
	if err := c.Conn().Delete(lost.Path(), -1); err != nil {
		log.Fatal(err)
	}
	<-lost.Done()

	// The loss is reported on another goroutine: scrape until it shows.
	// Its counter is added last, after the hold's duration, and a scrape
	// reads one instrument after another while the loss may be recorded
	// between two: the scrape after the one that saw the counter sees
	// all of it.
	var metrics []string
	seen := false
	for i := 0; i < 500 && !seen; i++ {
		if i > 0 {
			time.Sleep(10 * time.Millisecond)
		}
		if metrics, err = scrape(srv.URL); err != nil {
			log.Fatal(err)
		}
		seen = slices.ContainsFunc(metrics, func(m string) bool { return strings.HasPrefix(m, "zklock_hold_lost_total ") })
	}
	if metrics, err = scrape(srv.URL); err != nil {
		log.Fatal(err)
	}
	for _, m := range metrics {
		fmt.Println(m)
	}
	// Output:
	// zklock_acquire_active gauge {otel_scope_name,otel_scope_schema_url,otel_scope_version,zklock_lock_kind,zklock_resource_class}
	// zklock_acquire_duration_seconds histogram {error_type,le,otel_scope_name,otel_scope_schema_url,otel_scope_version,zklock_lock_kind,zklock_outcome,zklock_resource_class}
	// zklock_hold_active gauge {otel_scope_name,otel_scope_schema_url,otel_scope_version,zklock_lock_kind,zklock_resource_class}
	// zklock_hold_duration_seconds histogram {error_type,le,otel_scope_name,otel_scope_schema_url,otel_scope_version,zklock_lock_kind,zklock_resource_class}
	// zklock_hold_lost_total counter {error_type,otel_scope_name,otel_scope_schema_url,otel_scope_version,zklock_lock_kind,zklock_lost_reason,zklock_resource_class}
}

// scrape reads a Prometheus text exposition and returns, for each zklock
// metric, its name, its type and the names of the labels its samples
// carry.
func scrape(url string) ([]string, error) {
	resp, err := http.Get(url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	types := make(map[string]string)
	labels := make(map[string]map[string]bool)
	var names []string
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if f := strings.Fields(line); len(f) == 4 && f[0] == "#" && f[1] == "TYPE" && strings.HasPrefix(f[2], "zklock_") {
			types[f[2]] = f[3]
			labels[f[2]] = make(map[string]bool)
			names = append(names, f[2])
			continue
		}
		if !strings.HasPrefix(line, "zklock_") {
			continue
		}
		sample, rest, _ := strings.Cut(line, "{")
		family := sample
		for _, suffix := range []string{"_bucket", "_sum", "_count"} {
			if f, ok := strings.CutSuffix(sample, suffix); ok && types[f] == "histogram" {
				family = f
			}
		}
		for _, k := range labelNames(rest) {
			labels[family][k] = true
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	slices.Sort(names)
	var out []string
	for _, n := range names {
		var ls []string
		for l := range labels[n] {
			ls = append(ls, l)
		}
		slices.Sort(ls)
		out = append(out, fmt.Sprintf("%s %s {%s}", n, types[n], strings.Join(ls, ",")))
	}
	return out, nil
}

// labelNames returns the names in a sample's label set, given the text
// after its "{": name="value" pairs, values quoted with \ escapes.
func labelNames(s string) []string {
	var names []string
	for len(s) > 0 && s[0] != '}' {
		k, rest, ok := strings.Cut(s, "=\"")
		if !ok {
			break
		}
		names = append(names, strings.TrimPrefix(k, ","))
		i := 0
		for i < len(rest) && rest[i] != '"' {
			if rest[i] == '\\' {
				i++
			}
			i++
		}
		s = rest[min(i+1, len(rest)):]
	}
	return names
}
