package zklock

import (
	"bufio"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// flightCostFile holds the benchmark runs docs/operations.md quotes for
// the flight recorder's cost, as `go test -bench` printed them.
const flightCostFile = "testdata/flight-cost.txt"

// flightCostTarget is the cost the flight recorder aims at: at most 3%
// of the wall time of an uncontended acquire and release.
const flightCostTarget = 3.0

// benchRun is one line of benchmark output: its metrics by unit.
type benchRun map[string]float64

// readBenchRuns reads the runs of each benchmark of a file of `go test
// -bench` output, by name without the GOMAXPROCS suffix
// ("BenchmarkFlightRecorder/both").
func readBenchRuns(t *testing.T, path string) map[string][]benchRun {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	runs := map[string][]benchRun{}
	s := bufio.NewScanner(f)
	for s.Scan() {
		fs := strings.Fields(s.Text())
		if len(fs) < 4 || !strings.HasPrefix(fs[0], "Benchmark") {
			continue
		}
		name := fs[0]
		if i := strings.LastIndexByte(name, '-'); i > 0 {
			name = name[:i]
		}
		n, err := strconv.ParseFloat(fs[1], 64)
		if err != nil {
			t.Fatalf("%s: %q: %v", path, s.Text(), err)
		}
		r := benchRun{"iterations": n}
		for i := 2; i+1 < len(fs); i += 2 {
			v, err := strconv.ParseFloat(fs[i], 64)
			if err != nil {
				t.Fatalf("%s: %q: %v", path, s.Text(), err)
			}
			r[fs[i+1]] = v
		}
		runs[name] = append(runs[name], r)
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	return runs
}

// spread is the median, least and greatest of some figures.
type spread struct{ med, lo, hi float64 }

func spreadOf(vs []float64) spread {
	vs = slices.Clone(vs)
	slices.Sort(vs)
	n := len(vs)
	return spread{med: (vs[(n-1)/2] + vs[n/2]) / 2, lo: vs[0], hi: vs[n-1]}
}

// metric is the spread of a metric over runs, computed by f.
func metric(runs []benchRun, f func(benchRun) float64) spread {
	vs := make([]float64, len(runs))
	for i, r := range runs {
		vs[i] = f(r)
	}
	return spreadOf(vs)
}

func pct(v float64) string { return fmt.Sprintf("%+.1f%%", v) }

// The cost figures docs/operations.md gives for the flight recorder are
// the ones computed from the benchmark runs kept in
// testdata/flight-cost.txt, and so is its verdict against the 3% target:
// medians over the runs, with the least and greatest run.
func TestFlightCostDocFigures(t *testing.T) {
	b, err := os.ReadFile("../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := strings.Join(strings.Fields(string(b)), " ")
	runs := readBenchRuns(t, flightCostFile)
	both, tr, hist := runs["BenchmarkFlightRecorder/both"], runs["BenchmarkFlightRecorder/trace"], runs["BenchmarkFlightRecorder/history"]
	trips := runs["BenchmarkHistoryRoundTrip"]
	if len(both) < 5 || len(tr) < 5 || len(hist) < 5 || len(trips) < 5 {
		t.Fatalf("%s: %d, %d and %d runs of BenchmarkFlightRecorder's both, trace and history, %d of BenchmarkHistoryRoundTrip; want at least 5 each",
			flightCostFile, len(both), len(tr), len(hist), len(trips))
	}
	for _, r := range slices.Concat(both, tr, hist) {
		if r["iterations"] != 2000 {
			t.Fatalf("%s: a run of BenchmarkFlightRecorder of %v cycles; the page says 2,000", flightCostFile, r["iterations"])
		}
	}
	over := func(r benchRun) float64 { return r["overhead-%"] }
	paired := func(r benchRun) float64 { return r["paired-overhead-%"] }
	cpu := func(r benchRun) float64 { return 100 * (r["recorded-cpu-ns"]/r["plain-cpu-ns"] - 1) }
	plainMs := func(r benchRun) float64 { return r["plain-p50-ns"] / 1e6 }
	cpuUs := func(r benchRun) float64 { return (r["recorded-cpu-ns"] - r["plain-cpu-ns"]) / 1e3 }

	o, p, c, ms := metric(both, over), metric(both, paired), metric(both, cpu), metric(both, plainMs)
	verdict := "within"
	if p.med > flightCostTarget {
		verdict = "above"
	}
	trip := metric(trips, func(r benchRun) float64 { return r["ns/op"] })
	for _, want := range []string{
		fmt.Sprintf("Over %d runs of 2,000 cycles (`zklock/testdata/flight-cost.txt`", len(both)),
		fmt.Sprintf("a plain cycle's median took %.1f to %.1f ms", ms.lo, ms.hi),
		fmt.Sprintf("The overhead of the recorded median over the plain one was %s (runs from %s to %s)", pct(o.med), pct(o.lo), pct(o.hi)),
		fmt.Sprintf("the median of the per-block-pair ratios, which cancels drift slower than a block, was %s (runs from %s to %s)",
			pct(p.med), pct(p.lo), pct(p.hi)),
		fmt.Sprintf("So the cost is %s the %.0f%% target", verdict, flightCostTarget),
		fmt.Sprintf("the process's CPU time per cycle rose by a median %s (%.0f µs; runs from %s to %s)",
			pct(c.med), metric(both, cpuUs).med, pct(c.lo), pct(c.hi)),
		fmt.Sprintf("the runtime tracer alone (`trace`) %s wall, %s paired, %s CPU", pct(metric(tr, over).med), pct(metric(tr, paired).med), pct(metric(tr, cpu).med)),
		fmt.Sprintf("the wire history alone (`history`, the tracer stopped) %s wall, %s paired, %s CPU",
			pct(metric(hist, over).med), pct(metric(hist, paired).med), pct(metric(hist, cpu).med)),
		fmt.Sprintf("a request and its answer cost it %.2f to %.2f µs", trip.lo/1e3, trip.hi/1e3),
	} {
		if !strings.Contains(doc, want) {
			t.Errorf("docs/operations.md does not say %q (computed from %s)", want, flightCostFile)
		}
	}
}
