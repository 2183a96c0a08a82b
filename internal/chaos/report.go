package chaos

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
)

// Report is what a campaign found. Counts are over the whole history.
type Report struct {
	Campaign         string  `json:"campaign"`
	Workers          int     `json:"workers"`
	Resources        int     `json:"resources"`
	Lanes            int     `json:"lanes"` // acquire loops per worker process
	SessionTimeoutMS int64   `json:"session_timeout_ms"`
	DurationSec      float64 `json:"duration_sec"`
	Seed             uint64  `json:"seed"`
	Dir              string  `json:"dir,omitempty"`

	Acquisitions    int            `json:"acquisitions"`
	AcquireAttempts int            `json:"acquire_attempts"`
	AcquireFailures map[string]int `json:"acquire_failures"` // by outcome
	AcquireErrors   map[string]int `json:"acquire_errors,omitempty"`
	Releases        map[string]int `json:"releases"` // by outcome
	Losses          map[string]int `json:"losses"`   // by reason, and "killed"
	Faults          map[string]int `json:"faults"`   // injected, by kind

	Writes struct {
		Accepted int `json:"accepted"`
		Rejected int `json:"rejected"`
	} `json:"writes"`
	Stale struct {
		Rejected           int `json:"rejected"`             // refused by fencing
		RejectedPaused     int `json:"rejected_paused"`      // ...whose writer had been paused
		RejectedAfterLoss  int `json:"rejected_after_loss"`  // ...whose writer had been told of its loss
		AcceptedBeforeNext int `json:"accepted_before_next"` // sent after the next holder acquired, ordered before its writes
	} `json:"stale_writes"`

	// OverlappingAcceptedWrites counts critical sections whose fenced writes
	// were both accepted while they overlapped (interleaved in the store).
	OverlappingAcceptedWrites int `json:"overlapping_accepted_writes"`
	DoubleGrants              int `json:"double_grants"`
	LateLossSignals           int `json:"late_loss_signals"`
	// PausedOverlaps counts hand-offs where a paused holder learned of its
	// loss only after the next holder acquired: fencing's job.
	PausedOverlaps      int     `json:"paused_overlaps"`
	RejectedGoodStand   int     `json:"rejected_in_good_standing"`
	Orphans             int     `json:"orphans"`
	HungAcquires        int     `json:"hung_acquires"`
	MaxAcquireOverrunMS float64 `json:"max_acquire_overrun_ms"`
	WorkerCrashes       int     `json:"worker_crashes"`
	// LaneHandOffs counts consecutive leases of a resource held by two
	// lanes of one worker on one session: the lock passed within the
	// process (zklock's local hand-off, with no request, when the second
	// lane had queued behind the first).
	LaneHandOffs int `json:"lane_hand_offs"`
	// Phantom: lock znodes of live sessions unknown to their own client.
	Phantom PhantomCheck `json:"phantom_check"`

	// LossMargins: for each lost lease followed by another holder, the time
	// from the loss signal to the next acquire, by the fault it is
	// attributed to.
	LossMargins map[string]*Margin `json:"loss_margins"`
	// NetworkLoss summarizes LossMargins over network and server faults;
	// NetworkLossExpired over those where the holder's session then
	// expired (ZooKeeper's expiry let the next holder in: the margin is
	// bounded below by the loss margin), NetworkLossLive over those where
	// the session survived and the client deleted its node itself.
	NetworkLoss        Margin `json:"network_loss"`
	NetworkLossExpired Margin `json:"network_loss_session_expired"`
	NetworkLossLive    Margin `json:"network_loss_session_alive"`
	// KillTakeover: from the SIGKILL of a holder to the next acquire.
	KillTakeover Margin `json:"kill_takeover"`

	Targets    Targets     `json:"targets"`
	Violations []Violation `json:"violations"`
	Pass       bool        `json:"pass"`
}

// Margin summarizes a set of durations in milliseconds.
type Margin struct {
	N        int     `json:"n"`
	Before   int     `json:"before"` // how many were positive (signal first)
	MinMS    float64 `json:"min_ms"`
	MedianMS float64 `json:"median_ms"`
	values   []float64
}

func (m *Margin) add(v float64) {
	m.values = append(m.values, v)
}

func (m *Margin) finish() {
	m.N = len(m.values)
	if m.N == 0 {
		return
	}
	slices.Sort(m.values)
	m.MinMS = m.values[0]
	m.MedianMS = m.values[m.N/2]
	m.Before = 0
	for _, v := range m.values {
		if v > 0 {
			m.Before++
		}
	}
}

// Targets are what a campaign had to reach, and whether it did.
type Targets struct {
	Acquisitions  int      `json:"acquisitions"`
	FaultsPerKind int      `json:"faults_per_kind"`
	Missed        []string `json:"missed,omitempty"`
}

func newReport() *Report {
	return &Report{AcquireFailures: map[string]int{}, AcquireErrors: map[string]int{}, Releases: map[string]int{},
		Losses: map[string]int{}, Faults: map[string]int{}, LossMargins: map[string]*Margin{}}
}

func (r *Report) addMargin(kind string, ms float64, sessionAlive bool) {
	m := r.LossMargins[kind]
	if m == nil {
		m = &Margin{}
		r.LossMargins[kind] = m
	}
	m.add(ms)
	if FaultKind(kind).Network() && kind != "none" {
		r.NetworkLoss.add(ms)
		if sessionAlive {
			r.NetworkLossLive.add(ms)
		} else {
			r.NetworkLossExpired.add(ms)
		}
	}
}

// finish computes summaries and counts violations by kind.
func (r *Report) finish() {
	for _, m := range r.LossMargins {
		m.finish()
	}
	r.NetworkLoss.finish()
	r.NetworkLossExpired.finish()
	r.NetworkLossLive.finish()
	r.KillTakeover.finish()
	for _, v := range r.Violations {
		switch v.Kind {
		case VOverlap, VTokenRegression:
			r.OverlappingAcceptedWrites++
		case VDoubleGrant:
			r.DoubleGrants++
		case VLateLoss:
			r.LateLossSignals++
		case VGoodStanding:
			r.RejectedGoodStand++
		}
	}
	r.Pass = len(r.Violations) == 0
}

// setTargets checks the campaign's targets; a missed one fails the report.
func (r *Report) setTargets(acq, perKind int, kinds []FaultKind) {
	r.Targets = Targets{Acquisitions: acq, FaultsPerKind: perKind}
	if r.Acquisitions < acq {
		r.Targets.Missed = append(r.Targets.Missed, fmt.Sprintf("acquisitions %d < %d", r.Acquisitions, acq))
	}
	for _, k := range kinds {
		if n := r.Faults[string(k)]; n < perKind {
			r.Targets.Missed = append(r.Targets.Missed, fmt.Sprintf("fault %s injected %d < %d times", k, n, perKind))
		}
	}
	if r.Lanes > 1 && r.Acquisitions >= acq && r.LaneHandOffs == 0 {
		r.Targets.Missed = append(r.Targets.Missed, "no lease passed between two lanes of one process: the local hand-off was not exercised")
	}
	if r.Faults[string(FaultPause)] > 0 && r.Stale.RejectedPaused == 0 {
		r.Targets.Missed = append(r.Targets.Missed, "no stale write of a paused holder was refused: fencing was not exercised")
	}
	r.Pass = len(r.Violations) == 0 && len(r.Targets.Missed) == 0
}

// WriteTable writes the report as Markdown tables, as shown in README.
func (r *Report) WriteTable(w io.Writer) {
	verdict := "PASS"
	if !r.Pass {
		verdict = "FAIL"
	}
	fmt.Fprintf(w, "zklock chaos campaign %q: %s — 3-node ensemble, %d worker processes of %d lanes, %d resources, session timeout %d ms, %.0f s, seed %d\n\n",
		r.Campaign, verdict, r.Workers, max(r.Lanes, 1), r.Resources, r.SessionTimeoutMS, r.DurationSec, r.Seed)
	fmt.Fprintln(w, "| check | result | target |")
	fmt.Fprintln(w, "|---|---:|---|")
	row := func(name, result, target string) { fmt.Fprintf(w, "| %s | %s | %s |\n", name, result, target) }
	row("acquisitions", fmt.Sprint(r.Acquisitions), fmt.Sprintf("≥ %d", r.Targets.Acquisitions))
	for _, k := range AllFaults {
		row("faults: "+string(k), fmt.Sprint(r.Faults[string(k)]), fmt.Sprintf("≥ %d", r.Targets.FaultsPerKind))
	}
	row("overlapping critical sections, both writes accepted", fmt.Sprint(r.OverlappingAcceptedWrites), "0")
	row("double grants (next holder in before release, loss or death)", fmt.Sprint(r.DoubleGrants), "0")
	row("holders told of loss after the next acquire (not paused)", fmt.Sprint(r.LateLossSignals), "0")
	row("paused holders overtaken (fencing's job)", fmt.Sprint(r.PausedOverlaps), "—")
	row("stale writes rejected by fencing", fmt.Sprintf("%d (%d paused, %d after loss)", r.Stale.Rejected, r.Stale.RejectedPaused, r.Stale.RejectedAfterLoss), "> 0 under SIGSTOP")
	row("writes rejected from holders in good standing", fmt.Sprint(r.RejectedGoodStand), "0")
	row("orphan lock znodes after the run", fmt.Sprint(r.Orphans), "0")
	row("acquires hung past their deadline", fmt.Sprintf("%d (max overrun %.0f ms)", r.HungAcquires, r.MaxAcquireOverrunMS), "0")
	row("worker crashes", fmt.Sprint(r.WorkerCrashes), "0")
	if r.Lanes > 1 {
		row("leases passed between lanes of one process (one session)", fmt.Sprint(r.LaneHandOffs), "> 0")
	}
	pc := r.Phantom
	row("lock znodes of live sessions unknown to their client ≥ grace (phantoms)",
		fmt.Sprintf("%d (longest unknown %.0f ms, grace %d ms)", pc.Phantoms, pc.MaxUnknownMS, pc.GraceMS), "0")
	coverage := fmt.Sprintf("%d snapshots, %d local reports, %d node/session pairs compared", pc.QueueSnapshots, pc.LocalReports, pc.PairsCompared)
	switch {
	case r.DurationSec < 10: // too short a run to expect any
	case pc.QueueSnapshots == 0 || pc.LocalReports == 0:
		coverage = "**CHECK DID NOT RUN**: " + coverage
	case pc.PairsCompared == 0:
		coverage = "**NOTHING COMPARED**: " + coverage
	}
	row("phantom check coverage", coverage, "> 0 each")
	nl := r.NetworkLoss
	pct := 100.0
	if nl.N > 0 {
		pct = 100 * float64(nl.Before) / float64(nl.N)
	}
	row("loss signal before next acquire, network/server faults", fmt.Sprintf("%.0f%% of %d, min margin %.0f ms", pct, nl.N, nl.MinMS), "100%")
	row("… of those, session expired: min margin", fmt.Sprintf("%.0f ms (n=%d, median %.0f)", r.NetworkLossExpired.MinMS, r.NetworkLossExpired.N, r.NetworkLossExpired.MedianMS),
		fmt.Sprintf("≥ loss margin, %d ms", r.SessionTimeoutMS/4))
	row("… of those, session alive, zklock deleted its node: min margin", fmt.Sprintf("%.0f ms (n=%d, median %.0f)", r.NetworkLossLive.MinMS, r.NetworkLossLive.N, r.NetworkLossLive.MedianMS), "> 0")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| lost lease, blamed on | n | signal first | min margin ms | median ms |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|")
	for _, k := range slices.Sorted(maps.Keys(r.LossMargins)) {
		m := r.LossMargins[k]
		fmt.Fprintf(w, "| %s | %d | %d | %.0f | %.0f |\n", k, m.N, m.Before, m.MinMS, m.MedianMS)
	}
	if r.KillTakeover.N > 0 {
		fmt.Fprintf(w, "| (kill: SIGKILL to next acquire) | %d | — | %.0f | %.0f |\n", r.KillTakeover.N, r.KillTakeover.MinMS, r.KillTakeover.MedianMS)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "losses: %s; acquire failures: %s; releases: %s; writes: %d accepted, %d rejected; stale accepted before the next holder's first write: %d\n",
		kv(r.Losses), kv(r.AcquireFailures), kv(r.Releases), r.Writes.Accepted, r.Writes.Rejected, r.Stale.AcceptedBeforeNext)
	for e, n := range r.AcquireErrors {
		fmt.Fprintf(w, "acquire error x%d: %s\n", n, e)
	}
	for _, m := range r.Targets.Missed {
		fmt.Fprintf(w, "TARGET MISSED: %s\n", m)
	}
}

// WriteViolations writes every violation with its history slice.
func (r *Report) WriteViolations(w io.Writer) {
	for i, v := range r.Violations {
		fmt.Fprintf(w, "\nVIOLATION %d/%d %s", i+1, len(r.Violations), v.Kind)
		if v.Resource != "" {
			fmt.Fprintf(w, " on %s", v.Resource)
		}
		fmt.Fprintf(w, ": %s\n", v.Detail)
		for _, e := range v.Slice {
			fmt.Fprintf(w, "  %s\n", e)
		}
	}
}

func kv(m map[string]int) string {
	if len(m) == 0 {
		return "none"
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}
