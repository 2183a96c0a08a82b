package chaos

import (
	"cmp"
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/zklockkit/zklockkit/zklock"
)

// Liveness figures. Each is measured in the main phase and in the load
// phase, outside fault windows ("quiet") and during them ("faults"); the
// targets apply where the figure says. A hand-off or a free slot of a
// queue a member had diverged on (a node it listed that the ensemble did
// not have) while a waiter on that member waited is ZooKeeper's
// ("diverged"), with no target: see divergedFor. So is one during which a
// member serving one of its processes held a request stallMin or more
// ("zk-slow"): see slowFor.
const (
	// FigHandOff: from a holder's release, with a waiter waiting, to the
	// next holder's acquire. Target, quiet: SlotBound.
	FigHandOff = "release → next holder"
	// FigFreeSlot: the longest a lock or semaphore had a free slot (fewer
	// holders than it allows; for a read/write lock, none) while a waiter
	// waited. Target, quiet: SlotBound.
	FigFreeSlot = "free slot unclaimed while a waiter waited"
	// FigHeal: from the end of a fault to the first answer ZooKeeper gave
	// every worker it hit: a grant, or a try told the resource is locked
	// (a try says so only from a listing of the queue, after its node was
	// created). Target, with no other fault meanwhile: the session
	// timeout.
	FigHeal = "heal → first grant or try answer of each worker hit"
	// FigTry: a try-acquire's answer. Target, quiet and during faults (a
	// paused process excepted): TryBound.
	FigTry = "try-acquire answer"
	// FigLeaderless: from a leader's death (killed, paused, cut off,
	// its node deleted) to the next leader, with a candidate waiting.
	// Target, with no other fault meanwhile: zklock.LeaderGapBound on an
	// ensemble (session timeout + tickTime + 1s + tickTime/2).
	FigLeaderless = "leaderless gap after a leader's death"
)

// AllFigures lists the figures in report order.
var AllFigures = []string{FigHandOff, FigFreeSlot, FigHeal, FigTry, FigLeaderless}

// Figure is one liveness figure in one phase and window, in milliseconds.
type Figure struct {
	Name    string  `json:"name"`
	Phase   string  `json:"phase"`  // "main" or "load"
	Window  string  `json:"window"` // "quiet", "faults", "diverged" or "zk-slow"
	N       int     `json:"n"`
	P50MS   float64 `json:"p50_ms"`
	P99MS   float64 `json:"p99_ms"`
	MaxMS   float64 `json:"max_ms"`
	LimitMS float64 `json:"limit_ms,omitempty"` // the target, 0 if none
	Over    int     `json:"over"`               // samples over the target
	Worst   string  `json:"worst,omitempty"`    // the largest sample
	// OverSamples are the samples over the target, the first
	// maxOverSamples of them in the order the checker met them: when each
	// began and ended, to lay beside what else happened then.
	OverSamples []OverSample `json:"over_samples,omitempty"`
	values      []float64
	worstAt     int64
	from        int64
	// firstOver is when the earliest sample over the target ended: the
	// history shows the target missed from then on.
	firstOver int64
	res       string
	cutoff    int64 // samples ending after it are left out (wind-down)
}

func (f *Figure) add(ms float64, what string, from, to int64, res string) {
	if f.cutoff != 0 && to > f.cutoff {
		return // the campaign was stopping its workers
	}
	f.values = append(f.values, ms)
	if ms >= f.MaxMS {
		f.MaxMS, f.Worst, f.worstAt, f.from, f.res = ms, what, to, from, res
	}
	if f.LimitMS > 0 && ms > f.LimitMS {
		f.Over++
		if f.firstOver == 0 || to < f.firstOver {
			f.firstOver = to
		}
		if len(f.OverSamples) < maxOverSamples {
			f.OverSamples = append(f.OverSamples, OverSample{From: from, To: to, MS: ms, What: what})
		}
	}
}

// maxOverSamples bounds Figure.OverSamples.
const maxOverSamples = 100

// OverSample is one sample of a Figure over its target.
type OverSample struct {
	From int64   `json:"from"` // Unix nanoseconds
	To   int64   `json:"to"`
	MS   float64 `json:"ms"`
	What string  `json:"what"`
	// ZK is the slowest request of any member while the sample ran
	// (EvServerSlow), "" if none took slowMin.
	ZK string `json:"zk,omitempty"`
}

func (f *Figure) finish() {
	f.N = len(f.values)
	if f.N == 0 {
		return
	}
	slices.Sort(f.values)
	f.P50MS, f.P99MS = percentile(f.values, 50), percentile(f.values, 99)
}

// percentile returns the p-th percentile of sorted values (not empty): the
// value at rank n*p/100, the last for p = 100.
func percentile(sorted []float64, p int) float64 {
	return sorted[min(len(sorted)-1, len(sorted)*p/100)]
}

// figures collects the samples of one checker run.
type figures struct {
	c  *checker
	by map[[3]string]*Figure
}

func (fs *figures) get(name, phase, window string) *Figure {
	k := [3]string{name, phase, window}
	f := fs.by[k]
	if f == nil {
		f = &Figure{Name: name, Phase: phase, Window: window, LimitMS: fs.limit(name, window), cutoff: fs.c.windDown}
		fs.by[k] = f
	}
	return f
}

// limit returns a figure's target in ms, 0 where it has none.
func (fs *figures) limit(name, window string) float64 {
	p := fs.c.p
	ms := func(d time.Duration) float64 { return float64(d) / 1e6 }
	switch {
	case name == FigTry:
		return ms(p.TryBound)
	case window != "quiet":
		return 0
	case name == FigHandOff, name == FigFreeSlot:
		return ms(p.SlotBound)
	case name == FigHeal:
		return ms(p.SessionTimeout)
	case name == FigLeaderless:
		return ms(zklock.LeaderGapBound(p.SessionTimeout, p.TickTime, true))
	}
	return 0
}

func (c *checker) phase(t int64) string {
	to := c.loadTo
	if c.loadStop != 0 {
		to = c.loadStop
	}
	if c.loadFrom != 0 && t >= c.loadFrom && (to == 0 || t <= to) {
		return "load"
	}
	return "main"
}

func window(faulty bool) string {
	if faulty {
		return "faults"
	}
	return "quiet"
}

// queueWindow is the window of a sample of queue res from from to to,
// with procs involved and waiters of them waiting: "faults" if a fault was
// felt, "diverged" if the divergence of a member serving a waiter was
// (divergedFor), "zk-slow" if a member serving one of procs held a request
// stallMin or more meanwhile (slowFor), "quiet" otherwise.
func (c *checker) queueWindow(fw *faultWindows, res string, procs, waiters []int, from, to int64) string {
	switch {
	case fw.felt(res, procs, from, to):
		return "faults"
	case c.divergedFor(res, waiters, from, to):
		return "diverged"
	case c.slowFor(procs, from, to):
		return "zk-slow"
	}
	return "quiet"
}

// slowFor reports whether, between from and to, a member serving one of
// procs held a request stallMin or more (mntr's zk_max_latency, or the mntr
// itself, over one latencyTick: EvServerSlow). To its clients such a
// member is stopped for that long, as a JVM stop of stallMin is, whatever
// held it (the kernel, its request queue, the leader behind it); and a
// hand-off waits on its waiter's member for at least two requests in
// sequence (the notification of the delete, the listing; a sync first when
// the proof is old). A stop the JVM logs is felt by everyone for a session
// timeout after it (faultWindows); a slow member only by the samples it
// overlaps whose processes it served. In the long runs of 28 November
// every load-phase hand-off over a second overlapped a member answering
// in 203 to 716 ms with up to 506 requests outstanding, and no process
// stopped.
func (c *checker) slowFor(procs []int, from, to int64) bool {
	for _, p := range procs {
		sv := c.serverOf(p, from)
		if sv == 0 {
			continue
		}
		on := c.slowOn[sv]
		i := sort.Search(len(on), func(i int) bool { return on[i].End >= from })
		for ; i < len(on) && on[i].T <= to+int64(time.Minute); i++ {
			if on[i].T-on[i].Latency*int64(time.Millisecond) <= to {
				return true
			}
		}
	}
	return false
}

// divergedFor reports whether, between from and to, queue res held a node
// the ensemble's members disagreed on (c.disputed: listed by some members,
// left out of another's synced listing) that a member serving one of procs
// listed. To a waiter on that member the node is ahead in the queue and
// never goes (no delete of it is ever committed), so the waiter waits until
// its context ends, or its member syncs again, and everyone behind its
// node with it: the long run of 28 November (ZooKeeper store) had zk1 list
// rw-0's __WRIT__0000005552 for 88 s, which no other member had, and
// rw-0's hand-offs wait 3.1 s while proc 71's writer on zk1 headed the
// queue, until its acquire timed out. A ZooKeeper fault: no client sees
// the node is not the ensemble's (a duplicate sequence number aside, which
// zklock refuses to grant on).
func (c *checker) divergedFor(res string, procs []int, from, to int64) bool {
	for _, n := range c.disputedIn[res] {
		if n.seen > to || n.to < from {
			continue
		}
		for _, p := range procs {
			if sv := c.serverOf(p, from); sv > 0 && n.members&(1<<(sv&31)) != 0 {
				return true
			}
		}
	}
	return false
}

// serverOf returns the member proc's last report at or before t named,
// 0 if none.
func (c *checker) serverOf(proc int, t int64) int {
	on := c.onServer[proc]
	i := sort.Search(len(on), func(i int) bool { return on[i].t > t })
	if i == 0 {
		return 0
	}
	return on[i-1].server
}

// indexServers fills c.onServer, the members each process's reports
// named, in time order, c.slowOn, each member's slow samples of stallMin
// or more, and c.disputedIn, the disputed nodes by queue.
func (c *checker) indexServers() {
	c.onServer = map[int][]serverAt{}
	for _, e := range c.evs {
		if e.Proc != 0 && e.Server != 0 {
			c.onServer[e.Proc] = append(c.onServer[e.Proc], serverAt{e.T, e.Server})
		}
	}
	for _, on := range c.onServer {
		slices.SortStableFunc(on, func(a, b serverAt) int { return cmp.Compare(a.t, b.t) })
	}
	c.slowOn = map[int][]Event{}
	for _, e := range c.slow {
		if time.Duration(e.Latency)*time.Millisecond >= stallMin {
			c.slowOn[e.Server] = append(c.slowOn[e.Server], e)
		}
	}
	for _, on := range c.slowOn {
		slices.SortStableFunc(on, func(a, b Event) int { return cmp.Compare(a.End, b.End) })
	}
	c.disputedIn = map[string][]*nodeSpan{}
	for _, n := range c.spans {
		if c.disputed[n.path] {
			q := path.Base(path.Dir(n.path))
			c.disputedIn[q] = append(c.disputedIn[q], n)
		}
	}
}

// checkLiveness measures the liveness figures and fails the campaign on
// each figure that missed its target.
func (c *checker) checkLiveness() {
	if c.p.SessionTimeout <= 0 {
		return
	}
	fs := &figures{c: c, by: map[[3]string]*Figure{}}
	fw := c.faultWindows(nil)
	c.indexServers()
	attemptsByRes := map[string][]*attemptRec{}
	for _, a := range c.attempts {
		for _, r := range strings.Split(a.key.res, ",") {
			attemptsByRes[r] = append(attemptsByRes[r], a)
		}
	}
	byAcq := map[string][]*leaseRec{}
	for res, ls := range c.byRes {
		s := slices.Clone(ls)
		slices.SortFunc(s, func(a, b *leaseRec) int { return cmp.Compare(a.acquired, b.acquired) })
		byAcq[res] = s
	}
	c.handOffs(fs, fw, attemptsByRes, byAcq)
	c.freeSlots(fs, fw, attemptsByRes, byAcq)
	c.heals(fs)
	c.tries(fs, fw)
	c.leaderless(fs, attemptsByRes, byAcq)

	for _, name := range AllFigures {
		for _, phase := range []string{"main", "load"} {
			for _, w := range []string{"quiet", "faults", "diverged", "zk-slow"} {
				f := fs.by[[3]string{name, phase, w}]
				if f == nil {
					continue
				}
				f.finish()
				if f.N == 0 {
					continue
				}
				for i := range f.OverSamples {
					f.OverSamples[i].ZK = c.slowest(f.OverSamples[i].From, f.OverSamples[i].To)
				}
				c.rep.Liveness = append(c.rep.Liveness, f)
				if f.LimitMS > 0 && f.MaxMS > f.LimitMS {
					c.violation(VLiveness, f.res, fmt.Sprintf("%s (%s phase, %s): %d of %d samples over %.0f ms, max %.0f ms: %s",
						name, phase, w, f.Over, f.N, f.LimitMS, f.MaxMS, f.Worst), f.from, f.worstAt)
					c.rep.Violations[len(c.rep.Violations)-1].At = f.firstOver // the slice shows the worst sample
				}
			}
		}
	}
}

// pendingAt returns the non-try attempts on res waiting at t (begun
// before, not returned by then), other than skip's.
func pendingAt(as []*attemptRec, t int64, skip leaseKey) []*attemptRec {
	var out []*attemptRec
	for _, a := range as {
		if a.start < t && (a.end == 0 || a.end > t) && a.detail != "try" && a.key != skip {
			out = append(out, a)
		}
	}
	return out
}

func procsOf(as []*attemptRec, more ...int) []int {
	out := slices.Clone(more)
	for _, a := range as {
		out = append(out, a.key.proc)
	}
	return out
}

// nextAfter returns the first lease of ls (sorted by acquire) acquired
// after t, other than skip.
func nextAfter(ls []*leaseRec, t int64, skip *leaseRec) *leaseRec {
	i := sort.Search(len(ls), func(i int) bool { return ls[i].acquired > t })
	for ; i < len(ls); i++ {
		if ls[i] != skip {
			return ls[i]
		}
	}
	return nil
}

// handOffs measures FigHandOff: every confirmed release with a waiter
// waiting (for a read/write lock, one that left it free), from its
// Release call to the next acquire. Multi-resource leases are left out: a waiter of theirs may wait
// for another part.
func (c *checker) handOffs(fs *figures, fw *faultWindows, attempts map[string][]*attemptRec, byAcq map[string][]*leaseRec) {
	for res, ls := range byAcq {
		kind := c.kindOf(res)
		for _, a := range ls {
			if a.mode == ModeMulti || a.released != "ok" || a.release == 0 || (a.lost != 0 && a.lost < a.release) {
				continue
			}
			// From the Release call: the lane reports its release first
			// and waits for the hub, holding the lock meanwhile.
			R := max(a.release, a.releaseCalled)
			waiting := pendingAt(attempts[res], R, leaseKey{a.key.proc, a.key.op, a.key.res})
			if len(waiting) == 0 {
				continue
			}
			if kind == "rw" && c.heldAt(ls, R, a) {
				continue
			}
			b := nextAfter(ls, R, a)
			if b == nil {
				continue
			}
			procs := procsOf(waiting, a.key.proc, b.key.proc)
			f := fs.get(FigHandOff, c.phase(R), c.queueWindow(fw, res, procs, procsOf(waiting), R, b.acquired))
			f.add(float64(b.acquired-R)/1e6, fmt.Sprintf("%s: %v released at %s, %v acquired at %s (%d waiting)",
				res, a.key, clock(R), b.key, clock(b.acquired), len(waiting)), R, b.acquired, res)
		}
	}
}

// heldAt reports whether a lease of ls other than skip was held at t.
func (c *checker) heldAt(ls []*leaseRec, t int64, skip *leaseRec) bool {
	for _, l := range ls {
		if l == skip || l.acquired > t {
			continue
		}
		if end, _ := l.end(); end == 0 || end > t {
			return true
		}
	}
	return false
}

// freeSlots measures FigFreeSlot by sweeping each resource's holders and
// waiters over time. A holder's slot is free once its release is
// confirmed; a lease lost or whose holder died is taken to hold its slot
// until the next acquire (its node may linger until its session expires).
// Each slot is timed on its own: a slot is unclaimed from when it was free
// with a waiter waiting until the sweep counts one claim fewer (an
// acquire took a slot, or a waiter stopped waiting), the longest-free
// slot first. A semaphore whose holders come and go can have some slot
// free for seconds while each free slot is taken within a hand-off: the
// long run of 28 November had sem-1 two of three held for 2 s, through
// five releases and five acquires none of which took over 650 ms.
func (c *checker) freeSlots(fs *figures, fw *faultWindows, attempts map[string][]*attemptRec, byAcq map[string][]*leaseRec) {
	type step struct {
		t      int64
		dh, dw int
	}
	for res, ls := range byAcq {
		kind := c.kindOf(res)
		if len(ls) == 0 || ls[0].mode == ModeMulti {
			continue
		}
		capacity := 1
		if kind == "sem" {
			capacity = max(ls[0].limit, 1)
		}
		var steps []step
		for _, l := range ls {
			steps = append(steps, step{t: l.acquired, dh: 1})
			free := l.releasedAt
			if l.released != "ok" && l.released != "downgraded" || free == 0 {
				end, _ := l.end()
				if n := nextAfter(ls, max(end, l.acquired), l); n != nil && end != 0 {
					free = n.acquired
				} else {
					free = 0
				}
			}
			if free != 0 {
				steps = append(steps, step{t: free, dh: -1})
			}
		}
		for _, a := range attempts[res] {
			if a.detail == "try" {
				continue
			}
			steps = append(steps, step{t: a.start, dw: 1})
			if a.end != 0 {
				steps = append(steps, step{t: a.end, dw: -1})
			}
		}
		// At one instant, apply acquires (holder up, waiter down) before
		// frees, so that a hand-off at the same nanosecond is no gap.
		slices.SortFunc(steps, func(a, b step) int {
			return cmp.Or(cmp.Compare(a.t, b.t), cmp.Compare(b.dh, a.dh))
		})
		held, waiting := 0, 0
		var unclaimed []int64 // since when each slot a waiter could claim has been free, oldest first
		for _, s := range steps {
			held += s.dh
			waiting += s.dw
			claimable := max(min(capacity-held, waiting), 0)
			for len(unclaimed) > claimable {
				since := unclaimed[0]
				unclaimed = unclaimed[1:]
				if s.t > since {
					procs := procsOf(pendingAt(attempts[res], since, leaseKey{}))
					f := fs.get(FigFreeSlot, c.phase(since), c.queueWindow(fw, res, procs, procs, since, s.t))
					f.add(float64(s.t-since)/1e6, fmt.Sprintf("%s: a slot of %d free, a waiter waiting, from %s to %s",
						res, capacity, clock(since), clock(s.t)), since, s.t, res)
				}
			}
			for len(unclaimed) < claimable {
				unclaimed = append(unclaimed, s.t)
			}
		}
	}
}

// heals measures FigHeal: from each fault's end to the first answer
// (a grant, or a try told locked) of every worker slot it hit (process
// faults: its own slot, a respawned worker included; an isolated
// follower: the slots whose session was on it when it was cut off, and
// the stuck; the other server faults: every slot). A worker served again
// waits on whatever holders its next acquires meet: its first grant after
// the heal measured that contention, not the recovery (isolate-leader#477
// of 28 November: slot 4 was answered 21 ms after the heal, and granted
// 3,786 ms later, on an election it queued for behind a leader). So does
// a worker an isolated follower did not serve (isolate-follower#156 of 28
// November, afternoon: slot 3, on the leader throughout, was waiting in
// four queues behind their holders and answered 3,527 ms after the heal).
func (c *checker) heals(fs *figures) {
	acqBySlot := map[int][]int64{}
	procSlot := map[int]int{}
	for _, e := range c.evs {
		if e.Slot != 0 {
			procSlot[e.Proc] = e.Slot
		}
		if e.Detail == "load" {
			continue
		}
		if e.Kind == EvAcquired || e.Kind == EvAcquireFailed && e.Outcome == "locked" {
			acqBySlot[e.Slot] = append(acqBySlot[e.Slot], e.T)
		}
	}
	for _, ts := range acqBySlot {
		slices.Sort(ts) // reports come in the hub's order
	}
	var slots []int
	for s := range acqBySlot {
		slots = append(slots, s)
	}
	slices.Sort(slots)
	for _, f := range c.faults {
		if f.kind == FaultOpDelete || f.end == 0 || f.end >= c.lastT {
			continue
		}
		hit := slots
		switch {
		case !f.kind.Server():
			hit = []int{procSlot[f.proc]}
		case f.kind == FaultIsolateFollower:
			hit = followerSlots(f, procSlot, c.onServer)
		}
		var worst int64
		worstSlot := 0
		for _, s := range hit {
			ts := acqBySlot[s]
			i := sort.Search(len(ts), func(i int) bool { return ts[i] > f.end })
			if i == len(ts) {
				continue
			}
			if d := ts[i] - f.end; d > worst {
				worst, worstSlot = d, s
			}
		}
		if worstSlot == 0 {
			continue
		}
		others := c.faultWindows(f)
		var procs []int
		for p, s := range procSlot {
			if slices.Contains(hit, s) {
				procs = append(procs, p)
			}
		}
		fig := fs.get(FigHeal, c.phase(f.end), window(others.felt("", procs, f.end, f.end+worst)))
		fig.add(float64(worst)/1e6, fmt.Sprintf("%s#%d healed at %s: slot %d answered %.0f ms later", f.kind, f.id, clock(f.end), worstSlot,
			float64(worst)/1e6), f.end, f.end+worst, "")
	}
}

// serverAt is the member a worker's report named at t.
type serverAt struct {
	t      int64
	server int // 1-based
}

// followerSlots returns the slots an isolated follower cut off: those of
// the processes whose last report before the cut named a cut server, and
// of the stuck. onServer's lists are in time order.
func followerSlots(f *faultRec, procSlot map[int]int, onServer map[int][]serverAt) []int {
	var hit []int
	for p, s := range procSlot {
		on := onServer[p]
		i := sort.Search(len(on), func(i int) bool { return on[i].t >= f.start })
		if slices.Contains(f.stuck, p) || i > 0 && slices.Contains(f.cut, on[i-1].server) {
			if !slices.Contains(hit, s) {
				hit = append(hit, s)
			}
		}
	}
	slices.Sort(hit)
	return hit
}

// tries measures FigTry: every try-acquire's answer, except a paused
// process's.
func (c *checker) tries(fs *figures, fw *faultWindows) {
	for _, a := range c.attempts {
		if a.detail != "try" || a.end == 0 || a.outcome == "died" {
			continue
		}
		began := cmp.Or(a.began, a.start)
		if c.pausedDuring(a.key.proc, began, a.end) {
			continue
		}
		f := fs.get(FigTry, c.phase(began), window(fw.felt(a.key.res, []int{a.key.proc}, began, a.end)))
		f.add(float64(a.end-began)/1e6, fmt.Sprintf("%s: %v tried at %s, answered %s at %s", a.key.res, a.key, clock(began), a.outcome, clock(a.end)),
			began, a.end, a.key.res)
	}
}

// leaderless measures FigLeaderless: for every leader lost or killed
// (not resigned) with a candidate waiting, from its death (the start of
// the fault that ended it, or the end itself) to the next leader.
func (c *checker) leaderless(fs *figures, attempts map[string][]*attemptRec, byAcq map[string][]*leaseRec) {
	for res, ls := range byAcq {
		for _, l := range ls {
			if l.mode != ModeElection {
				continue
			}
			end, how := l.end()
			if end == 0 || how == "release" {
				continue
			}
			death, cause := end, c.causeOf(l, end)
			if cause != nil {
				death = max(min(cause.start, end), l.acquired)
			}
			if len(pendingAt(attempts[res], death, l.key)) == 0 {
				continue
			}
			b := nextAfter(ls, death, l)
			if b == nil {
				continue
			}
			// A leader ended by a fault of the ensemble waits for the
			// ensemble too: that gap is measured as during faults. The
			// target is for deaths of the leader's own (killed, paused,
			// cut off, its node deleted).
			except := cause
			if cause != nil && cause.kind.Server() {
				except = nil
			}
			others := c.faultWindows(except)
			var procs []int
			for _, a := range pendingAt(attempts[res], death, l.key) {
				procs = append(procs, a.key.proc)
			}
			what := "death"
			if cause != nil {
				what = fmt.Sprintf("%s#%d", cause.kind, cause.id)
			}
			f := fs.get(FigLeaderless, c.phase(death), window(others.felt("", procs, death, b.acquired)))
			f.add(float64(b.acquired-death)/1e6, fmt.Sprintf("%s: leader %v (%s) ended by %s at %s, %v led at %s", res, l.key, how, what,
				clock(death), b.key, clock(b.acquired)), death, b.acquired, res)
		}
	}
}

// causeOf returns the fault that ended l at end: the operator's delete of
// its node, else the latest fault on its process or of the ensemble that
// began while it held and ended at most two session timeouts before end.
func (c *checker) causeOf(l *leaseRec, end int64) *faultRec {
	if f := c.deletedBy(l, end); f != nil {
		return f
	}
	var best *faultRec
	slack := 2 * int64(c.p.SessionTimeout)
	for _, f := range c.faults {
		if f.start < l.acquired || f.start > end || f.end+slack < end {
			continue
		}
		if (f.proc == l.key.proc && f.kind != FaultOpDelete) || f.kind.Server() || slices.Contains(f.stuck, l.key.proc) {
			if best == nil || f.start > best.start {
				best = f
			}
		}
	}
	return best
}

// slowest describes the slowest request any member reported that could
// have run during [from, to]: a sample from T to End whose longest
// request took Latency ran within [T-Latency, End].
func (c *checker) slowest(from, to int64) string {
	var worst *Event
	for i := range c.slow {
		e := &c.slow[i]
		if e.End < from || e.T-e.Latency*int64(time.Millisecond) > to {
			continue
		}
		if worst == nil || e.Latency > worst.Latency {
			worst = e
		}
	}
	if worst == nil {
		return ""
	}
	return fmt.Sprintf("zk%d %d ms (%d outstanding) in %s-%s", worst.Server, worst.Latency, worst.Outstanding,
		time.Unix(0, worst.T).Format("15:04:05.000"), time.Unix(0, worst.End).Format("15:04:05.000"))
}
