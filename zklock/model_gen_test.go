package zklock_test

import (
	"math/rand/v2"
	"slices"

	"github.com/zklockkit/zklockkit/zklock"
)

// modelSetup is what a sequence runs on: resources of the read/write
// family (exclusive, write and read acquires) and of the semaphore family
// (one limit for the whole sequence; now and then acquired in a mode of
// the other family), and the clients.
type modelSetup struct {
	rw      []string
	sema    []string
	limit   int
	clients int
}

func (s modelSetup) resources() []string { return append(slices.Clone(s.rw), s.sema...) }

func (s modelSetup) limits() map[string]int {
	l := map[string]int{}
	for _, r := range s.sema {
		l[r] = s.limit
	}
	return l
}

// newModelFor returns an empty model of setup.
func newModelFor(setup modelSetup) *model { return newModel(setup.resources(), setup.limits()) }

// generate makes a sequence of n steps from seed. It chooses each
// step from the state of a model that has no system to learn from (dry),
// so the sequence depends on the seed alone; nodes made together are taken
// in the order the model made them.
func generate(seed uint64, n int) (modelSetup, []step) {
	rnd := rand.New(rand.NewPCG(seed, 0x6d6f64656c))
	setup := modelSetup{rw: []string{"a", "b", "c"}, sema: []string{"s", "t"}, limit: 1 + int(seed%3), clients: 3}
	// div draws from a stream of its own, so that marking acquires as
	// diverged leaves every other choice of a seed as it was.
	div := rand.New(rand.NewPCG(seed, 0x64697665726765))
	g := &generator{rnd: rnd, div: div, setup: setup, m: newModelFor(setup)}
	g.m.dry = true
	for len(g.steps) < n {
		g.add(g.pick())
	}
	return setup, g.steps
}

type generator struct {
	rnd    *rand.Rand
	div    *rand.Rand // which acquires read diverged listings
	setup  modelSetup
	m      *model
	steps  []step
	nextOp int
}

// modelMaxLive bounds the acquires waiting or holding at once.
const modelMaxLive = 7

func (g *generator) add(s step) {
	if _, ok := g.m.apply(s, len(g.steps)); ok {
		g.steps = append(g.steps, s)
	}
}

func (g *generator) op() int { g.nextOp++; return g.nextOp }

// drainStep returns the next step that drains m (cancel a waiter,
// release a lease), or false when nothing waits or holds. The runner
// drains its own model: a sequence may reach another state on one system
// than on the generator's dry model.
func drainStep(m *model) (step, bool) {
	for _, x := range m.ops {
		if x.status == opWaiting {
			return step{kind: stCancel, op: x.id}, true
		}
	}
	for _, x := range m.ops {
		if x.status == opHeld && !x.objReleased && x.lease.end == leaseLive {
			return step{kind: stRelease, op: x.id}, true
		}
	}
	return step{}, false
}

// request picks resources and a mode.
func (g *generator) request() ([]string, zklock.Mode, int) {
	pickSet := func(from []string) []string {
		k := 1
		if g.rnd.IntN(10) < 3 {
			k = 2 + g.rnd.IntN(len(from)-1)
		}
		set := slices.Clone(from)
		g.rnd.Shuffle(len(set), func(i, j int) { set[i], set[j] = set[j], set[i] })
		set = set[:k]
		slices.Sort(set)
		return set
	}
	modes := []zklock.Mode{zklock.Exclusive, zklock.Write, zklock.Read, zklock.Read}
	if g.rnd.IntN(10) < 6 {
		return pickSet(g.setup.rw), modes[g.rnd.IntN(len(modes))], 0
	}
	set := pickSet(g.setup.sema)
	if g.rnd.IntN(8) == 0 {
		// Now and then a semaphore's resource in another mode: it
		// excludes the semaphore's holders and waiters, and they it.
		return set, modes[g.rnd.IntN(len(modes))], 0
	}
	return set, zklock.Semaphore, g.setup.limit
}

type weighted struct {
	w    int
	make func() (step, bool)
}

func (g *generator) pick() step {
	m := g.m
	var waiting, held, spent []*mop
	live := 0
	for _, x := range m.ops {
		switch {
		case x.status == opWaiting:
			waiting = append(waiting, x)
			live++
		case x.status == opHeld && !x.objReleased && x.lease.end == leaseLive:
			held = append(held, x)
			live++
		case x.status == opHeld:
			spent = append(spent, x)
		}
	}
	var holderNodes, waiterNodes []*mnode
	for _, r := range m.resources() {
		for _, n := range m.queues[r] {
			switch {
			case !n.known:
			case m.leaseOf(n) != nil:
				holderNodes = append(holderNodes, n)
			default:
				waiterNodes = append(waiterNodes, n)
			}
		}
	}
	acquire := func(kind stepKind) func() (step, bool) {
		return func() (step, bool) {
			for range 5 {
				res, mode, limit := g.request()
				s := step{kind: kind, client: g.rnd.IntN(g.setup.clients), res: res, mode: mode, limit: limit}
				switch kind {
				case stMaxWait, stDeadline:
					if m.wouldHold(res, mode) {
						continue // only a busy resource makes it wait
					}
					s.wait = modelWaitLimit
				}
				s.newOp = g.op()
				// One in modelDivergeOneIn acquires of a busy
				// resource reads a diverged server's listings: with
				// nodes ahead, a waiter that trusted one would hold.
				s.diverge = kind == stAcquire && len(res) == 1 && !m.wouldHold(res, mode) && g.div.IntN(modelDivergeOneIn) == 0
				return s, true
			}
			return step{}, false
		}
	}
	one := func(xs []*mop) *mop { return xs[g.rnd.IntN(len(xs))] }
	var choices []weighted
	if live < modelMaxLive {
		choices = append(choices,
			weighted{30, acquire(stAcquire)},
			weighted{10, acquire(stTry)},
			weighted{4, acquire(stMaxWait)},
			weighted{2, acquire(stDeadline)},
			weighted{1, func() (step, bool) {
				res, mode, limit := g.request()
				return step{kind: stTryMaxWait, client: g.rnd.IntN(g.setup.clients), res: res, mode: mode, limit: limit, newOp: g.op()}, true
			}},
		)
	}
	if len(waiting) > 0 {
		choices = append(choices, weighted{6, func() (step, bool) { return step{kind: stCancel, op: one(waiting).id}, true }})
	}
	if len(held) > 0 {
		choices = append(choices,
			weighted{30, func() (step, bool) { return step{kind: stRelease, op: one(held).id}, true }},
			weighted{6, func() (step, bool) { return step{kind: stDowngrade, op: one(held).id, newOp: g.op()}, true }},
		)
		if live < modelMaxLive {
			choices = append(choices, weighted{10, func() (step, bool) { return g.reenter(one(held)) }})
		}
	}
	if len(spent) > 0 {
		choices = append(choices, weighted{2, func() (step, bool) { return step{kind: stRelease, op: one(spent).id}, true }})
	}
	deleteOf := func(ns []*mnode) func() (step, bool) {
		return func() (step, bool) {
			n := ns[g.rnd.IntN(len(ns))]
			return step{kind: stDelete, op: n.op.id, res: []string{n.res}}, true
		}
	}
	if len(holderNodes) > 0 {
		choices = append(choices, weighted{5, deleteOf(holderNodes)})
	}
	if len(waiterNodes) > 0 {
		choices = append(choices, weighted{7, deleteOf(waiterNodes)})
	}
	if nodes := slices.Concat(holderNodes, waiterNodes); len(nodes) > 0 {
		choices = append(choices, weighted{4, func() (step, bool) {
			s, _ := deleteOf(nodes)()
			s.kind, s.client = stDrop, g.rnd.IntN(g.setup.clients)
			return s, true
		}})
	}
	if live > 0 {
		choices = append(choices, weighted{3, func() (step, bool) {
			return step{kind: stExpire, client: g.rnd.IntN(g.setup.clients)}, true
		}})
	}
	for _, r := range g.setup.sema {
		if m.limitLive(r) {
			choices = append(choices, weighted{2, func() (step, bool) {
				other := 1 + (g.setup.limit+g.rnd.IntN(2))%3 // one of the two other limits in 1..3
				return step{kind: stMismatch, client: g.rnd.IntN(g.setup.clients), res: []string{r},
					mode: zklock.Semaphore, limit: other, newOp: g.op()}, true
			}})
			break
		}
	}
	total := 0
	for _, c := range choices {
		total += c.w
	}
	for {
		k := g.rnd.IntN(total)
		for _, c := range choices {
			if k < c.w {
				if s, ok := c.make(); ok {
					return s
				}
				break
			}
			k -= c.w
		}
	}
}

// reenter makes an acquire under p's lease context: of resources the lease
// holds (re-entry), of some it holds and some it does not (partial
// re-entry), or as a semaphore (another slot).
func (g *generator) reenter(p *mop) (step, bool) {
	l := p.lease
	if l.parent != nil {
		return step{}, false
	}
	s := step{kind: stReenter, client: p.client, op: p.id, newOp: g.op()}
	if l.mode == zklock.Semaphore {
		s.res, s.mode, s.limit = slices.Clone(l.res), zklock.Semaphore, g.setup.limit
		if g.rnd.IntN(2) == 0 {
			s.res = s.res[:1]
		}
		s.try = !g.m.wouldHold(s.res, s.mode)
		return s, true
	}
	switch g.rnd.IntN(10) {
	case 0, 1, 2, 3, 4: // some of what it holds
		s.res = slices.Clone(l.res)
		if len(s.res) > 1 && g.rnd.IntN(2) == 0 {
			s.res = s.res[:1+g.rnd.IntN(len(s.res)-1)]
		}
	default: // what it holds and more
		var others []string
		for _, r := range g.setup.rw {
			if !slices.Contains(l.res, r) {
				others = append(others, r)
			}
		}
		if len(others) == 0 {
			return step{}, false
		}
		s.res = append([]string{l.res[g.rnd.IntN(len(l.res))]}, others[g.rnd.IntN(len(others))])
		slices.Sort(s.res)
	}
	s.mode = l.mode
	switch r := g.rnd.IntN(10); {
	case r < 4:
		s.mode = zklock.Read
	case r < 6 && l.mode == zklock.Read:
		s.mode = zklock.Write // refused: ErrUpgrade
	}
	return s, true
}
