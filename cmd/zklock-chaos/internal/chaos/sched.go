package chaos

import (
	"runtime/metrics"
	"time"
)

// schedWatch reads the Go runtime's histogram of how long goroutines
// waited to run once runnable (/sched/latencies:seconds). A process that
// runs can still keep one of its goroutines waiting: under the load
// phase, a worker has thousands of goroutines on two busy cores. The
// stall watch sees only stops of the whole process; this sees the waits
// of any goroutine, an acquire's among them.
type schedWatch struct {
	s    []metrics.Sample
	prev []uint64
}

const schedMetric = "/sched/latencies:seconds"

func newSchedWatch() *schedWatch {
	w := &schedWatch{s: []metrics.Sample{{Name: schedMetric}}}
	w.longest()
	return w
}

// longest returns the longest wait to run since the last call, as the
// lower bound of its bucket (0 if none, or the metric is unsupported).
func (w *schedWatch) longest() time.Duration {
	metrics.Read(w.s)
	if w.s[0].Value.Kind() != metrics.KindFloat64Histogram {
		return 0
	}
	h := w.s[0].Value.Float64Histogram()
	var d time.Duration
	for i := len(h.Counts) - 1; i >= 0; i-- {
		var before uint64
		if i < len(w.prev) {
			before = w.prev[i]
		}
		if h.Counts[i] > before {
			d = time.Duration(h.Buckets[i] * float64(time.Second))
			break
		}
	}
	w.prev = append(w.prev[:0], h.Counts...)
	return max(d, 0)
}
