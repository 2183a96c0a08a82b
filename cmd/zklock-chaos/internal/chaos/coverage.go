package chaos

import (
	"fmt"
	"slices"
)

// checkCoverage adds to the missed targets what the recipe lanes did not
// cover: every recipe must have granted leases and had faults aimed at its
// holders at least ServerFaultsPerKind times, and a load phase must have
// reached its sessions and waiters.
func (r *Report) checkCoverage(cfg Config) {
	if !cfg.NoRecipes {
		want := cfg.ServerFaultsPerKind
		for _, name := range AllRecipes {
			rc := r.recipe(name)
			if rc.Acquisitions < want {
				r.Targets.Missed = append(r.Targets.Missed, fmt.Sprintf("recipe %s: %d acquisitions < %d", name, rc.Acquisitions, want))
			}
			if n := rc.aimedTotal(); n < want {
				r.Targets.Missed = append(r.Targets.Missed, fmt.Sprintf("recipe %s: %d faults aimed at its holders < %d", name, n, want))
			}
		}
	}
	if r.Faults[string(FaultOpDelete)] > 0 && r.RequeuedDeleted == 0 && !cfg.NoRecipes {
		r.Targets.Missed = append(r.Targets.Missed, "no re-queued lease had its node deleted while it held: issue #18's sequence was not exercised")
	}
	if cfg.Load.Sessions > 0 {
		if r.Load.Sessions < cfg.Load.Sessions || r.Load.SessionsOpened < cfg.Load.Sessions {
			r.Targets.Missed = append(r.Targets.Missed, fmt.Sprintf("load phase: %d sessions opened, %d acquired a lease, want %d",
				r.Load.SessionsOpened, r.Load.Sessions, cfg.Load.Sessions))
		}
		if r.Load.PeakWaiters < min(cfg.Load.Waiters, 5000) {
			r.Targets.Missed = append(r.Targets.Missed, fmt.Sprintf("load phase: at most %d waiters at once < %d", r.Load.PeakWaiters, min(cfg.Load.Waiters, 5000)))
		}
	}
}

// loadStats reads the load phase's size off the history.
func (c *checker) loadStats() {
	ls := &c.rep.Load
	if c.loadFrom == 0 {
		return
	}
	ls.Seconds = float64(cmpOr(c.loadTo, c.lastT)-c.loadFrom) / 1e9
	sessions := map[int64]bool{}
	type step struct {
		t int64
		d int
	}
	var steps []step
	opened := map[int]bool{}
	for _, e := range c.evs {
		if e.Kind == EvAcquired && e.Detail == "load" {
			sessions[e.Session] = true
			ls.Acquisitions++
		}
		var n, w int
		if e.Kind == EvNote && !opened[e.Proc] {
			if _, err := fmt.Sscanf(e.Detail, "load: %d sessions, %d waiters", &n, &w); err == nil {
				opened[e.Proc] = true
				ls.SessionsOpened += n
			}
		}
	}
	for _, a := range c.attempts {
		if a.detail != "load" {
			continue
		}
		steps = append(steps, step{a.start, 1})
		if a.end != 0 {
			steps = append(steps, step{a.end, -1})
		}
	}
	slices.SortFunc(steps, func(a, b step) int {
		if a.t != b.t {
			if a.t < b.t {
				return -1
			}
			return 1
		}
		return a.d - b.d
	})
	n := 0
	for _, s := range steps {
		n += s.d
		ls.PeakWaiters = max(ls.PeakWaiters, n)
	}
	ls.Sessions = len(sessions)
}

func cmpOr(a, b int64) int64 {
	if a != 0 {
		return a
	}
	return b
}
