package bench_test

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/zklockkit/zklockkit/cmd/zklock-bench/internal/bench"
	"github.com/zklockkit/zklockkit/internal/doctest"
)

// The reports that docs/benchmarks.md quotes, saved by zklock-bench -json,
// relative to the repository root: one server and the 3-node ensemble.
const (
	oneServerReport = "docs/benchmarks/one-server.json"
	ensembleReport  = "docs/benchmarks/ensemble.json"
)

var (
	quoteStart = regexp.MustCompile(`^<!-- zklock-bench -from (\S+) -markdown -->$`)
	quoteEnd   = "<!-- end of zklock-bench output -->"
)

// pageQuote is a part of a page pasted from zklock-bench's output.
type pageQuote struct {
	report string // the saved report it was printed from
	line   int    // the line of its first line, from 1
	text   string
}

// pageQuotes returns the parts of the page between a line
// "<!-- zklock-bench -from FILE -markdown -->" and the next quoteEnd,
// blank lines around them left out.
func pageQuotes(t *testing.T, page string) []pageQuote {
	t.Helper()
	lines := strings.Split(page, "\n")
	var out []pageQuote
	for i := 0; i < len(lines); i++ {
		m := quoteStart.FindStringSubmatch(strings.TrimSpace(lines[i]))
		if m == nil {
			continue
		}
		end := slices.Index(lines[i+1:], quoteEnd)
		if end < 0 {
			t.Fatalf("docs/benchmarks.md:%d: %s is not closed by %s", i+1, lines[i], quoteEnd)
		}
		body := lines[i+1 : i+1+end]
		first := i + 2
		for len(body) > 0 && strings.TrimSpace(body[0]) == "" {
			body, first = body[1:], first+1
		}
		for len(body) > 0 && strings.TrimSpace(body[len(body)-1]) == "" {
			body = body[:len(body)-1]
		}
		out = append(out, pageQuote{report: m[1], line: first, text: strings.Join(body, "\n")})
		i += end + 1
	}
	return out
}

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := doctest.Root(".")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

func readReport(t *testing.T, root, name string) *bench.Report {
	t.Helper()
	rep, err := bench.ReadReport(filepath.Join(root, filepath.FromSlash(name)))
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// Every table of docs/benchmarks.md is what zklock-bench prints for the
// report it names: a number on the page comes from a run, and a change to
// the tables' layout fails here until the page is printed again
// (go run ./cmd/zklock-bench -from FILE -markdown). The page quotes a full
// run on one server and one on the 3-node ensemble, both with the peers.
func TestBenchmarksPage(t *testing.T) {
	root := repoRoot(t)
	page, err := os.ReadFile(filepath.Join(root, "docs", "benchmarks.md"))
	if err != nil {
		t.Fatal(err)
	}
	quotes := pageQuotes(t, string(page))
	var reports []string
	for _, q := range quotes {
		reports = append(reports, q.report)
		var want bytes.Buffer
		if err := readReport(t, root, q.report).WriteMarkdown(&want); err != nil {
			t.Fatal(err)
		}
		got, wantLines := strings.Split(q.text, "\n"), strings.Split(strings.TrimRight(want.String(), "\n"), "\n")
		for i := range max(len(got), len(wantLines)) {
			g, w := "(nothing)", "(nothing)"
			if i < len(got) {
				g = got[i]
			}
			if i < len(wantLines) {
				w = wantLines[i]
			}
			if g != w {
				t.Errorf("docs/benchmarks.md:%d differs from what zklock-bench -from %s -markdown prints:\n got: %s\nwant: %s",
					q.line+i, q.report, g, w)
				break
			}
		}
	}
	if want := []string{oneServerReport, ensembleReport}; !slices.Equal(reports, want) {
		t.Fatalf("docs/benchmarks.md quotes %v, want %v in that order", reports, want)
	}
	for _, name := range reports {
		checkFullRun(t, name, readReport(t, root, name), name == ensembleReport)
	}
}

// checkFullRun checks that a quoted report is a full run with every part
// measured, on the kind of servers its place on the page says.
func checkFullRun(t *testing.T, name string, rep *bench.Report, ensemble bool) {
	t.Helper()
	var names []string
	for _, s := range bench.Scenarios(bench.FullSizes()) {
		names = append(names, s.Name)
	}
	var got []string
	for _, s := range rep.Scenarios {
		got = append(got, s.Name)
	}
	if rep.Quick || rep.Rounds < 3 || !slices.Equal(got, names) {
		t.Errorf("%s: quick %v, %d rounds, scenarios %v: want a full run of at least 3 rounds (%v)", name, rep.Quick, rep.Rounds, got, names)
	}
	if len(rep.Raw) != 2 || rep.Floor == nil || len(rep.Memory) != 2 {
		t.Errorf("%s: raw rates, floor or memory missing", name)
	}
	if is := strings.Contains(rep.Settings, "3-node ensemble"); is != ensemble {
		t.Errorf("%s: settings %q", name, rep.Settings)
	}
	var peers []string
	for _, p := range rep.Peers {
		if p.Skipped == "" {
			peers = append(peers, p.Name)
		}
	}
	if !slices.Equal(peers, []string{bench.NameCurator, bench.NameKazoo}) {
		t.Errorf("%s: peers measured %v", name, peers)
	}
	if rep.Machine.CPU == "" || rep.Machine.Cores == 0 || rep.ZooKeeper == "" || rep.GoVersion == "" {
		t.Errorf("%s: the machine is not described: %+v, ZooKeeper %q, Go %q", name, rep.Machine, rep.ZooKeeper, rep.GoVersion)
	}
}

// README.md's comparison and operations.md's cost of a waiter quote the
// one-server report: README the medians of the rounds' own ratios, as its
// table shows them, and the rounds; operations.md the memory per waiting
// lock, the queue's ratio, the server's raw pair rates (to two significant
// digits) and the uncontended cycle against the serial pair.
func TestBenchmarkFigures(t *testing.T) {
	root := repoRoot(t)
	rep := readReport(t, root, oneServerReport)
	pages, err := doctest.Pages(root)
	if err != nil {
		t.Fatal(err)
	}
	scenario := func(name string) bench.ScenarioResult {
		i := slices.IndexFunc(rep.Scenarios, func(s bench.ScenarioResult) bool { return s.Name == name })
		if i < 0 {
			t.Fatalf("%s: no scenario %s", oneServerReport, name)
		}
		return rep.Scenarios[i]
	}
	times := func(rs []float64) string {
		s := slices.Clone(rs)
		slices.Sort(s)
		if len(s) == 0 {
			return "-"
		}
		m := s[len(s)/2]
		if len(s)%2 == 0 {
			m = (s[len(s)/2-1] + s[len(s)/2]) / 2
		}
		return fmt.Sprintf("%.2f×", m)
	}
	peer := func(s bench.ScenarioResult, name string) string {
		for _, p := range s.Peers {
			if p.Peer == name {
				return times(p.RoundRatios)
			}
		}
		return "-"
	}
	readme := []string{"README.md"}
	row := func(label, name string) doctest.Fact {
		s := scenario(name)
		return doctest.Fact{Name: "README's comparison, " + name, Source: oneServerReport,
			Quote: regexp.MustCompile(`\| ` + regexp.QuoteMeta(label) + ` \| ([^|]+) \| ([^|]+) \| ([^|]+) \|`),
			Want:  []any{times(s.RoundRatios), peer(s, bench.NameCurator), peer(s, bench.NameKazoo)},
			Home:  readme}
	}
	if len(rep.Memory) != 2 {
		t.Fatalf("%s: memory %+v", oneServerReport, rep.Memory)
	}
	kib := func(b float64) string { return fmt.Sprintf("%.1f", b/1024) }
	raw := func(width int) float64 {
		i := slices.IndexFunc(rep.Raw, func(r bench.RawResult) bool { return r.Width == width })
		if i < 0 {
			t.Fatalf("%s: no raw row of %d goroutines", oneServerReport, width)
		}
		return rep.Raw[i].Side.Rate
	}
	// twoDigits writes a rate as the page rounds it: two significant digits.
	twoDigits := func(r float64) string {
		p := math.Pow(10, math.Floor(math.Log10(r))-1)
		return commas(int(math.Round(r/p) * p))
	}
	zl, zk := rep.Memory[0], rep.Memory[1]
	operations := []string{"docs/operations.md"}
	facts := []doctest.Fact{
		{Name: "README's comparison, rounds", Source: oneServerReport,
			Quote: regexp.MustCompile(`per-round ratios, (\d+) rounds,`), Want: []any{rep.Rounds}, Home: readme},
		row("uncontended acquire + release", "uncontended"),
		row("8 sessions on one lock", "contenders-8"),
		row("32 sessions on one lock", "contenders-32"),
		row("1,000 waiters of one session", "queue-1000"),
		row("1,000 locks of one session released at once", "release-all-1000"),
		{Name: "operations.md's memory per waiting lock", Source: oneServerReport + " (memory)",
			Quote: regexp.MustCompile("costs one goroutine \\(its caller's, parked\\) and ([\\d.]+) KiB of heap, ([\\d.]+) KiB " +
				"with its stack, where a waiting `zk.Lock` costs ([\\d.]+) KiB \\(([\\d,]+) waiters queued"),
			Want: []any{kib(zl.HeapPerWaiter), kib(zl.TotalPerWaiter), kib(zk.TotalPerWaiter), commas(zl.Waiters)},
			Home: operations},
		{Name: "operations.md's queue-1000 ratio", Source: oneServerReport,
			Quote: regexp.MustCompile(`\(queue-1000: ([\d.]+×) zk\.Lock's rate`),
			Want:  []any{times(scenario("queue-1000").RoundRatios)}, Home: operations},
		{Name: "operations.md's server ceiling", Source: oneServerReport + " (raw)",
			Quote: regexp.MustCompile(`was about ([\d,]+) create\+delete pairs per second for one serial\s+client and ([\d,]+) for 32 concurrent ones`),
			Want:  []any{twoDigits(raw(1)), twoDigits(raw(32))}, Home: operations},
		{Name: "operations.md's uncontended cycle against the serial pair", Source: oneServerReport,
			Quote: regexp.MustCompile(`uncontended cycle runs at ([\d.]+×) that serial pair`),
			Want:  []any{times(scenario("uncontended").RawRoundRatios)}, Home: operations},
	}
	for _, p := range doctest.Check(pages, facts) {
		t.Error(p)
	}
}

// commas writes n with a comma every three digits, as the pages do.
func commas(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
