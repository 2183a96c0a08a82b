package chaos

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Params tells the checker what the campaign promised.
type Params struct {
	// SessionTimeout is the negotiated session timeout: a loss is
	// attributed to a fault that began before it and ended at most two
	// session timeouts earlier.
	SessionTimeout time.Duration
	// TickTime is the servers' tickTime (default 500ms): the leaderless
	// gap's target is zklock.LeaderGapBound of it and SessionTimeout on
	// an ensemble.
	TickTime time.Duration
	// HangGrace is how long past its deadline an acquire may return
	// before it counts as hung.
	HangGrace time.Duration
	// PhantomGrace is how long a lock znode of a live session may stay
	// unknown to its own client before it counts as a phantom (see
	// VPhantom). Zero means 3 × SessionTimeout (9s if that is zero too).
	PhantomGrace time.Duration
	// DeleteNotice bounds how long after an operator deleted a holder's
	// node the holder may go on believing it holds (default 1s: README
	// promises it learns at once).
	DeleteNotice time.Duration
	// SlotBound bounds, outside faults, how long a free slot of a lock or
	// semaphore may stay unclaimed while a waiter waits, and the time from
	// a release to the next holder (default 1s).
	SlotBound time.Duration
	// TryBound bounds a try-acquire's answer, during faults too (default
	// 1.25s: zklock's bound, min(session timeout/3, 1s) for the campaign's
	// 3s, plus 250ms for its timer and the scheduler of a loaded machine: a
	// try that finds ZooKeeper away answers ErrUnavailable at the bound
	// itself, measured up to 1,114 ms on a machine at load 10).
	TryBound time.Duration
	// Store is the campaign's store (Config.Store; StoreMemory when
	// empty). With a database or ZooKeeper, what was accepted, and in
	// which order, is read from the committed writes the history ends with
	// (EvCommitted), not from the writers' reports; with ZooKeeper every
	// write is fenced by its lease's nodes (zkFenceSpec).
	Store string
}

func (p Params) withDefaults() Params {
	if p.DeleteNotice <= 0 {
		p.DeleteNotice = time.Second
	}
	if p.SlotBound <= 0 {
		p.SlotBound = time.Second
	}
	if p.TryBound <= 0 {
		p.TryBound = 1250 * time.Millisecond
	}
	if p.TickTime <= 0 {
		p.TickTime = 500 * time.Millisecond
	}
	return p
}

// Violation kinds. Any of them fails a campaign.
const (
	VOverlap          = "overlapping-accepted-writes" // two leases' accepted writes interleave in the store
	VDoubleGrant      = "double-grant"                // a lease was granted while the previous holder neither released, lost nor died
	VLateLoss         = "late-loss-signal"            // a holder was told of its loss after the next holder acquired (not a pause)
	VGoodStanding     = "rejected-in-good-standing"   // a holder neither paused nor told of loss was fenced off
	VOrphan           = "orphan-node"                 // a lock znode left after the run
	VHung             = "hung-acquire"                // an acquire returned long after its deadline
	VCrash            = "worker-crash"                // a worker exited on its own
	VNotQuiesced      = "not-quiesced"                // a worker did not wind down in time
	VStaleCommitted   = "stale-write-committed"       // the store accepted a fenced write below a token it had accepted before on the resource
	VPhantom          = "phantom-node"                // a lock znode of a live session unknown to its client for longer than PhantomGrace
	VUnexpectedError  = "unexpected-acquire-error"    // an acquire failed with none of the errors a fault explains (locked, timeout, cancelled, closed, unavailable)
	VSharedOverlap    = "reader-writer-overlap"       // a writer's accepted writes interleave with another holder's, or a holder came in beside a writer
	VOverLimit        = "semaphore-over-limit"        // more than limit holders of a semaphore wrote, or held, at once
	VDowngradeGap     = "downgrade-unlocked"          // another writer got in between a write lease and the read lease of its Downgrade
	VDeleteUnnoticed  = "delete-unnoticed"            // a holder whose node an operator deleted went on holding past DeleteNotice
	VStoreHistory     = "store-not-linearizable"      // the fenced store's verdicts fit no sequential fenced register (porcupine)
	VLiveness         = "liveness-target-missed"      // a liveness figure missed its target
	VLeftover         = "acquire-all-leftover"        // a failed AcquireAll left a node with its client: not all-or-nothing
	VLossMargin       = "loss-margin-missed"          // a holder whose session then expired was told of its loss less than the loss margin before the next acquire
	VStoreMismatch    = "store-mismatch"              // a database store's rows contradict its writers or themselves, or were not read back
	VStoreError       = "store-error"                 // a write to a database store failed with an error neither the fence nor the database's timeouts explain
	VDivergence       = "server-divergence"           // two ensemble members disagreed on a lock znode after a sync, or gave one sequence number twice: a ZooKeeper fault, not zklock's
	VDivergedLease    = "diverged-lease"              // a verdict of onZooKeeper's on a lease that stood on a node the members disagreed on: ZooKeeper's, not zklock's
	VStoreDiverged    = "store-divergence"            // the ZooKeeper store's members disagree on its log, or ZooKeeper gave an acknowledged write's log entry to another write: ZooKeeper's, not zklock's
	maxSliceEvents    = 120
	sliceContextNanos = int64(time.Second)
)

// Violation is one safety or liveness failure, with the slice of history
// that shows it.
type Violation struct {
	Kind     string `json:"kind"`
	Resource string `json:"resource,omitempty"`
	Detail   string `json:"detail"`
	// At is when the history shows it (Unix nanoseconds): the end of the
	// stretch of history the verdict rests on.
	At    int64   `json:"at"`
	Slice []Event `json:"slice"`
}

// leaseKey names a lease: its process, its acquire, and the resource (a
// multi-resource lease has one record per part).
type leaseKey struct {
	proc int
	op   int64
	res  string
}

func (k leaseKey) String() string { return fmt.Sprintf("proc %d op %d", k.proc, k.op) }

// keysOf returns the leases an event is about: one per resource it names.
func keysOf(e Event) []leaseKey {
	if e.Kind == EvWrite || !strings.Contains(e.Resource, ",") {
		return []leaseKey{{e.Proc, e.Op, e.Resource}}
	}
	var ks []leaseKey
	for _, r := range strings.Split(e.Resource, ",") {
		ks = append(ks, leaseKey{e.Proc, e.Op, r})
	}
	return ks
}

type leaseRec struct {
	key      leaseKey
	resource string
	token    int64
	session  int64
	acquired int64
	lost     int64
	lostWhy  string
	release  int64
	// releaseLost: Release returned the lease's loss, so the loss came
	// first even if the worker saw Done fire only after calling Release.
	releaseLost bool
	// downgraded: the lease was given up by a Downgrade (its release
	// event's detail), which ends the write lease at the call whatever
	// the call returned: the loss Downgrade reports (downgrade-lost) is
	// of the read lease it made, or came during the call.
	downgraded bool
	died       int64
	writes     []storeWrite // its accepted writes, in the store's order
	mode       string       // ModeExclusive, ModeRead, ...
	limit      int          // a semaphore's
	detail     string       // "try", "short", "load", "downgrade", "long"
	began      int64        // when the acquire call began
	from       int64        // ModeDowngrade: the op of the write lease it came from
	nodes      []string     // the lease's lock nodes
	released   string       // EvReleased outcome
	releasedAt int64        // EvReleased T
	// releaseCalled: when the holder called Release (EvReleased's
	// Called), after reporting its release; 0 if unknown
	releaseCalled int64
	lostServer    int  // the member its session was on when told of its loss (1-based, 0 unknown)
	requeued      bool // its acquire queued again with a new node before it held
	server        int  // the member its session was on when it acquired (1-based, 0 unknown)
}

// writer reports whether l excludes every other holder.
func (l *leaseRec) writer() bool {
	return l.mode != ModeRead && l.mode != ModeDowngrade && l.mode != ModeSemaphore
}

// end returns when the holder stopped holding in its own eyes (released,
// told of loss, or died) and how; 0 and "open" if never.
func (l *leaseRec) end() (int64, string) {
	t, how := int64(0), "open"
	release := l.release
	if l.releaseLost && l.lost != 0 && !l.downgraded {
		release = 0
	}
	for _, c := range []struct {
		t   int64
		how string
	}{{l.lost, "lost"}, {release, "release"}, {l.died, "died"}} {
		if c.t != 0 && (t == 0 || c.t < t) {
			t, how = c.t, c.how
		}
	}
	return t, how
}

type faultRec struct {
	id         int
	kind       FaultKind
	proc       int
	start, end int64
	target     string // op-delete: the node
	resource   string // op-delete: its queue
	role       string // op-delete: holder, waiter, requeued-holder
	stuck      []int  // isolate-follower: workers cut off with the follower
	cut        []int  // partitions: the servers (1-based) cut off from the majority
	server     int    // leader-kill, server-restart: the server (1-based)
	failed     bool   // the heal says the fault's action failed (an op-delete whose reply was lost: done at an unknown moment, or not at all)
	stall      bool   // a stop of the process its stall watch reported (EvStall), not a fault of the campaign's
}

type checker struct {
	p      Params
	evs    []Event
	leases map[leaseKey]*leaseRec
	byRes  map[string][]*leaseRec
	faults []*faultRec
	// pauses: per process, its pause faults and its stalls
	pauses map[int][]*faultRec
	// stalls: the stops of worker processes their stall watch reported
	// (EvStall), judged as pauses; not faults of the campaign's
	stalls []*faultRec
	// slow: the members' slow requests (EvServerSlow), in history order
	slow []Event
	// sessions: per process, the events that name its session (acquired,
	// quiesced), in order
	sessions map[int][]Event
	lastT    int64
	rep      *Report
	// deletes: op-delete faults by node path
	deletes map[string][]*faultRec
	// byNode: lease records by lock node path
	byNode map[string][]*leaseRec
	// attempts: every acquire, by key of its EvAcquire
	attempts []*attemptRec
	// phases: when the load phase began and ended (0 if none)
	loadFrom, loadTo int64
	// loadStop: the wind-down, when the load phase's sessions stop. The
	// campaign records load-end when its clock for the phase runs out,
	// but the load runs on while the nemesis finishes its faults and the
	// queue snapshots stop (3.7 minutes in the long run of 27 Nov): the
	// hand-offs of that time are the load's.
	loadStop int64
	// touched: resources each process fault was felt on (liveness)
	touched map[*faultRec][]string
	// windDown: when the campaign stopped the faults and began to stop
	// the workers (0 if the history does not say)
	windDown int64
	// db: the store is outside the campaign process, a database or
	// ZooKeeper (Params.Store): its committed writes decide
	db bool
	// zk: the store is ZooKeeper, where every write is fenced by its
	// lease's nodes: readers are token-ordered against writers, and an
	// accepted write of any recipe came from a holder whose node existed
	zk bool
	// writes: every write to the store, the accepted ones first, in the
	// store's order (storeWrites)
	writes []storeWrite
	// died: when each process that died did
	died map[int]int64
	// snaps: the queue snapshots (EvQueues) by T; spans: what they show
	// of each lock node, by first sighting (findDivergence)
	snaps []Event
	spans []*nodeSpan
	// onServer: the members each process's reports named, in time order;
	// disputedIn: the disputed nodes' spans by queue (indexServers)
	onServer map[int][]serverAt
	// slowOn: per member, its slow samples of stallMin or more, in
	// time order (indexServers)
	slowOn map[int][]Event
	// fates: the notes of what became of each session (sessionFates), by session
	fates      map[int64][]Event
	disputedIn map[string][]*nodeSpan
	// disputed: lock nodes the ensemble's members disagreed on; unsound:
	// those of them a lease's verdicts are ZooKeeper's on, with why
	disputed map[string]bool
	unsound  map[string]string
}

// attemptRec is one acquire attempt: when it began and when it returned.
type attemptRec struct {
	key          leaseKey
	mode, detail string
	start, end   int64 // EvAcquire T; EvAcquired / EvAcquireFailed T (0 if never)
	began        int64 // when the acquire call began (from the result)
	outcome      string
	acquired     bool
	deadline     int64
	slot         int
}

// Check reads a campaign's history and reports what happened and every
// violation. It is a pure function of the history.
func Check(events []Event, p Params) *Report {
	evs := slices.Clone(events)
	slices.SortFunc(evs, func(a, b Event) int { return cmp.Compare(a.Seq, b.Seq) })
	c := &checker{p: p.withDefaults(), evs: evs, leases: map[leaseKey]*leaseRec{}, byRes: map[string][]*leaseRec{},
		pauses: map[int][]*faultRec{}, sessions: map[int][]Event{}, rep: newReport(), deletes: map[string][]*faultRec{},
		byNode: map[string][]*leaseRec{}, db: p.Store != "" && p.Store != StoreMemory, zk: p.Store == StoreZK, died: map[int]int64{}}
	c.index()
	c.findDivergence()
	c.checkWrites()
	c.checkStaleCommitted()
	c.checkSharedWrites()
	c.checkHandOffs()
	c.checkSharedHandOffs()
	c.checkDowngrades()
	c.checkOpDeletes()
	c.checkAcquires()
	c.reportDelays()
	c.checkMisc()
	c.checkPhantoms()
	c.checkStoreHistory()
	c.checkLiveness()
	c.countRecipes()
	c.rep.finish()
	return c.rep
}

func (c *checker) index() {
	r := c.rep
	faults := map[int]*faultRec{}
	died := c.died
	pending := map[leaseKey]*attemptRec{}
	loading := false
	for _, e := range c.evs { // the phases first: the scan below asks them (phase)
		if e.Kind == EvPhase && e.Detail == "load" {
			loading = true
		}
		if e.Kind == EvPhase && e.Detail == "wind-down" && loading {
			c.loadStop = e.T
		}
	}
	for _, e := range c.evs {
		c.lastT = max(c.lastT, e.T)
		k := leaseKey{e.Proc, e.Op, e.Resource}
		switch e.Kind {
		case EvPhase:
			switch e.Detail {
			case "load":
				c.loadFrom = e.T
			case "load-end", "wind-down":
				if c.loadFrom != 0 && c.loadTo == 0 {
					c.loadTo = e.T
				}
			}
			if e.Detail == "wind-down" {
				c.windDown = e.T
			}
		case EvAcquire:
			r.AcquireAttempts++
			a := &attemptRec{key: k, mode: e.Mode, detail: e.Detail, start: e.T, deadline: e.Deadline, slot: e.Slot}
			pending[k] = a
			c.attempts = append(c.attempts, a)
		case EvAcquired:
			if a := pending[k]; a != nil {
				a.end, a.began, a.acquired, a.outcome = e.T, e.Began, true, "acquired"
				delete(pending, k)
			}
			if e.Detail != "load" {
				r.Acquisitions++
			} else {
				r.LoadAcquisitions++
			}
			c.sessions[e.Proc] = append(c.sessions[e.Proc], e)
			for _, pk := range keysOf(e) {
				tok := e.Token
				if e.Parts != nil {
					tok = e.Parts[pk.res]
				}
				l := &leaseRec{key: pk, resource: pk.res, token: tok, session: e.Session, acquired: e.T, mode: e.Mode,
					limit: e.Limit, detail: e.Detail, began: e.Began, from: e.From, nodes: e.Nodes, requeued: e.Requeued,
					server: e.Server}
				if e.Requeued && pk.res == keysOf(e)[0].res {
					r.Requeued++
				}
				c.leases[pk] = l
				c.byRes[pk.res] = append(c.byRes[pk.res], l)
				for _, n := range e.Nodes {
					c.byNode[n] = append(c.byNode[n], l)
				}
			}
		case EvAcquireFailed:
			if a := pending[k]; a != nil {
				a.end, a.began, a.outcome = e.T, e.Began, e.Outcome
				delete(pending, k)
			}
			r.AcquireFailures[e.Outcome]++
			if e.Outcome == "error" {
				r.AcquireErrors[trimErr(e.Err)]++
			}
		case EvLost:
			for _, pk := range keysOf(e) {
				if l := c.leases[pk]; l != nil && l.lost == 0 {
					l.lost, l.lostServer = e.T, e.Server
					l.lostWhy = lossReason(e.Err)
					if pk.res == strings.Split(e.Resource, ",")[0] {
						r.Losses[l.lostWhy]++
						r.addHeld(l.lostWhy, l.acquired, l.lost, c.phase(l.acquired) == "load")
					}
				}
			}
		case EvRelease:
			for _, pk := range keysOf(e) {
				if l := c.leases[pk]; l != nil {
					l.release = e.T
					l.downgraded = e.Detail == "downgrade" || e.Detail == "downgrade-lost"
				}
			}
		case EvReleased:
			r.Releases[e.Outcome]++
			for _, pk := range keysOf(e) {
				if l := c.leases[pk]; l != nil {
					l.released, l.releasedAt, l.releaseCalled = e.Outcome, e.T, e.Called
					if e.Outcome == "lost" {
						l.releaseLost = true
					}
				}
			}
		case EvQuiesced:
			c.sessions[e.Proc] = append(c.sessions[e.Proc], e)
		case EvNote:
			if e.Outcome == OutcomeSessionVerified || e.Outcome == OutcomeSessionReplaced {
				if c.fates == nil {
					c.fates = map[int64][]Event{}
				}
				c.fates[e.Session] = append(c.fates[e.Session], e)
			}
		case EvDied:
			died[e.Proc] = e.T
		case EvServerStop:
			c.stalls = append(c.stalls, &faultRec{kind: FaultPause, server: e.Server, start: e.T, end: e.End, stall: true})
			r.ServerStops.add(float64(e.End-e.T)/1e6, fmt.Sprintf("zk%d: %s", e.Server, e.Detail), e.T, e.End, "")
		case EvServerSlow:
			c.slow = append(c.slow, e)
			r.ServerSlow.add(float64(e.Latency), fmt.Sprintf("zk%d, %d outstanding", e.Server, e.Outstanding), e.T, e.End, "")
		case EvStall:
			f := &faultRec{kind: FaultPause, proc: e.Proc, start: e.T, end: e.End, stall: true}
			c.stalls = append(c.stalls, f)
			if e.Proc == 0 {
				// the campaign's own (see stall.go): felt by everyone
				r.CampaignStalls.add(float64(e.End-e.T)/1e6, "", e.T, e.End, "")
				break
			}
			c.pauses[e.Proc] = append(c.pauses[e.Proc], f)
			r.Stalls.add(float64(e.End-e.T)/1e6, "", e.T, e.End, "")
		case EvFault:
			f := &faultRec{id: e.FaultID, kind: FaultKind(e.Fault), proc: e.Proc, start: e.T, stuck: stuckProcs(e.Detail)}
			if f.kind == FaultLeaderKill || f.kind == FaultServerRestart {
				_, _ = fmt.Sscanf(e.Target, "zk%d", &f.server)
			}
			if f.kind.Partition() && len(e.Nodes) > 0 {
				for _, z := range strings.Split(e.Nodes[0], ",") {
					var n int
					if _, err := fmt.Sscanf(z, "zk%d", &n); err == nil {
						f.cut = append(f.cut, n)
					}
				}
			}
			faults[e.FaultID] = f
			c.faults = append(c.faults, f)
			r.Faults[e.Fault]++
			if e.Mode != "" {
				r.addAimed(e.Mode, e.Fault)
			}
			switch f.kind {
			case FaultPause:
				c.pauses[e.Proc] = append(c.pauses[e.Proc], f)
			case FaultOpDelete:
				f.target, f.resource, f.role = e.Target, e.Resource, e.Detail
				c.deletes[e.Target] = append(c.deletes[e.Target], f)
			}
		case EvHeal:
			if f := faults[e.FaultID]; f != nil {
				f.end = e.T
				f.failed = strings.HasPrefix(e.Detail, "error")
				if f.kind == FaultOpDelete && e.Detail == "gone already" {
					// The delete found no node (its holder released it, or
					// its session ended, first): it deleted nothing, so it
					// hit no holder and excuses no overlap.
					c.deletes[f.target] = slices.DeleteFunc(c.deletes[f.target], func(g *faultRec) bool { return g == f })
					r.OpDeletesGone++
				}
			}
		}
	}
	for _, f := range c.faults {
		if f.end == 0 {
			f.end = c.lastT
		}
	}
	for _, a := range c.attempts {
		if t, ok := died[a.key.proc]; ok && a.end == 0 && t >= a.start {
			a.end, a.outcome = t, "died" // a killed waiter waits no more
		}
	}
	for _, l := range c.leases {
		if t, ok := died[l.key.proc]; ok && t >= l.acquired {
			l.died = t
			if l.lost == 0 && l.release == 0 {
				r.Losses["killed"]++
			}
		}
	}
	c.writes = c.storeWrites()
	r.WriteLatency.Name = "write: sent → accepted"
	for _, w := range c.writes {
		if !w.Accepted {
			break // the accepted ones come first
		}
		if l := c.leases[leaseKey{w.Proc, w.Op, w.Resource}]; l != nil {
			l.writes = append(l.writes, w)
		}
		if w.Sent != 0 && w.Outcome != WriteUnreported {
			r.WriteLatency.add(float64(w.T-w.Sent)/1e6, "", w.Sent, w.T, w.Resource)
		}
	}
	for res := range c.byRes {
		slices.SortFunc(c.byRes[res], func(a, b *leaseRec) int { return cmp.Compare(a.token, b.token) })
	}
}

// pausedDuring reports whether proc was stopped at any time in [from, to].
func (c *checker) pausedDuring(proc int, from, to int64) bool {
	for _, f := range c.pauses[proc] {
		if f.start <= to && f.end >= from {
			return true
		}
	}
	return false
}

// reportDelays measures how long workers' reports took to reach the
// hub's record, over the events stamped as they are sent (an acquire's
// start, the lock nodes a worker reports every second), and how long their
// goroutines waited to run (EvLocal's Sched).
func (c *checker) reportDelays() {
	for _, e := range c.evs {
		if (e.Kind == EvAcquire || e.Kind == EvLocal) && e.Proc != 0 && e.T != 0 && e.Recv >= e.T {
			c.rep.ReportDelay.add(float64(e.Recv-e.T)/1e6, "", e.T, e.Recv, "")
		}
		if e.Kind == EvLocal && e.Proc != 0 && e.Sched > 0 {
			c.rep.SchedWait.add(float64(e.Sched)/1e6, "", e.T, e.T, "")
		}
	}
}

// checkAcquires finds acquires that hung past their deadline.
func (c *checker) checkAcquires() {
	r := c.rep
	grace := int64(c.p.HangGrace)
	hung := map[leaseKey]bool{}
	for _, e := range c.evs {
		k := leaseKey{e.Proc, e.Op, e.Resource}
		switch e.Kind {
		case EvHung:
			if !c.pausedDuring(e.Proc, e.Deadline-grace, e.T) && !hung[k] {
				hung[k] = true
				c.violation(VHung, e.Resource, fmt.Sprintf("%v had not returned %v after its deadline", k, c.p.HangGrace), e.Deadline-grace, e.T+grace, k)
			}
		case EvAcquired, EvAcquireFailed:
			if e.Kind == EvAcquireFailed && e.Outcome == "error" {
				c.violation(VUnexpectedError, e.Resource, fmt.Sprintf("%v failed with %q: zklock's sentinel errors and the context's are the only ones a fault explains", k, e.Err), e.T-sliceContextNanos, e.T, k)
			}
			if e.Deadline == 0 || e.T <= e.Deadline || c.pausedDuring(e.Proc, e.Deadline-grace, e.T) {
				continue
			}
			over := float64(e.T-e.Deadline) / 1e6
			r.MaxAcquireOverrunMS = max(r.MaxAcquireOverrunMS, over)
			if e.T-e.Deadline > grace && !hung[k] {
				hung[k] = true
				c.violation(VHung, e.Resource, fmt.Sprintf("%v returned %.0f ms after its deadline", k, over), e.Deadline-grace, e.T, k)
			}
		}
	}
	r.HungAcquires = len(hung)
}

func (c *checker) checkMisc() {
	for _, e := range c.evs {
		switch {
		case e.Kind == EvOrphan:
			c.rep.Orphans++
			c.violation(VOrphan, "", fmt.Sprintf("%s left behind (%s)", e.Target, e.Detail), e.T, e.T)
		case e.Kind == EvDied && e.Outcome == "crash":
			c.rep.WorkerCrashes++
			c.violation(VCrash, "", fmt.Sprintf("worker proc %d %s", e.Proc, e.Detail), e.T-10*sliceContextNanos, e.T, leaseKey{proc: e.Proc})
		case e.Kind == EvExit && e.Outcome != "ok":
			c.rep.WorkerCrashes++
			c.violation(VCrash, "", fmt.Sprintf("worker proc %d gave up: %s", e.Proc, e.Err), e.T, e.T)
		case e.Kind == EvNote && e.Outcome == "leftover":
			c.violation(VLeftover, e.Resource, fmt.Sprintf("proc %d op %d: %s: %s", e.Proc, e.Op, e.Detail, strings.Join(e.Nodes, ", ")),
				e.T-int64(c.p.SessionTimeout), e.T, leaseKey{proc: e.Proc})
		case e.Kind == EvNote && e.Outcome == VNotQuiesced:
			c.violation(VNotQuiesced, "", e.Detail, e.T-10*sliceContextNanos, e.T, leaseKey{proc: e.Proc})
		}
	}
}

// violation records v with the history slice around [from, to]: events of
// the resource, of the processes involved, and every fault. A verdict that
// holds only if ZooKeeper keeps one history (onZooKeeper), on a lease that
// stood on a node the members disagreed on, is recorded as VDivergedLease.
func (c *checker) violation(kind, res, detail string, from, to int64, keys ...leaseKey) {
	if onZooKeeper[kind] {
		if n, why := c.onDisputedNode(keys); n != "" {
			detail = fmt.Sprintf("%s: %s; but the lease stood on %s, a node the ensemble's members disagreed on (%s): ZooKeeper's fault, not zklock's", kind, detail, n, why)
			kind = VDivergedLease
		}
	}
	procs := map[int]bool{}
	for _, k := range keys {
		procs[k.proc] = true
	}
	at := to
	from, to = from-sliceContextNanos, to+sliceContextNanos
	var slice []Event
	for _, e := range c.evs {
		if e.T < from || e.T > to {
			continue
		}
		if (res != "" && e.Resource == res) || (e.Proc != 0 && procs[e.Proc]) || e.Kind == EvFault || e.Kind == EvHeal || e.Kind == EvOrphan {
			slice = append(slice, e)
		}
	}
	if len(slice) > maxSliceEvents {
		// keep both ends: the lead-up and the outcome
		slice = append(slice[:maxSliceEvents/2:maxSliceEvents/2], slice[len(slice)-maxSliceEvents/2:]...)
	}
	c.rep.Violations = append(c.rep.Violations, Violation{Kind: kind, Resource: res, Detail: detail, At: at, Slice: slice})
}

// kindOf says how a resource is judged: "x" (one holder at a time:
// exclusive, election, parts of multi-resource leases), "rw" or "sem".
func (c *checker) kindOf(res string) string {
	ls := c.byRes[res]
	if len(ls) == 0 {
		return "x"
	}
	switch ls[0].mode {
	case ModeRead, ModeWrite, ModeDowngrade:
		return "rw"
	case ModeSemaphore:
		return "sem"
	}
	return "x"
}

// deletedBy returns the operator's delete of one of l's nodes at or before
// t, after l was acquired, or nil.
func (c *checker) deletedBy(l *leaseRec, t int64) *faultRec {
	for _, n := range l.nodes {
		for _, f := range c.deletes[n] {
			if f.start <= t && f.start >= l.began {
				return f
			}
		}
	}
	return nil
}

// stuckProcs reads the "stuck=1,2" of a partition's detail.
func stuckProcs(detail string) []int {
	var out []int
	for _, f := range strings.Fields(detail) {
		if v, ok := strings.CutPrefix(f, "stuck="); ok {
			for _, p := range strings.Split(v, ",") {
				var n int
				if _, err := fmt.Sscan(p, &n); err == nil {
					out = append(out, n)
				}
			}
		}
	}
	return out
}

// lossReason extracts the reason from a *zklock.LostError message.
func lossReason(msg string) string {
	if i := strings.LastIndex(msg, "lost: "); i >= 0 {
		return msg[i+len("lost: "):]
	}
	return "unknown"
}

func trimErr(s string) string {
	if len(s) > 120 {
		return s[:120] + "..."
	}
	return s
}

// CheckHistoryFile re-checks a campaign's history.jsonl, taking the
// campaign's configuration from the history itself.
func CheckHistoryFile(path string) (*Report, error) {
	evs, err := ReadHistoryFile(path)
	if err != nil {
		return nil, err
	}
	var cfg Config
	found := false
	var first, last int64
	for _, e := range evs {
		if first == 0 || e.T < first {
			first = e.T
		}
		last = max(last, e.T)
		if raw, ok := strings.CutPrefix(e.Detail, "campaign "); ok && e.Kind == EvNote && !found {
			if err := json.Unmarshal([]byte(raw), &cfg); err != nil {
				return nil, fmt.Errorf("chaos: campaign record in %s: %w", path, err)
			}
			found = true
		}
	}
	if !found {
		return nil, fmt.Errorf("chaos: %s has no campaign record", path)
	}
	if cfg.Lanes == 0 {
		cfg.Lanes = 1 // recorded before workers had lanes
	}
	if cfg.ServerFaultsPerKind == 0 {
		// recorded before the recipe lanes and the partitions
		cfg.NoRecipes = true
		if len(cfg.Faults) == 0 {
			cfg.Faults = []FaultKind{FaultKill, FaultPause, FaultBlackhole, FaultDrop, FaultSlow, FaultLeaderKill, FaultServerRestart}
		}
	}
	cfg = cfg.withDefaults()
	rep := Check(evs, Params{SessionTimeout: cfg.SessionTimeout, TickTime: cfg.TickTime, HangGrace: cfg.HangGrace, Store: cfg.Store})
	rep.Campaign, rep.Workers, rep.Resources, rep.Lanes = cfg.Name, cfg.Workers, cfg.Resources, cfg.Lanes
	rep.SessionTimeoutMS = cfg.SessionTimeout.Milliseconds()
	rep.StoreKind = cfg.Store
	rep.DurationSec = float64(last-first) / 1e9
	rep.Seed = cfg.Seed
	rep.setTargets(cfg)
	return rep, nil
}
