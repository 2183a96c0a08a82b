package bench_test

import (
	"testing"
	"time"

	"github.com/zklockkit/zklockkit/cmd/zklock-bench/internal/bench"
)

func TestSamplePercentile(t *testing.T) {
	var s bench.Sample
	for i := 100; i >= 1; i-- { // out of order on purpose
		s.Latencies = append(s.Latencies, time.Duration(i)*time.Millisecond)
	}
	for _, tc := range []struct {
		p    float64
		want time.Duration
	}{{50, 50 * time.Millisecond}, {99, 99 * time.Millisecond}, {100, 100 * time.Millisecond}, {0.1, time.Millisecond}} {
		if got := s.Percentile(tc.p); got != tc.want {
			t.Errorf("Percentile(%v) = %v, want %v", tc.p, got, tc.want)
		}
	}
	if s.Latencies[0] != 100*time.Millisecond {
		t.Error("Percentile sorted the sample's own slice")
	}
	if got := (bench.Sample{}).Percentile(50); got != 0 {
		t.Errorf("empty Percentile = %v, want 0", got)
	}
}

func TestSampleRate(t *testing.T) {
	s := bench.Sample{Ops: 500, Elapsed: 2 * time.Second}
	if got := s.Rate(); got != 250 {
		t.Errorf("Rate = %v, want 250", got)
	}
	if got := s.WallRate(); got != 250 {
		t.Errorf("WallRate without Wall = %v, want 250", got)
	}
	s.Wall = 5 * time.Second
	if got := s.WallRate(); got != 100 {
		t.Errorf("WallRate = %v, want 100", got)
	}
	if got := (bench.Sample{Ops: 3}).Rate(); got != 0 {
		t.Errorf("Rate with no time = %v, want 0", got)
	}
}
