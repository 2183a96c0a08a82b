package chaos

import (
	"cmp"
	"path"
	"slices"
	"sort"
	"strings"
)

// interval is a stretch of time.
type interval struct{ from, to int64 }

// windows is a sorted list of disjoint intervals.
type windows []interval

func mergeWindows(in []interval) windows {
	slices.SortFunc(in, func(a, b interval) int { return cmp.Compare(a.from, b.from) })
	var out windows
	for _, iv := range in {
		if n := len(out); n > 0 && iv.from <= out[n-1].to {
			out[n-1].to = max(out[n-1].to, iv.to)
			continue
		}
		out = append(out, iv)
	}
	return out
}

// overlaps reports whether [from, to] meets a window.
func (w windows) overlaps(from, to int64) bool {
	i := sort.Search(len(w), func(i int) bool { return w[i].to >= from })
	return i < len(w) && w[i].from <= to
}

// faultWindows tells which faults could slow what: a fault is felt from
// its start to a session timeout after its end (a session cut off may
// expire then; a member's JVM stop leaves a backlog that a saturated
// ensemble drains for seconds, see stall.go). Server faults, partitions
// and the stops of the campaign and of the members touch everyone; an
// operator's delete touches its queue; a process fault, or a worker's
// stall (see stall.go), touches its process and every queue the process
// had a node in meanwhile.
type faultWindows struct {
	global windows
	proc   map[int]windows
	res    map[string]windows
}

func (c *checker) faultWindows(except *faultRec) *faultWindows {
	if c.touched == nil {
		c.touched = c.touchedResources()
	}
	settle := int64(c.p.SessionTimeout)
	var global []interval
	proc := map[int][]interval{}
	res := map[string][]interval{}
	for _, f := range slices.Concat(c.faults, c.stalls) {
		if f == except {
			continue
		}
		iv := interval{f.start, f.end + settle}
		switch {
		case f.kind.Server(), f.stall && f.proc == 0:
			global = append(global, iv)
		case f.kind == FaultOpDelete:
			res[f.resource] = append(res[f.resource], iv)
		default:
			proc[f.proc] = append(proc[f.proc], iv)
			for _, r := range c.touched[f] {
				res[r] = append(res[r], iv)
			}
		}
	}
	fw := &faultWindows{global: mergeWindows(global), proc: map[int]windows{}, res: map[string]windows{}}
	for p, ivs := range proc {
		fw.proc[p] = mergeWindows(ivs)
	}
	for r, ivs := range res {
		fw.res[r] = mergeWindows(ivs)
	}
	return fw
}

// touchedResources returns, for each process fault, the resources its
// process had a node in (waiting or holding) while the fault was felt.
func (c *checker) touchedResources() map[*faultRec][]string {
	settle := int64(c.p.SessionTimeout)
	type acts struct {
		ivs    []interval
		maxTo  []int64 // prefix maximum of ivs[i].to
		sorted bool
	}
	act := map[int]map[string]*acts{}
	note := func(proc int, res string, from, to int64) {
		if act[proc] == nil {
			act[proc] = map[string]*acts{}
		}
		for _, r := range strings.Split(res, ",") {
			a := act[proc][r]
			if a == nil {
				a = &acts{}
				act[proc][r] = a
			}
			a.ivs = append(a.ivs, interval{from, to})
		}
	}
	for _, a := range c.attempts {
		note(a.key.proc, a.key.res, a.start, cmp.Or(a.end, c.lastT))
	}
	for _, l := range c.leases {
		end, _ := l.end()
		note(l.key.proc, l.resource, l.acquired, cmp.Or(end, c.lastT))
	}
	// A node outlives its acquire when the acquire gives up and its delete
	// is slow (Client.Deleting): the process's own reports of its nodes.
	for _, e := range c.evs {
		if e.Kind != EvLocal {
			continue
		}
		for _, n := range e.Nodes {
			note(e.Proc, path.Base(path.Dir(n)), e.T, e.T)
		}
	}
	out := map[*faultRec][]string{}
	for _, f := range slices.Concat(c.faults, c.stalls) {
		if f.kind.Server() || f.kind == FaultOpDelete || f.proc == 0 {
			continue
		}
		from, to := f.start, f.end+settle
		for r, a := range act[f.proc] {
			if !a.sorted {
				slices.SortFunc(a.ivs, func(x, y interval) int { return cmp.Compare(x.from, y.from) })
				a.maxTo = make([]int64, len(a.ivs))
				for i, iv := range a.ivs {
					a.maxTo[i] = iv.to
					if i > 0 {
						a.maxTo[i] = max(a.maxTo[i], a.maxTo[i-1])
					}
				}
				a.sorted = true
			}
			i := sort.Search(len(a.ivs), func(i int) bool { return a.ivs[i].from > to }) - 1
			if i >= 0 && a.maxTo[i] >= from {
				out[f] = append(out[f], r)
			}
		}
	}
	return out
}

// felt reports whether a fault could have slowed something on resource
// res (or, with res "", anything) involving procs during [from, to].
func (fw *faultWindows) felt(res string, procs []int, from, to int64) bool {
	if fw.global.overlaps(from, to) {
		return true
	}
	for _, r := range strings.Split(res, ",") {
		if r != "" && fw.res[r].overlaps(from, to) {
			return true
		}
	}
	for _, p := range procs {
		if fw.proc[p].overlaps(from, to) {
			return true
		}
	}
	return false
}
