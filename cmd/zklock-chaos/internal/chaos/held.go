package chaos

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"time"
)

// HeldShort is how soon after its grant a lost lease counts as lost
// early in HeldBeforeLoss: its holder paid for the wait and had, at best,
// a fraction of a second to use the lock (issue 32 §6).
const HeldShort = 300 * time.Millisecond

// HeldBeforeLoss is how long leases lost without a release had been held:
// from the grant (when the acquire returned to its worker) to the loss
// signal (when the worker saw Done fire), over the leases lost for one
// reason, or for any ("all"). A lease granted at the tail of its
// session's proof window is lost before its holder can use it; this is
// the figure that shows it.
type HeldBeforeLoss struct {
	N     int     `json:"n"`
	MinMS float64 `json:"min_ms"`
	P10MS float64 `json:"p10_ms"`
	P50MS float64 `json:"p50_ms"`
	P90MS float64 `json:"p90_ms"`
	MaxMS float64 `json:"max_ms"`
	// Short counts the leases lost within HeldShort of their grant;
	// ShortLoad those of them granted in the load phase.
	Short     int `json:"within_300ms"`
	ShortLoad int `json:"within_300ms_load"`
	values    []float64
}

// heldAll is HeldBeforeLoss's key for the losses of every reason.
const heldAll = "all"

// addHeld counts a lease granted at acquired and told of its loss for
// reason at lost.
func (r *Report) addHeld(reason string, acquired, lost int64, load bool) {
	ms := float64(lost-acquired) / 1e6
	for _, k := range []string{reason, heldAll} {
		h := r.HeldBeforeLoss[k]
		if h == nil {
			h = &HeldBeforeLoss{}
			r.HeldBeforeLoss[k] = h
		}
		h.values = append(h.values, ms)
		if lost-acquired <= int64(HeldShort) {
			h.Short++
			if load {
				h.ShortLoad++
			}
		}
	}
}

func (h *HeldBeforeLoss) finish() {
	h.N = len(h.values)
	if h.N == 0 {
		return
	}
	slices.Sort(h.values)
	h.MinMS, h.MaxMS = h.values[0], h.values[h.N-1]
	h.P10MS, h.P50MS, h.P90MS = percentile(h.values, 10), percentile(h.values, 50), percentile(h.values, 90)
}

// writeHeld writes the table of HeldBeforeLoss, by reason, all last.
func (r *Report) writeHeld(w io.Writer) {
	all := r.HeldBeforeLoss[heldAll]
	if all == nil {
		return
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "| held before loss (grant → loss signal), by reason | n | min ms | p10 ms | p50 ms | p90 ms | max ms | lost ≤ %d ms after the grant (of them in the load phase) |\n",
		HeldShort.Milliseconds())
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|")
	keys := slices.DeleteFunc(slices.Sorted(maps.Keys(r.HeldBeforeLoss)), func(k string) bool { return k == heldAll })
	for _, k := range append(keys, heldAll) {
		h := r.HeldBeforeLoss[k]
		fmt.Fprintf(w, "| %s | %d | %.1f | %.0f | %.0f | %.0f | %.0f | %d (%d) |\n", k, h.N, h.MinMS, h.P10MS, h.P50MS, h.P90MS, h.MaxMS, h.Short, h.ShortLoad)
	}
}
