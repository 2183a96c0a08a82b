package bench

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// WriteTable prints the report as plain-text tables: one row per scenario
// (both sides' medians, their ratio, the median and range of the rounds'
// own ratios, latencies, target and verdict), the
// raw create+delete rates with each side's ratio to the serial one, and the
// memory per waiting lock.
func (r *Report) WriteTable(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "ZooKeeper %s at %s", orDash(r.ZooKeeper), strings.Join(r.Servers, ","))
	if r.Settings != "" {
		fmt.Fprintf(&b, " (%s)", r.Settings)
	}
	fmt.Fprintf(&b, "\n%s, GOMAXPROCS %d; %d rounds (zklock and zk.Lock alternate who goes first); medians across rounds\n\n",
		r.GoVersion, r.GOMAXPROCS, r.Rounds)

	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "scenario\tunit\tzklock ops/s\tzk.Lock ops/s\tratio\tper round (min-max)\tzklock p50/p99\tzk.Lock p50/p99\ttarget\tresult\t")
	for _, s := range r.Scenarios {
		target := fmt.Sprintf(">=%.2fx", s.Target)
		if s.RawTarget > 0 {
			target += fmt.Sprintf(", >=%.2fx raw", s.RawTarget)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", s.Name, s.Unit,
			rate(s.ZKLock), rate(s.ZKLib), ratio(s.Ratio), roundRatios(s.RoundRatios), latencies(s.ZKLock), latencies(s.ZKLib),
			target, verdict(s.Pass, len(s.ZKLock.Errors)+len(s.ZKLib.Errors)))
		if s.ZKLock.WallRate > 0 && s.ZKLib.WallRate > 0 {
			fmt.Fprintf(tw, "  (wall clock, with holds)\t%s\t%.0f\t%.0f\t%s\t\t\t\t-\t\t\n", s.Unit,
				s.ZKLock.WallRate, s.ZKLib.WallRate, ratio(s.ZKLock.WallRate/s.ZKLib.WallRate))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if err := r.writePeers(&b); err != nil {
		return err
	}

	if len(r.Raw) > 0 {
		b.WriteString("\nraw Create(EPHEMERAL_SEQUENTIAL)+Delete pairs on one session (the server's ceiling)\n")
		tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  goroutines\tpairs/s\tp50/p99\t")
		for _, raw := range r.Raw {
			fmt.Fprintf(tw, "  %d\t%s\t%s\t\n", raw.Width, rate(raw.Side), latencies(raw.Side))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		b.WriteString("\nrate / raw serial pair rate\n")
		tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  scenario\tzklock\tper round (min-max)\tzk.Lock\ttarget\tresult\t")
		for _, s := range r.Scenarios {
			target, result := "-", ""
			if s.RawTarget > 0 {
				target = fmt.Sprintf("zklock >=%.2fx", s.RawTarget)
				result = verdict(s.RawRatio >= s.RawTarget, 0)
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\t\n", s.Name, ratio(s.RawRatio), roundRatios(s.RawRoundRatios),
				ratio(s.ZKLibRawRatio), target, result)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}

	if len(r.Memory) > 0 {
		fmt.Fprintf(&b, "\nmemory per waiting lock: %d goroutines on one session, each queued behind another session (live heap after GC, goroutine stacks)\n",
			r.Memory[0].Waiters)
		tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  side\theap/waiter\tstack/waiter\ttotal\tratio\tgoroutines/waiter\tenqueue all\tratio\tper round (min-max)\ttarget\tresult\t")
		for _, m := range r.Memory {
			target, result := "-", ""
			if m.Target > 0 {
				target = fmt.Sprintf("total <=%.2fx, enqueue <=%.2fx", m.Target, m.EnqueueTarget)
				result = verdict(m.Pass, 0)
			}
			if m.Error != "" {
				result = "FAIL (" + m.Error + ")"
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%.2f\t%s\t%s\t%s\t%s\t%s\t\n", m.Side, kib(m.HeapPerWaiter), kib(m.StackPerWaiter),
				kib(m.TotalPerWaiter), ratio(m.Ratio), m.GoroutinesPerWaiter, ms(time.Duration(m.Enqueue)), ratio(m.EnqueueRatio),
				roundRatios(m.EnqueueRoundRatios), target, result)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	overall := "every target met"
	if !r.Pass() {
		overall = "some targets missed"
	}
	fmt.Fprintf(&b, "\n%s; took %s\n", overall, time.Duration(r.Elapsed).Round(time.Second))
	lines := strings.Split(b.String(), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	_, err := io.WriteString(w, strings.Join(lines, "\n"))
	return err
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
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

// roundRatios shows the ratios of the rounds, each zklock's rate over
// zk.Lock's in the same round: their median and range. Pairing by round
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
