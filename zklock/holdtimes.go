package zklock

import (
	"encoding/json"
	"slices"
	"strconv"
	"sync"
	"time"
)

// The bounds of a Client's record of its own hold times, from which each
// node it creates reports the resource's recent hold-time median
// (Owner.HoldMedian).
const (
	// HoldSamples is the number of recent hold times a Client keeps per
	// resource: the durations of its last HoldSamples released leases.
	HoldSamples = 16
	// HoldResources is the number of resources it keeps them for; past
	// it, the resource released longest ago is forgotten.
	HoldResources = 256
)

// holdTimes is a Client's record of how long its leases were held, per
// queue: HoldSamples durations for each of HoldResources queues, about
// 40 KiB at most. It is safe for concurrent use.
type holdTimes struct {
	mu    sync.Mutex
	tick  uint64 // counts releases: the age of a queue's last one
	rings map[string]*holdRing
}

type holdRing struct {
	d    [HoldSamples]time.Duration
	n    int    // samples put in all
	last uint64 // tick of the last sample
}

// released records the hold time of a lease being released, for each of
// its own nodes' queues.
func (h *holdTimes) released(st *leaseState) {
	st.mu.Lock()
	acquired := st.acquired
	st.mu.Unlock()
	if acquired.IsZero() {
		return
	}
	d := time.Since(acquired)
	for _, n := range st.ownHolds() {
		h.add(n.parent, d)
	}
}

func (h *holdTimes) add(queue string, d time.Duration) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.tick++
	r := h.rings[queue]
	if r == nil {
		if h.rings == nil {
			h.rings = map[string]*holdRing{}
		}
		if len(h.rings) >= HoldResources {
			h.forgetOldest()
		}
		r = &holdRing{}
		h.rings[queue] = r
	}
	r.d[r.n%HoldSamples] = d
	r.n++
	r.last = h.tick
}

// forgetOldest forgets the queue released longest ago. Called under mu.
func (h *holdTimes) forgetOldest() {
	var oldest string
	var at uint64
	for q, r := range h.rings {
		if oldest == "" || r.last < at {
			oldest, at = q, r.last
		}
	}
	delete(h.rings, oldest)
}

// median returns the median of the queue's recent hold times (the upper
// of the two middle ones for an even count), 0 when it has none.
func (h *holdTimes) median(queue string) time.Duration {
	h.mu.Lock()
	r := h.rings[queue]
	var buf [HoldSamples]time.Duration
	var ds []time.Duration
	if r != nil {
		ds = append(buf[:0], r.d[:min(r.n, HoldSamples)]...)
	}
	h.mu.Unlock()
	return medianOf(ds)
}

// medianOf returns the median of ds (the upper of the two middle ones for
// an even count), 0 for none. It sorts ds.
func medianOf(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	return ds[len(ds)/2]
}

// partData is the data of the lock node of one part of an acquire, on
// queue: the election value; or the owner record, with the acquire's
// deadline (its context's or MaxWait's; a try never waits, so it has
// none) and the Client's recent hold-time median on queue when there
// are, so that anyone reading the queue can tell how long its waiters
// will wait and which will give up first (see QueueNode.EstimatedWait).
func (c *Client) partData(a *acquisition, queue string) []byte {
	cfg := a.cfg
	if cfg.data != nil {
		return cfg.data
	}
	var deadline time.Time
	if !cfg.try {
		deadline, _ = a.ctx.Deadline()
	}
	hold := c.holds.median(queue)
	if deadline.IsZero() && hold == 0 {
		return c.nodeData(cfg)
	}
	return appendWait(c.nodeData(cfg), deadline, hold)
}

// appendWait returns owner, the JSON of an owner record, with a deadline
// and a hold-time median added (each when not zero) as Owner.MarshalJSON
// writes them: an acquire pays a few hundred nanoseconds for them, where
// marshalling the record anew (and asking for the process id) cost it
// several microseconds.
func appendWait(owner []byte, deadline time.Time, hold time.Duration) []byte {
	if len(owner) < 2 || owner[len(owner)-1] != '}' {
		owner = []byte("{}")
	}
	b := make([]byte, 0, len(owner)+80)
	b = append(b, owner[:len(owner)-1]...) // without its closing brace
	sep := func() {
		if len(b) > 1 {
			b = append(b, ',')
		}
	}
	if !deadline.IsZero() {
		sep()
		b = append(b, `"deadline":"`...)
		b = deadline.UTC().Truncate(time.Millisecond).AppendFormat(b, time.RFC3339Nano)
		b = append(b, '"')
	}
	if s := hold.Seconds(); s > 0 {
		sep()
		b = append(b, `"hold_p50_seconds":`...)
		if s >= 1e-6 {
			b = strconv.AppendFloat(b, s, 'f', -1, 64)
		} else {
			f, _ := json.Marshal(s) // encoding/json's exponent form
			b = append(b, f...)
		}
	}
	return append(b, '}')
}

// ownerJSON is Owner's JSON form.
type ownerJSON struct {
	Host        string    `json:"host,omitempty"`
	PID         int       `json:"pid,omitempty"`
	Label       string    `json:"label,omitempty"`
	Deadline    time.Time `json:"deadline,omitzero"`
	HoldSeconds float64   `json:"hold_p50_seconds,omitempty"`
}

// MarshalJSON writes o as zklock stores it in a lock node:
//
//	{"host":"box-1","pid":27461,"label":"billing","deadline":"2026-11-27T15:04:05.123Z","hold_p50_seconds":1.25}
//
// Empty fields are left out. Curator and kazoo ignore the data of lock
// nodes they do not own, and older zklock versions the fields they do not
// know.
func (o Owner) MarshalJSON() ([]byte, error) {
	j := ownerJSON{Host: o.Host, PID: o.PID, Label: o.Label, HoldSeconds: o.HoldMedian.Seconds()}
	if !o.Deadline.IsZero() {
		j.Deadline = o.Deadline.UTC().Truncate(time.Millisecond)
	}
	return json.Marshal(j)
}

// UnmarshalJSON reads the form MarshalJSON writes.
func (o *Owner) UnmarshalJSON(b []byte) error {
	var j ownerJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*o = Owner{Host: j.Host, PID: j.PID, Label: j.Label, Deadline: j.Deadline}
	if j.HoldSeconds > 0 && j.HoldSeconds < 1e9 {
		o.HoldMedian = time.Duration(j.HoldSeconds * float64(time.Second))
	}
	return nil
}
