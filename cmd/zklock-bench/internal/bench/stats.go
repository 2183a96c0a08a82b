package bench

import (
	"slices"
	"time"
)

// Sample is the outcome of one run: how many operations completed in how
// long, and the latency of each (what a latency is depends on the
// scenario).
type Sample struct {
	Ops       int
	Elapsed   time.Duration
	Latencies []time.Duration
	// Wall, when not zero, is the run's wall-clock time where Elapsed
	// counts only part of it (PingPong).
	Wall time.Duration
}

// Rate returns operations per second.
func (s Sample) Rate() float64 {
	if s.Elapsed <= 0 {
		return 0
	}
	return float64(s.Ops) / s.Elapsed.Seconds()
}

// WallRate returns operations per second of wall-clock time.
func (s Sample) WallRate() float64 {
	if s.Wall <= 0 {
		return s.Rate()
	}
	return float64(s.Ops) / s.Wall.Seconds()
}

// Percentile returns the p-th percentile (0 < p <= 100) of the latencies by
// the nearest-rank method, or 0 when there are none.
func (s Sample) Percentile(p float64) time.Duration {
	return percentile(s.Latencies, p)
}

func percentile(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	sorted := slices.Clone(d)
	slices.Sort(sorted)
	rank := int(p/100*float64(len(sorted)) + 0.999999)
	rank = min(max(rank, 1), len(sorted))
	return sorted[rank-1]
}

// median returns the median of xs (the mean of the middle two for an even
// count), or 0 for none.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

func medianDuration(ds []time.Duration) time.Duration {
	xs := make([]float64, len(ds))
	for i, d := range ds {
		xs[i] = float64(d)
	}
	return time.Duration(median(xs))
}
