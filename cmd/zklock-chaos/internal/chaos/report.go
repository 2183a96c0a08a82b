package chaos

import (
	"cmp"
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

	Acquisitions     int            `json:"acquisitions"`
	LoadAcquisitions int            `json:"load_acquisitions,omitempty"`
	AcquireAttempts  int            `json:"acquire_attempts"`
	AcquireFailures  map[string]int `json:"acquire_failures"` // by outcome
	AcquireErrors    map[string]int `json:"acquire_errors,omitempty"`
	Releases         map[string]int `json:"releases"` // by outcome
	Losses           map[string]int `json:"losses"`   // by reason, and "killed"
	Faults           map[string]int `json:"faults"`   // injected, by kind

	Writes struct {
		Accepted int `json:"accepted"`
		Rejected int `json:"rejected"`
	} `json:"writes"`
	Stale struct {
		Rejected            int `json:"rejected"`              // refused by fencing
		RejectedPaused      int `json:"rejected_paused"`       // ...whose writer had been paused
		RejectedAfterLoss   int `json:"rejected_after_loss"`   // ...whose writer had been told of its loss
		RejectedInTransit   int `json:"rejected_in_transit"`   // ...of those, sent before the signal and delivered after it
		AcceptedBeforeNext  int `json:"accepted_before_next"`  // sent after the next holder acquired, ordered before its writes
		RejectedAfterDelete int `json:"rejected_after_delete"` // ...whose node the operator had deleted
		// Unfenced counts semaphore writes the store accepted (no token
		// fences a semaphore) from holders paused, told of loss, or whose
		// node the operator deleted: left out of the count of holders; in
		// a database store, read/write locks' writes likewise (readers are
		// not fenced there, so a writer's token orders nothing against
		// them). In ZooKeeper none: the lease's node fences every write.
		Unfenced int `json:"unfenced"`
		// Committed counts fenced writes the store accepted below a
		// writer's token it had accepted before (VStaleCommitted): must
		// be 0.
		Committed int `json:"committed"`
	} `json:"stale_writes"`

	// OverlappingAcceptedWrites counts critical sections whose fenced writes
	// were both accepted while they overlapped (interleaved in the store).
	OverlappingAcceptedWrites int `json:"overlapping_accepted_writes"`
	// Untokened counts parts of multi-resource leases whose token could
	// not be read (node gone or unreadable at once): left out of the order
	// of holders.
	Untokened       int `json:"untokened_parts"`
	DoubleGrants    int `json:"double_grants"`
	LateLossSignals int `json:"late_loss_signals"`
	// PausedOverlaps counts hand-offs where a paused holder learned of its
	// loss only after the next holder acquired: fencing's job.
	PausedOverlaps int `json:"paused_overlaps"`
	// OperatorOverlaps counts hand-offs where the operator had deleted the
	// holder's node: the deletion tells the holder and hands the lock on
	// at the same moment (DeleteNotice bounds the rest).
	OperatorOverlaps int `json:"operator_overlaps"`
	// Downgrades counts read leases made by Downgrade.
	Downgrades int `json:"downgrades"`
	// OpDeletes counts the operator's deletes by role (holder, waiter,
	// requeued-holder); OpDeleteHolders the leases held when their node
	// went, OpDeleteNotice how long until each stopped holding,
	// OpDeleteExcused those cut off or paused at the time.
	OpDeletes       map[string]int `json:"op_deletes"`
	OpDeleteHolders int            `json:"op_delete_holders"`
	OpDeleteExcused int            `json:"op_delete_excused"`
	OpDeleteNotice  Margin         `json:"op_delete_notice"`
	// OpDeleteBornLost counts the holders hit whose grant reached them
	// after the delete: a listing ZooKeeper sent before it, read late.
	OpDeleteBornLost int `json:"op_delete_born_lost"`
	// OpDeletesGone counts the operator's deletes that found the node gone
	// already (it deleted nothing).
	OpDeletesGone int `json:"op_deletes_gone"`
	// OpDeletesUndone counts the operator's deletes that failed (their
	// connection closed) and whose node a server still listed after: they
	// deleted nothing, at least not before that listing (see
	// checkOpDeletes).
	OpDeletesUndone int `json:"op_deletes_undone"`
	// Requeued counts leases whose acquire queued again with a new node;
	// RequeuedDeleted those whose node the operator then deleted while
	// they held (issue #18's sequence).
	Requeued        int `json:"requeued"`
	RequeuedDeleted int `json:"requeued_deleted"`
	// Recipes: per recipe, acquires, failures, faults aimed, violations.
	Recipes map[string]*RecipeStats `json:"recipes"`
	// Liveness: the liveness figures.
	Liveness []*Figure `json:"liveness"`
	// Store: porcupine's verdict on the fenced store's history.
	Store StoreCheck `json:"store"`
	// StoreKind is Config.Store; Database what became of the writes to a
	// store outside the campaign process, a database or ZooKeeper (nil in
	// memory).
	StoreKind string   `json:"store_kind,omitempty"`
	Database  *DBStats `json:"database,omitempty"`
	// WriteLatency: from a worker's write to the store's acceptance (the
	// commit, in a database), over every accepted write its writer
	// reported; Name "write: sent → accepted", Phase and Window empty.
	WriteLatency Figure `json:"write_latency"`
	// Stalls: the stops of worker processes their stall watch reported
	// (EvStall), judged as pauses: how long each was.
	Stalls Figure `json:"stalls"`
	// CampaignStalls: the campaign process's own stops (EvStall of Proc
	// 0), which stop every worker's traffic to the ensemble and the store
	// in memory: felt by everyone.
	CampaignStalls Figure `json:"campaign_stalls"`
	// ServerStops: the stops of the members' JVMs (EvServerStop; garbage
	// collections, mostly), which hold their clients' requests, and a
	// leader's every write: felt by everyone.
	ServerStops Figure `json:"server_stops"`
	// ServerSlow: per member and latencyTick, its longest request when it
	// took slowMin or more (EvServerSlow): ZooKeeper's own latency, laid
	// beside the liveness samples over their targets (OverSample.ZK).
	ServerSlow Figure `json:"server_slow"`
	// ReportDelay: from a worker's stamp on an event to the hub's record
	// of it (Event.Recv), over every worker event that has both. The
	// workers' lanes wait for the hub as they report: a slow hub holds
	// them up, and their stamps no longer tell when they acted.
	ReportDelay Figure `json:"report_delay"`
	// SchedWait: per worker and second (EvLocal), the longest any of its
	// goroutines waited to run once runnable.
	SchedWait Figure `json:"sched_wait"`
	// Load: the load phase's size, read from the history.
	Load                LoadStats `json:"load"`
	RejectedGoodStand   int       `json:"rejected_in_good_standing"`
	SharedOverlaps      int       `json:"reader_writer_overlaps"`
	OverLimit           int       `json:"semaphore_over_limit"`
	DowngradeGaps       int       `json:"downgrade_gaps"`
	DeletesUnnoticed    int       `json:"deletes_unnoticed"`
	Orphans             int       `json:"orphans"`
	HungAcquires        int       `json:"hung_acquires"`
	MaxAcquireOverrunMS float64   `json:"max_acquire_overrun_ms"`
	WorkerCrashes       int       `json:"worker_crashes"`
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
	// bounded below by the loss margin, VLossMargin), NetworkLossLive over
	// those where the session survived and the client deleted its node
	// itself, NetworkLossUnknown over those whose session's end the
	// history does not show (see checker.sessionFate).
	NetworkLoss        Margin `json:"network_loss"`
	NetworkLossExpired Margin `json:"network_loss_session_expired"`
	NetworkLossLive    Margin `json:"network_loss_session_alive"`
	NetworkLossUnknown Margin `json:"network_loss_session_unknown"`
	// KillTakeover: from the SIGKILL of a holder to the next acquire.
	KillTakeover Margin `json:"kill_takeover"`
	// HeldBeforeLoss: how long the leases lost without a release had
	// been held, by the loss's reason and over all ("all").
	HeldBeforeLoss map[string]*HeldBeforeLoss `json:"held_before_loss"`

	// SequencesTwice counts the sequence numbers given to two nodes of
	// one queue (VDivergence each); DivergedLeases the verdicts on leases
	// that stood on a node the members disagreed on (VDivergedLease).
	SequencesTwice int `json:"sequences_twice"`
	// SequencesReused counts the sequence numbers given to two nodes of
	// one queue that never lived at one time: a queue (a container)
	// deleted once empty and made again numbers from 0. Not evidence.
	SequencesReused int `json:"sequences_reused"`
	DivergedLeases  int `json:"diverged_leases"`
	// ZooKeeperVerdicts counts ZooKeeper's own verdicts (VDivergence,
	// VDivergedLease): listed with the others, they do not fail the run.
	ZooKeeperVerdicts int `json:"zookeeper_verdicts"`

	Targets    Targets     `json:"targets"`
	Violations []Violation `json:"violations"`
	// Pass: no violation of zklock's (or of the fence's) and no target
	// missed.
	Pass bool `json:"pass"`
}

// RecipeStats is what one recipe's lanes did.
type RecipeStats struct {
	Attempts     int            `json:"attempts"`
	Acquisitions int            `json:"acquisitions"`
	Failures     map[string]int `json:"failures"`
	Aimed        map[string]int `json:"faults_aimed"` // process and operator faults aimed at its holders, by kind
	Violations   int            `json:"violations"`
}

func (r *Report) recipe(name string) *RecipeStats {
	rc := r.Recipes[name]
	if rc == nil {
		rc = &RecipeStats{Failures: map[string]int{}, Aimed: map[string]int{}}
		r.Recipes[name] = rc
	}
	return rc
}

func (r *Report) addAimed(recipe, kind string) { r.recipe(recipe).Aimed[kind]++ }

// aimedTotal returns how many faults were aimed at a recipe.
func (rc *RecipeStats) aimedTotal() int {
	n := 0
	for _, v := range rc.Aimed {
		n += v
	}
	return n
}

// LoadStats is the load phase as the history shows it.
type LoadStats struct {
	Seconds        float64 `json:"seconds"`
	Sessions       int     `json:"sessions"`        // distinct sessions that acquired a load lease (a session replaced after an expiry counts again)
	SessionsOpened int     `json:"sessions_opened"` // load sessions the workers opened (per worker process, respawned ones included)
	PeakWaiters    int     `json:"peak_waiters"`    // most load acquires waiting at once
	Acquisitions   int     `json:"acquisitions"`
}

// Margin summarizes a set of durations in milliseconds.
type Margin struct {
	N      int `json:"n"`
	Before int `json:"before"` // how many were positive (signal first)
	// Paused: of the others, how many holders were stopped (the
	// nemesis's pause or a stall) when the next came in: they could not
	// be told, and are fencing's (checkHandOffs excuses them)
	Paused   int     `json:"paused"`
	MinMS    float64 `json:"min_ms"`
	MedianMS float64 `json:"median_ms"`
	// MinToldMS is the least margin of the holders that were not stopped:
	// the targets are theirs.
	MinToldMS float64 `json:"min_told_ms"`
	values    []float64
	told      []float64 // the margins of the holders not stopped
}

func (m *Margin) add(v float64, stopped bool) {
	m.values = append(m.values, v)
	if stopped {
		m.Paused++
	} else {
		m.told = append(m.told, v)
	}
}

func (m *Margin) finish() {
	m.N = len(m.values)
	if m.N == 0 {
		return
	}
	slices.Sort(m.values)
	m.MinMS = m.values[0]
	if len(m.told) > 0 {
		m.MinToldMS = slices.Min(m.told)
	}
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
	Acquisitions        int      `json:"acquisitions"`
	FaultsPerKind       int      `json:"faults_per_kind"`
	ServerFaultsPerKind int      `json:"server_faults_per_kind"`
	Missed              []string `json:"missed,omitempty"`
}

func newReport() *Report {
	return &Report{AcquireFailures: map[string]int{}, AcquireErrors: map[string]int{}, Releases: map[string]int{},
		Losses: map[string]int{}, Faults: map[string]int{}, LossMargins: map[string]*Margin{}, OpDeletes: map[string]int{},
		Recipes: map[string]*RecipeStats{}, HeldBeforeLoss: map[string]*HeldBeforeLoss{}}
}

// addMargin counts a loss of kind followed by another holder: ms from the
// signal to the next acquire; fate, what became of the holder's session
// (checker.sessionFate); stopped when the holder was stopped then and told
// after it (see Margin.Paused). It reports whether the loss counts among
// the network and server faults' (NetworkLoss).
func (r *Report) addMargin(kind string, ms float64, fate string, stopped bool) bool {
	m := r.LossMargins[kind]
	if m == nil {
		m = &Margin{}
		r.LossMargins[kind] = m
	}
	m.add(ms, stopped)
	if !FaultKind(strings.Split(kind, "/")[0]).Network() || kind == "none" {
		return false
	}
	r.NetworkLoss.add(ms, stopped)
	switch fate {
	case fateAlive:
		r.NetworkLossLive.add(ms, stopped)
	case fateExpired:
		r.NetworkLossExpired.add(ms, stopped)
	default:
		r.NetworkLossUnknown.add(ms, stopped)
	}
	return true
}

// finish computes summaries and counts violations by kind.
func (r *Report) finish() {
	for _, m := range r.LossMargins {
		m.finish()
	}
	r.NetworkLoss.finish()
	r.NetworkLossExpired.finish()
	r.NetworkLossLive.finish()
	r.NetworkLossUnknown.finish()
	r.KillTakeover.finish()
	for _, h := range r.HeldBeforeLoss {
		h.finish()
	}
	r.OpDeleteNotice.finish()
	r.WriteLatency.finish()
	r.Stalls.finish()
	r.CampaignStalls.finish()
	r.ServerStops.finish()
	r.ServerSlow.finish()
	r.ReportDelay.finish()
	r.SchedWait.finish()
	for _, v := range r.Violations {
		switch v.Kind {
		case VSharedOverlap:
			r.SharedOverlaps++
		case VOverLimit:
			r.OverLimit++
		case VDowngradeGap:
			r.DowngradeGaps++
		case VDeleteUnnoticed:
			r.DeletesUnnoticed++
		case VOverlap:
			r.OverlappingAcceptedWrites++
		case VDoubleGrant:
			r.DoubleGrants++
		case VLateLoss:
			r.LateLossSignals++
		case VGoodStanding:
			r.RejectedGoodStand++
		case VDivergedLease:
			r.DivergedLeases++
		}
		if zooKeepers(v.Kind) {
			r.ZooKeeperVerdicts++
		}
	}
	r.Pass = r.zklockVerdicts() == 0
}

// zklockVerdicts counts the violations that are not ZooKeeper's own.
func (r *Report) zklockVerdicts() int { return len(r.Violations) - r.ZooKeeperVerdicts }

// setTargets checks the campaign's targets; a missed one fails the report.
func (r *Report) setTargets(cfg Config) {
	acq := cfg.Acquisitions
	r.Targets = Targets{Acquisitions: acq, FaultsPerKind: cfg.FaultsPerKind, ServerFaultsPerKind: cfg.ServerFaultsPerKind}
	if r.Acquisitions < acq {
		r.Targets.Missed = append(r.Targets.Missed, fmt.Sprintf("acquisitions %d < %d", r.Acquisitions, acq))
	}
	for _, k := range cfg.Faults {
		if n, want := r.Faults[string(k)], cfg.perKind(k); n < want {
			r.Targets.Missed = append(r.Targets.Missed, fmt.Sprintf("fault %s injected %d < %d times", k, n, want))
		}
	}
	r.checkCoverage(cfg)
	if r.Lanes > 1 && r.Acquisitions >= acq && r.LaneHandOffs == 0 {
		r.Targets.Missed = append(r.Targets.Missed, "no lease passed between two lanes of one process: the local hand-off was not exercised")
	}
	if r.Database != nil && r.Database.Rows == 0 && r.Acquisitions > 0 {
		r.Targets.Missed = append(r.Targets.Missed, "no write committed to the "+r.Database.Store+" store")
	}
	if r.Faults[string(FaultPause)] > 0 && r.Stale.RejectedPaused == 0 {
		r.Targets.Missed = append(r.Targets.Missed, "no stale write of a paused holder was refused: fencing was not exercised")
	}
	r.Pass = r.zklockVerdicts() == 0 && len(r.Targets.Missed) == 0
}

// WriteTable writes the report as Markdown tables, as shown in README.
func (r *Report) WriteTable(w io.Writer) {
	verdict := "PASS"
	if !r.Pass {
		verdict = "FAIL"
	}
	if r.ZooKeeperVerdicts > 0 {
		verdict += fmt.Sprintf(" (and %d verdicts on ZooKeeper: its members diverged)", r.ZooKeeperVerdicts)
	}
	store := r.StoreKind
	if store == "" {
		store = StoreMemory
	}
	fmt.Fprintf(w, "zklock chaos campaign %q: %s — 3-node ensemble, %d worker processes of %d lanes, %d resources, session timeout %d ms, store %s, %.0f s, seed %d\n\n",
		r.Campaign, verdict, r.Workers, max(r.Lanes, 1), r.Resources, r.SessionTimeoutMS, store, r.DurationSec, r.Seed)
	fmt.Fprintln(w, "| check | result | target |")
	fmt.Fprintln(w, "|---|---:|---|")
	row := func(name, result, target string) { fmt.Fprintf(w, "| %s | %s | %s |\n", name, result, target) }
	row("acquisitions", fmt.Sprint(r.Acquisitions), fmt.Sprintf("≥ %d", r.Targets.Acquisitions))
	for _, k := range AllFaults {
		want := r.Targets.FaultsPerKind
		if k.Server() && r.Targets.ServerFaultsPerKind > 0 {
			want = r.Targets.ServerFaultsPerKind
		}
		row("faults: "+string(k), fmt.Sprint(r.Faults[string(k)]), fmt.Sprintf("≥ %d", want))
	}
	row("overlapping critical sections, both writes accepted", fmt.Sprint(r.OverlappingAcceptedWrites), "0")
	row("read/write: a writer beside another holder (writes or grants)", fmt.Sprint(r.SharedOverlaps), "0")
	row("semaphore: more holders than its limit (writes or grants)", fmt.Sprint(r.OverLimit), "0")
	row("downgrade: another writer between the write and the read lease", fmt.Sprintf("%d (of %d downgrades)", r.DowngradeGaps, r.Downgrades), "0")
	row("operator deletes: holders not told within the notice bound", fmt.Sprintf("%d (%d holders hit, %d of them re-queued leases, %d granted on a listing sent before the delete, %d cut off or paused; notice median %.0f ms, n=%d; %d deletes found the node gone already, %d failed and deleted nothing)",
		r.DeletesUnnoticed, r.OpDeleteHolders, r.RequeuedDeleted, r.OpDeleteBornLost, r.OpDeleteExcused, r.OpDeleteNotice.MedianMS, r.OpDeleteNotice.N, r.OpDeletesGone, r.OpDeletesUndone), "0")
	row("re-queued leases (first node deleted or session expired while waiting)", fmt.Sprint(r.Requeued), "> 0")
	row("double grants (next holder in before release, loss or death)", fmt.Sprint(r.DoubleGrants), "0")
	row("holders told of loss after the next acquire (not paused)", fmt.Sprint(r.LateLossSignals), "0")
	row("paused holders overtaken (fencing's job)", fmt.Sprint(r.PausedOverlaps), "—")
	stale := fmt.Sprintf("%d (%d paused, %d after loss, %d after an operator's delete)", r.Stale.Rejected, r.Stale.RejectedPaused,
		r.Stale.RejectedAfterLoss, r.Stale.RejectedAfterDelete)
	if n := r.Stale.RejectedInTransit; n > 0 {
		stale += fmt.Sprintf("; %d of those after loss were sent before it, delivered after", n)
	}
	row("stale writes rejected by fencing", stale, "> 0 under SIGSTOP")
	row("stale writes committed (a fenced write accepted below an earlier writer's token)", fmt.Sprint(r.Stale.Committed), "0")
	unfenced := "semaphore writes no token can fence (paused, lost or deleted holders; not counted as holders)"
	if r.Database != nil {
		unfenced = "semaphore and read/write writes no token can fence (paused, lost or deleted holders; not counted as holders)"
	}
	if r.StoreKind != StoreZK { // there, the lease's nodes fence every write
		row(unfenced, fmt.Sprint(r.Stale.Unfenced), "—")
	}
	row("operator deletes overtaken (fencing's job)", fmt.Sprint(r.OperatorOverlaps), "—")
	row("fenced store history linearizable (porcupine)", fmt.Sprintf("%s (%d writes)", r.Store.Result, r.Store.Writes), "Ok")
	if d := r.Database; d != nil {
		row(fmt.Sprintf("%s store: rows committed; writes by what their writer was told", d.Store), fmt.Sprintf("%d; %s", d.Rows, kv(d.Outcomes)), "> 0 rows")
		aborted := "… transactions of paused writers ended by the database (idle in transaction)"
		if d.Store == StoreZK {
			aborted = "… writes of paused writers whose answer was lost (their connection or session ended under them)"
		}
		row(aborted, fmt.Sprint(d.PausedAborted), "—")
		row("… writes whose report and row disagree", fmt.Sprint(d.Mismatches), "0")
		if d.Store == StoreZK {
			row("… ZooKeeper's: acknowledged writes whose log entry holds another write / members whose read-back differs from the majority's",
				fmt.Sprintf("%d / %d notes", d.Forgotten, d.Diverged), "— (ZooKeeper's: does not fail the run)")
		}
	}
	if wl := r.WriteLatency; wl.N > 0 {
		row("write: sent → accepted (p50 / p99 / max)", fmt.Sprintf("%.1f / %.0f / %.0f ms (n=%d)", wl.P50MS, wl.P99MS, wl.MaxMS, wl.N), "—")
	}
	if r.Load.Seconds > 0 {
		row("load phase: sessions opened (that acquired) / peak waiters / acquisitions", fmt.Sprintf("%d (%d) / %d / %d in %.0f s",
			r.Load.SessionsOpened, r.Load.Sessions, r.Load.PeakWaiters, r.Load.Acquisitions, r.Load.Seconds), "≥ 200 / ≥ 5,000")
	}
	row("writes rejected from holders in good standing", fmt.Sprint(r.RejectedGoodStand), "0")
	stalls := "0"
	if st := r.Stalls; st.N > 0 {
		stalls = fmt.Sprintf("%d (p50 %.0f ms, longest %.0f ms)", st.N, st.P50MS, st.MaxMS)
	}
	row(fmt.Sprintf("worker stalls: a process not running for ≥ %d ms, judged as a pause", stallMin.Milliseconds()), stalls, "—")
	cstalls := "0"
	if st := r.CampaignStalls; st.N > 0 {
		cstalls = fmt.Sprintf("%d (p50 %.0f ms, longest %.0f ms)", st.N, st.P50MS, st.MaxMS)
	}
	row("campaign stalls: its proxies and store not running, felt by every worker", cstalls, "—")
	sstops := "0"
	if st := r.ServerStops; st.N > 0 {
		sstops = fmt.Sprintf("%d (p50 %.0f ms, longest %.0f ms, %s)", st.N, st.P50MS, st.MaxMS, st.Worst)
	}
	row(fmt.Sprintf("ZooKeeper stops: a member's JVM at a safepoint for ≥ %d ms (garbage collections), felt by every worker", stallMin.Milliseconds()), sstops, "—")
	if d := r.ServerSlow; d.N > 0 {
		row(fmt.Sprintf("ZooKeeper's slow requests: a member's longest request per %d ms when ≥ %d ms (mntr)", latencyTick.Milliseconds(), slowMin.Milliseconds()),
			fmt.Sprintf("%d (p50 %.0f ms, p99 %.0f ms, max %.0f ms, %s)", d.N, d.P50MS, d.P99MS, d.MaxMS, d.Worst), "—")
	}
	if d := r.ReportDelay; d.N > 0 {
		row("worker reports: stamp → recorded by the hub", fmt.Sprintf("p50 %.1f ms, p99 %.0f ms, max %.0f ms (n=%d)", d.P50MS, d.P99MS, d.MaxMS, d.N), "—")
	}
	if d := r.SchedWait; d.N > 0 {
		// Each is the lower bound of the runtime's histogram bucket (the
		// maximum of both long runs of 28 November, 4,295 ms, is 2^32 ns);
		// a goroutine runnable when the nemesis stops the process waits
		// out the pause (4.5 to 5.5 s).
		row("worker goroutines' longest wait to run, per second (bucket lower bounds; SIGSTOP pauses included)",
			fmt.Sprintf("p50 %.1f ms, p99 %.0f ms, max %.0f ms (n=%d)", d.P50MS, d.P99MS, d.MaxMS, d.N), "—")
	}
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
	row("ZooKeeper divergence: lock znodes a synced listing left out / sequence numbers given twice", divergence(pc.Divergent, r.SequencesTwice, r.SequencesReused), "0 (ZooKeeper's: does not fail the run)")
	row("… verdicts on leases that stood on such a node (double grants, fenced holders, …)", fmt.Sprint(r.DivergedLeases), "— (ZooKeeper's)")
	nl := r.NetworkLoss
	first := fmt.Sprintf("%d of %d", nl.Before, nl.N)
	if nl.Paused > 0 {
		first += fmt.Sprintf(" (and %d holders stopped then: paused or stalled, fencing's)", nl.Paused)
	}
	row("loss signal before next acquire, network/server faults", fmt.Sprintf("%s, min margin %.0f ms", first, nl.MinToldMS), "all but the stopped")
	row("… of those, session expired: min margin (the stopped left out)", margin(r.NetworkLossExpired), fmt.Sprintf("≥ loss margin, %d ms", r.SessionTimeoutMS/4))
	row("… of those, session alive, zklock deleted its node: min margin (the stopped left out)", margin(r.NetworkLossLive), "> 0")
	row("… of those, the session's end not in the history: min margin (the stopped left out)", margin(r.NetworkLossUnknown), "— (> 0 above)")
	r.writeRecipes(w)
	r.writeLiveness(w)
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| lost lease, blamed on | n | signal first | holder stopped then | min margin ms | median ms |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|")
	for _, k := range slices.Sorted(maps.Keys(r.LossMargins)) {
		m := r.LossMargins[k]
		fmt.Fprintf(w, "| %s | %d | %d | %d | %.0f | %.0f |\n", k, m.N, m.Before, m.Paused, m.MinMS, m.MedianMS)
	}
	if r.KillTakeover.N > 0 {
		fmt.Fprintf(w, "| (kill: SIGKILL to next acquire) | %d | — | — | %.0f | %.0f |\n", r.KillTakeover.N, r.KillTakeover.MinMS, r.KillTakeover.MedianMS)
	}
	r.writeHeld(w)
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
		label := "VIOLATION"
		if zooKeepers(v.Kind) {
			label = "ZOOKEEPER"
		}
		fmt.Fprintf(w, "\n%s %d/%d %s", label, i+1, len(r.Violations), v.Kind)
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

// writeRecipes writes the table of recipes.
func (r *Report) writeRecipes(w io.Writer) {
	if len(r.Recipes) == 0 {
		return
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| recipe | attempts | acquired | failed (by outcome) | faults aimed at its holders | violations |")
	fmt.Fprintln(w, "|---|---:|---:|---|---|---:|")
	for _, name := range append(slices.Clone(AllRecipes), RecipeLoad) {
		rc := r.Recipes[name]
		if rc == nil {
			continue
		}
		fmt.Fprintf(w, "| %s | %d | %d | %s | %d: %s | %d |\n", name, rc.Attempts, rc.Acquisitions, kv(rc.Failures), rc.aimedTotal(), kv(rc.Aimed), rc.Violations)
	}
}

// writeLiveness writes the table of liveness figures.
func (r *Report) writeLiveness(w io.Writer) {
	if len(r.Liveness) == 0 {
		return
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| liveness figure | phase | window | n | p50 ms | p99 ms | max ms | target | verdict |")
	fmt.Fprintln(w, "|---|---|---|---:|---:|---:|---:|---|---|")
	for _, f := range r.Liveness {
		target, verdict := "—", "—"
		if f.LimitMS > 0 {
			target = fmt.Sprintf("≤ %.0f ms", f.LimitMS)
			verdict = "PASS"
			if f.MaxMS > f.LimitMS {
				verdict = fmt.Sprintf("**FAIL** (%d over)", f.Over)
			}
		}
		fmt.Fprintf(w, "| %s | %s | %s | %d | %.0f | %.0f | %.0f | %s | %s |\n", f.Name, f.Phase, f.Window, f.N, f.P50MS, f.P99MS, f.MaxMS, target, verdict)
	}
	for _, f := range r.Liveness {
		if len(f.OverSamples) == 0 {
			continue
		}
		fmt.Fprintf(w, "\n%s (%s phase, %s), over %.0f ms, with ZooKeeper's slowest request then:\n", f.Name, f.Phase, f.Window, f.LimitMS)
		for i, o := range f.OverSamples {
			if i == maxOverSamplesShown {
				fmt.Fprintf(w, "- … %d more in report.json\n", len(f.OverSamples)-i)
				break
			}
			fmt.Fprintf(w, "- %.0f ms: %s; ZooKeeper: %s\n", o.MS, o.What, cmp.Or(o.ZK, "no request ≥ "+slowMin.String()))
		}
	}
}

// maxOverSamplesShown bounds the samples the text report lists per
// figure.
const maxOverSamplesShown = 10

// margin formats a row of Margin m: the least margin of the holders that
// were not stopped, and how many there were.
func margin(m Margin) string {
	s := fmt.Sprintf("%.0f ms (n=%d, median %.0f)", m.MinToldMS, m.N, m.MedianMS)
	if m.Paused > 0 {
		s += fmt.Sprintf("; of them %d stopped, min %.0f ms", m.Paused, m.MinMS)
	}
	return s
}

// divergence formats the divergence row's result: nodes left out /
// numbers given twice, and the numbers given again in a queue made again.
func divergence(left, twice, reused int) string {
	s := fmt.Sprintf("%d / %d", left, twice)
	if reused > 0 {
		s += fmt.Sprintf(" (and %d given again in a queue made again: not evidence)", reused)
	}
	return s
}
