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
	// CPU is this process's CPU time (user and system) during Elapsed: the
	// client's cost, the servers' not included. 0 when not measured.
	CPU time.Duration
	// ServerCPU is the CPU time (user and system) of the ZooKeeper server
	// processes during Elapsed, when they run on this machine; 0 when not
	// measured.
	ServerCPU time.Duration
	// Writes is this process's write system calls during Elapsed, and
	// Requests the requests the servers received from clients during it
	// (pings included); both 0 when not measured.
	Writes, Requests int64
}

// CPUPerOp returns the CPU time per operation, 0 when not measured.
func (s Sample) CPUPerOp() time.Duration {
	if s.Ops <= 0 {
		return 0
	}
	return s.CPU / time.Duration(s.Ops)
}

// ServerCPUPerOp returns the servers' CPU time per operation, 0 when not
// measured.
func (s Sample) ServerCPUPerOp() time.Duration {
	if s.Ops <= 0 {
		return 0
	}
	return s.ServerCPU / time.Duration(s.Ops)
}

// WritesPerRequest returns write system calls per request, 0 when not
// measured.
func (s Sample) WritesPerRequest() float64 {
	if s.Requests <= 0 {
		return 0
	}
	return float64(s.Writes) / float64(s.Requests)
}

// RequestsPerOp returns requests per operation, 0 when not measured.
func (s Sample) RequestsPerOp() float64 {
	if s.Requests <= 0 || s.Ops <= 0 {
		return 0
	}
	return float64(s.Requests) / float64(s.Ops)
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
