package bench

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// WriteTable prints the report as plain-text tables: one row per scenario
// (both sides' medians, their ratio, the median and range of the rounds'
// own ratios, latencies, target and verdict), the peers, the client's CPU
// time per operation, its write system calls per request, the raw
// create+delete rates with each side's ratio to the serial one, the
// hand-off floor and the memory per waiting lock.
func (r *Report) WriteTable(w io.Writer) error {
	head := fmt.Sprintf("ZooKeeper %s at %s", orDash(r.ZooKeeper), strings.Join(r.Servers, ","))
	if r.Settings != "" {
		head += fmt.Sprintf(" (%s)", r.Settings)
	}
	header := []string{head}
	if m := r.Machine.describe(); m != "" {
		header = append(header, m)
	}
	header = append(header, fmt.Sprintf("%s, GOMAXPROCS %d; %d rounds (zklock and zk.Lock alternate who goes first); medians across rounds",
		r.GoVersion, r.GOMAXPROCS, r.Rounds))
	return writeText(w, header, r.blocks(), r.footer())
}

// WriteMarkdown prints the report as markdown: a paragraph saying where
// and how it was measured, then the tables of WriteTable, each after a
// paragraph saying what it holds. docs/benchmarks.md is pasted from it.
func (r *Report) WriteMarkdown(w io.Writer) error {
	header := []string{fmt.Sprintf("ZooKeeper %s", orDash(r.ZooKeeper))}
	if r.Settings != "" {
		header[0] += ", " + r.Settings
	}
	header[0] += "."
	machine := fmt.Sprintf("Go %s, GOMAXPROCS %d", strings.TrimPrefix(r.GoVersion, "go"), r.GOMAXPROCS)
	if m := r.Machine.describe(); m != "" {
		machine += "; " + m
	}
	header = append(header, machine+".",
		fmt.Sprintf("%d rounds, zklock and zk.Lock alternating who goes first; medians across rounds. %s; took %s.",
			r.Rounds, upperFirst(r.footerVerdict()), time.Duration(r.Elapsed).Round(time.Second)))
	return writeMarkdown(w, header, r.blocks())
}

// blocks returns the report's tables, in the order they are printed.
func (r *Report) blocks() []block {
	bs := []block{r.scenarioBlock()}
	bs = append(bs, r.peerBlocks()...)
	for _, b := range []block{r.cpuBlock(), r.writesBlock()} {
		if len(b.rows) > 0 {
			bs = append(bs, b)
		}
	}
	if len(r.Raw) > 0 {
		bs = append(bs, r.rawBlocks()...)
	}
	if r.Floor != nil {
		bs = append(bs, r.floorBlock())
	}
	if len(r.Memory) > 0 {
		bs = append(bs, r.memoryBlock())
	}
	return bs
}

func (r *Report) scenarioBlock() block {
	b := block{head: []string{"scenario", "unit", "zklock ops/s", "zk.Lock ops/s", "ratio", "per round (min-max)",
		"zklock p50/p99", "zk.Lock p50/p99", "target", "result"}}
	for _, s := range r.Scenarios {
		target := fmt.Sprintf(">=%.2fx", s.Target)
		if s.RawTarget > 0 {
			target += fmt.Sprintf(", >=%.2fx raw", s.RawTarget)
		}
		b.rows = append(b.rows, []string{s.Name, s.Unit, rate(s.ZKLock), rate(s.ZKLib), ratio(s.Ratio), roundRatios(s.RoundRatios),
			latencies(s.ZKLock), latencies(s.ZKLib), target, verdict(s.Pass, len(s.ZKLock.Errors)+len(s.ZKLib.Errors))})
		if s.ZKLock.WallRate > 0 && s.ZKLib.WallRate > 0 {
			b.rows = append(b.rows, []string{"  (wall clock, with holds)", s.Unit, fmt.Sprintf("%.0f", s.ZKLock.WallRate),
				fmt.Sprintf("%.0f", s.ZKLib.WallRate), ratio(s.ZKLock.WallRate / s.ZKLib.WallRate), "", "", "", "-", ""})
		}
	}
	return b
}

// cpuBlock compares the client's CPU time per operation, for the
// scenarios where it was measured.
func (r *Report) cpuBlock() block {
	b := block{sub: true,
		title: []string{"client CPU time per operation: this process's user+system time during each run's clocked part",
			"(the servers and the peers are processes of their own); ratio = zklock's / zk.Lock's, paired by round"},
		head: []string{"scenario", "per", "zklock CPU", "zk.Lock CPU", "ratio per round (min-max)", "target", "result"}}
	servers := false
	for _, s := range r.Scenarios {
		servers = servers || s.ZKLock.ServerCPUPerOp > 0 || s.ZKLib.ServerCPUPerOp > 0
	}
	if servers {
		b.title = []string{"client CPU time per operation: this process's user+system time during each run's clocked part",
			"(the peers are processes of their own), ratio = zklock's / zk.Lock's, paired by round; servers' CPU: the ZooKeeper",
			"processes' user+system time (from /proc) in the same part; client+servers: the two together, zklock's / zk.Lock's,",
			"what an operation costs a machine whose cores the servers and the client share"}
		b.head = append(b.head, "zklock servers' CPU", "zk.Lock servers' CPU", "client+servers ratio per round (min-max)")
	}
	for _, s := range r.Scenarios {
		if s.ZKLock.CPUPerOp == 0 && s.ZKLib.CPUPerOp == 0 {
			continue
		}
		target, result := "-", ""
		if s.CPUTarget > 0 {
			target, result = fmt.Sprintf("<=%.2fx", s.CPUTarget), verdict(s.CPUPass, 0)
		}
		row := []string{s.Name, opName(s.Unit), micros(s.ZKLock.CPUPerOp), micros(s.ZKLib.CPUPerOp),
			roundRatios(s.CPURoundRatios), target, result}
		if servers {
			row = append(row, micros(s.ZKLock.ServerCPUPerOp), micros(s.ZKLib.ServerCPUPerOp), roundRatios(s.TotalCPURoundRatios))
		}
		b.rows = append(b.rows, row)
	}
	return b
}

// writesBlock gives the write system calls per request, for the scenarios
// where both were counted.
func (r *Report) writesBlock() block {
	b := block{sub: true,
		title: []string{"write system calls of this process per request the servers received (mntr's zk_packets_received, pings included),",
			"and requests per operation; medians across rounds"},
		head: []string{"scenario", "zklock writes/request", "zk.Lock writes/request", "zklock requests/op", "zk.Lock requests/op"}}
	for _, s := range r.Scenarios {
		if s.ZKLock.RequestsPerOp == 0 && s.ZKLib.RequestsPerOp == 0 {
			continue
		}
		b.rows = append(b.rows, []string{s.Name, decimal(s.ZKLock.WritesPerRequest), decimal(s.ZKLib.WritesPerRequest),
			decimal(s.ZKLock.RequestsPerOp), decimal(s.ZKLib.RequestsPerOp)})
	}
	return b
}

func (r *Report) rawBlocks() []block {
	raw := block{sub: true, title: []string{"raw Create(EPHEMERAL_SEQUENTIAL)+Delete pairs on one session (the server's ceiling)"},
		head: []string{"goroutines", "pairs/s", "p50/p99", "CPU/pair", "writes/request"}}
	servers := false
	for _, x := range r.Raw {
		servers = servers || x.Side.ServerCPUPerOp > 0
	}
	if servers {
		raw.head = append(raw.head, "servers' CPU/pair")
	}
	for _, x := range r.Raw {
		row := []string{fmt.Sprint(x.Width), rate(x.Side), latencies(x.Side), micros(x.Side.CPUPerOp),
			decimal(x.Side.WritesPerRequest)}
		if servers {
			row = append(row, micros(x.Side.ServerCPUPerOp))
		}
		raw.rows = append(raw.rows, row)
	}
	ratios := block{sub: true, title: []string{"rate / raw serial pair rate"},
		head: []string{"scenario", "zklock", "per round (min-max)", "zk.Lock", "target", "result"}}
	for _, s := range r.Scenarios {
		if s.Wire {
			continue
		}
		target, result := "-", ""
		if s.RawTarget > 0 {
			target = fmt.Sprintf("zklock >=%.2fx", s.RawTarget)
			result = verdict(s.rawPass(), 0)
		}
		ratios.rows = append(ratios.rows, []string{s.Name, ratio(s.RawRatio), roundRatios(s.RawRoundRatios), ratio(s.ZKLibRawRatio), target, result})
	}
	return []block{raw, ratios}
}

// floorBlock sets ping-pong's hand-offs against the floor.
func (r *Report) floorBlock() block {
	f := r.Floor
	b := block{sub: true,
		title: []string{"contended hand-off against its floor, raw go-zookeeper: session A deletes its node; session B, with a data watch on it,",
			"is notified and lists the queue; timed from the delete call (ping-pong's hand-offs: from the release call until the other holds)"},
		head: []string{"hand-off", "p50", "p99", "CPU/hand-off", "p50 / floor p50, per round (min-max)"}}
	p := func(s SideResult, d Duration) string {
		if s.Rate == 0 {
			return "-"
		}
		return ms(time.Duration(d))
	}
	b.rows = append(b.rows,
		[]string{"floor: delete, notification", p(f.Notified, f.Notified.P50), p(f.Notified, f.Notified.P99), "-", "-"},
		[]string{"floor: delete, notification, listing", p(f.Listed, f.Listed.P50), p(f.Listed, f.Listed.P99), micros(f.Listed.CPUPerOp), "-"})
	if i := slices.IndexFunc(r.Scenarios, func(s ScenarioResult) bool { return s.Name == "ping-pong" }); i >= 0 {
		s := r.Scenarios[i]
		for _, side := range []struct {
			name string
			res  SideResult
			fr   FloorRatio
		}{{NameZKLock, s.ZKLock, f.ZKLock}, {NameZKLib, s.ZKLib, f.ZKLib}} {
			b.rows = append(b.rows, []string{side.name + " ping-pong", p(side.res, side.res.P50), p(side.res, side.res.P99),
				micros(side.res.CPUPerOp), roundRatios(side.fr.RoundRatios)})
		}
	}
	if len(f.Listed.Errors) > 0 {
		b.notes = append(b.notes, fmt.Sprintf("floor: %d failed runs: %s", len(f.Listed.Errors), f.Listed.Errors[0]))
	}
	return b
}

func (r *Report) memoryBlock() block {
	b := block{sub: true,
		title: []string{fmt.Sprintf("memory per waiting lock: %d goroutines on one session, each queued behind another session (live heap after GC, goroutine stacks)",
			r.Memory[0].Waiters)},
		head: []string{"side", "heap/waiter", "stack/waiter", "total", "ratio", "goroutines/waiter", "enqueue all", "ratio", "per round (min-max)", "target", "result"}}
	for _, m := range r.Memory {
		target, result := "-", ""
		if m.Target > 0 {
			target = fmt.Sprintf("total <=%.2fx, enqueue <=%.2fx", m.Target, m.EnqueueTarget)
			result = verdict(m.Pass, 0)
		}
		if m.Error != "" {
			result = "FAIL (" + m.Error + ")"
		}
		b.rows = append(b.rows, []string{m.Side, kib(m.HeapPerWaiter), kib(m.StackPerWaiter), kib(m.TotalPerWaiter), ratio(m.Ratio),
			fmt.Sprintf("%.2f", m.GoroutinesPerWaiter), ms(time.Duration(m.Enqueue)), ratio(m.EnqueueRatio),
			roundRatios(m.EnqueueRoundRatios), target, result})
	}
	return b
}

func (r *Report) footerVerdict() string {
	if r.Pass() {
		return "every target met"
	}
	return "some targets missed"
}

func (r *Report) footer() string {
	return fmt.Sprintf("%s; took %s", r.footerVerdict(), time.Duration(r.Elapsed).Round(time.Second))
}

// describe says what the machine is, in one line: "" when nothing is
// known.
func (m Machine) describe() string {
	var parts []string
	if m.CPU != "" {
		parts = append(parts, m.CPU)
	}
	if m.Cores > 0 {
		parts = append(parts, fmt.Sprintf("%d cores", m.Cores))
	}
	if m.MemoryGiB > 0 {
		parts = append(parts, fmt.Sprintf("%.0f GiB", m.MemoryGiB))
	}
	if m.Kernel != "" {
		parts = append(parts, "Linux "+m.Kernel)
	}
	s := strings.Join(parts, ", ")
	if len(m.LoadStart) == 3 && len(m.LoadEnd) == 3 {
		s += fmt.Sprintf("; load average (1, 5, 15 minutes) %s at the start and %s at the end", loads(m.LoadStart), loads(m.LoadEnd))
		if m.LoadMax > 0 {
			s += fmt.Sprintf(", its 1-minute figure %.1f to %.1f during the run", m.LoadMin, m.LoadMax)
		}
	} else if m.LoadMax > 0 {
		s += fmt.Sprintf("; 1-minute load average %.1f to %.1f during the run", m.LoadMin, m.LoadMax)
	}
	return strings.TrimPrefix(s, "; ")
}

// loads formats load averages as uptime does: "5.93, 12.25, 12.18".
func loads(l []float64) string {
	s := make([]string, len(l))
	for i, x := range l {
		s[i] = fmt.Sprintf("%.2f", x)
	}
	return strings.Join(s, ", ")
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func rate(s SideResult) string {
	if s.Rate == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f", s.Rate)
}

func ratio(x float64) string {
	if x == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2fx", x)
}

// decimal formats a count per something with two decimals, "-" for 0
// (not measured).
func decimal(x float64) string {
	if x == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", x)
}

// opName returns the operation of a unit: "cycle" for "cycles/s".
func opName(unit string) string {
	return strings.TrimSuffix(strings.TrimSuffix(unit, "/s"), "s")
}

// roundRatios shows the ratios of the rounds, each zklock's figure over
// the other's in the same round: their median and range. Pairing by round
// cancels the machine's drift between rounds that the ratio of the two
// medians keeps.
func roundRatios(rs []float64) string {
	if len(rs) == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2fx (%.2f-%.2f)", median(rs), slices.Min(rs), slices.Max(rs))
}

func latencies(s SideResult) string {
	if s.Rate == 0 {
		return "-"
	}
	return ms(time.Duration(s.P50)) + " / " + ms(time.Duration(s.P99))
}

// ms formats d in milliseconds with three significant digits or so.
func ms(d time.Duration) string {
	v := float64(d) / float64(time.Millisecond)
	switch {
	case v < 10:
		return fmt.Sprintf("%.2fms", v)
	case v < 100:
		return fmt.Sprintf("%.1fms", v)
	}
	return fmt.Sprintf("%.0fms", v)
}

// micros formats a CPU time in microseconds, "-" for 0 (not measured).
func micros(d Duration) string {
	if d == 0 {
		return "-"
	}
	v := float64(d) / float64(time.Microsecond)
	if v < 10 {
		return fmt.Sprintf("%.1fµs", v)
	}
	return fmt.Sprintf("%.0fµs", v)
}

func kib(bytes float64) string { return fmt.Sprintf("%.1f KiB", bytes/1024) }

func verdict(pass bool, errs int) string {
	v := "FAIL"
	if pass {
		v = "pass"
	}
	if errs > 0 {
		v += fmt.Sprintf(" (%d failed runs)", errs)
	}
	return v
}
