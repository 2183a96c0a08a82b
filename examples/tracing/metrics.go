package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/zklockkit/zklockkit/tracing"
)

// printMetrics prints the lock metrics one line per series.
func printMetrics(w io.Writer, r *sdkmetric.ManualReader) error {
	var rm metricdata.ResourceMetrics
	if err := r.Collect(context.Background(), &rm); err != nil {
		return err
	}
	fmt.Fprintln(w, "\nmetrics:")
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name != tracing.ScopeName {
			continue
		}
		for _, m := range sm.Metrics {
			var lines []string
			switch d := m.Data.(type) {
			case metricdata.Histogram[float64]:
				for _, dp := range d.DataPoints {
					lines = append(lines, fmt.Sprintf("  %s{%s} count=%d mean=%.1fms", m.Name, labels(dp.Attributes),
						dp.Count, 1000*dp.Sum/float64(max(dp.Count, 1))))
				}
			case metricdata.Sum[int64]:
				for _, dp := range d.DataPoints {
					lines = append(lines, fmt.Sprintf("  %s{%s} %d", m.Name, labels(dp.Attributes), dp.Value))
				}
			}
			slices.Sort(lines)
			for _, l := range lines {
				fmt.Fprintln(w, l)
			}
		}
	}
	return nil
}

func labels(s attribute.Set) string {
	var parts []string
	for _, kv := range s.ToSlice() {
		parts = append(parts, strings.TrimPrefix(string(kv.Key), "zklock.")+"="+kv.Value.String())
	}
	return strings.Join(parts, ",")
}
