package main

import (
	"fmt"
	"slices"
	"time"

	"github.com/zklockkit/zklockkit/zklock"
)

// holdText says what the waits are estimated from: the hold-time median
// and its source, or why there is none.
func holdText(q *zklock.Queue, hold time.Duration, source string) string {
	if hold <= 0 {
		return "unknown: no node reports one, so waits are not estimated"
	}
	if source == "" {
		reports := 0
		for _, n := range q.Nodes {
			if n.Owner.HoldMedian > 0 {
				reports++
			}
		}
		source = "reported by 1 node"
		if reports != 1 {
			source = fmt.Sprintf("reported by %d nodes", reports)
		}
	}
	return fmt.Sprintf("%s (%s); a waiter's wait ≈ its turns × this", formatAge(hold), source)
}

// waitText is a waiter's estimated wait: "≈1.5s"; "-" for a holder, "?"
// when unknown.
func waitText(n zklock.QueueNode, hold time.Duration) string {
	if n.Holder {
		return "-"
	}
	w, ok := n.EstimatedWait(hold)
	if !ok {
		return "?"
	}
	return formatAge(w)
}

// deadlineText is how long until a node's acquire gives up, and whether
// that comes before its turn: "2s (gives up first)"; "-" with no
// deadline.
func deadlineText(n zklock.QueueNode, now time.Time, hold time.Duration) string {
	d := n.Owner.Deadline
	switch {
	case d.IsZero():
		return "-"
	case !d.After(now):
		return "passed"
	case n.GivesUpFirst(now, hold):
		return formatAge(d.Sub(now)) + " (gives up first)"
	}
	return formatAge(d.Sub(now))
}

// watchedSamples is the number of hold times a watch keeps.
const watchedSamples = 16

// watchedHolds is what a watch saw of the holders: which nodes held at
// its last read, since when for those it saw begin, and how long the
// last watchedSamples held, from the read that showed the acquire to the
// one that showed the release (so to within the watch's reads).
type watchedHolds struct {
	since map[string]time.Time // holders at the last read, by path: when seen to acquire (zero: held when the watch began)
	d     []time.Duration      // the last watchedSamples hold times
}

// read takes the holders of a reading of the queue at now.
func (h *watchedHolds) read(q *zklock.Queue, now time.Time) {
	first := h.since == nil
	cur := map[string]time.Time{}
	for _, n := range q.Holders() {
		s, ok := h.since[n.Path]
		if !ok && !first {
			s = now
		}
		cur[n.Path] = s
	}
	for p, s := range h.since {
		if _, ok := cur[p]; !ok && !s.IsZero() {
			h.d = append(h.d, now.Sub(s))
			if len(h.d) > watchedSamples {
				h.d = h.d[1:]
			}
		}
	}
	h.since = cur
}

// median is the median of the hold times seen (the upper of the middle
// two for an even count), 0 for none.
func (h *watchedHolds) median() time.Duration {
	if len(h.d) == 0 {
		return 0
	}
	ds := slices.Clone(h.d)
	slices.Sort(ds)
	return ds[len(ds)/2]
}

func (h *watchedHolds) text() string {
	if len(h.d) == 1 {
		return "from 1 hold this watch saw"
	}
	return fmt.Sprintf("from %d holds this watch saw", len(h.d))
}

// estimateFrom sets the hold-time median of the waits' estimates: the
// queue's reports, else what this watch saw.
func (w *watcher) estimateFrom(q *zklock.Queue) {
	w.hold, w.holdSource = q.HoldMedian(), "reports"
	if w.hold == 0 {
		w.hold, w.holdSource = w.holds.median(), "watched"
	}
	if w.hold == 0 {
		w.holdSource = ""
	}
}
