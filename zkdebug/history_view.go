package zkdebug

import (
	"cmp"
	"slices"
	"time"
)

// historyView is what the page shows of a History; its JSON is the
// "history" member of the ?format=json answer.
type historyView struct {
	BucketSeconds float64     `json:"bucket_seconds"`
	From          time.Time   `json:"from"` // the start of the oldest bucket
	Classes       []classView `json:"classes"`

	bucket time.Duration
}

// classView is one class's window: totals, and one entry per bucket,
// oldest first (the last is the bucket under way).
type classView struct {
	Class          string       `json:"class"`
	Other          bool         `json:"other,omitempty"` // the classes past HistoryMaxClasses
	Acquired       uint64       `json:"acquired"`
	GaveUp         uint64       `json:"gave_up"`
	Lost           uint64       `json:"lost"`
	WaitedSeconds  float64      `json:"waited_seconds"`
	WaitP50Seconds *float64     `json:"wait_p50_seconds"` // over the window; null without acquires
	WaitP99Seconds *float64     `json:"wait_p99_seconds"`
	Buckets        []bucketView `json:"buckets"`

	charts [3]chart
}

// bucketView is one bucket (a minute) of a class.
type bucketView struct {
	Start          time.Time         `json:"start"`
	Acquired       uint32            `json:"acquired"`
	GaveUp         uint32            `json:"gave_up"`
	WaitP50Seconds *float64          `json:"wait_p50_seconds"` // null without acquires
	WaitP99Seconds *float64          `json:"wait_p99_seconds"`
	MaxWaiting     int32             `json:"max_waiting"` // most acquires waiting at once, in this process
	MaxAhead       int32             `json:"max_ahead"`   // most nodes ahead of a new node in its queue
	Lost           map[string]uint32 `json:"lost,omitempty"`
}

// Name is how the page names the class.
func (c classView) Name() string {
	if c.Other {
		return "other classes"
	}
	return c.Class
}

// Charts are the class's three charts: waits, queue, losses.
func (c classView) Charts() []chart { return c.charts[:] }

// WaitP99 is the window's p99 wait, for people.
func (c classView) WaitP99() string {
	if c.WaitP99Seconds == nil {
		return "-"
	}
	return "≤ " + formatAge(seconds(*c.WaitP99Seconds))
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

func ptr(d time.Duration) *float64 { s := d.Seconds(); return &s }

// view returns the window ending with the bucket of now.
func (h *History) view(now time.Time) *historyView {
	cur := h.bucketOf(now)
	first := cur - historySlots + 1
	v := &historyView{BucketSeconds: h.bucket.Seconds(), From: time.Unix(0, first*int64(h.bucket)).UTC(), bucket: h.bucket}
	h.mu.RLock()
	rings := make([]*classRing, 0, len(h.classes)+1)
	for _, r := range h.classes {
		rings = append(rings, r)
	}
	if h.other != nil {
		rings = append(rings, h.other)
	}
	h.mu.RUnlock()
	for _, r := range rings {
		if c, ok := r.view(first, h.bucket); ok {
			v.Classes = append(v.Classes, c)
		}
	}
	// Most time waited first; the overflow row last.
	slices.SortFunc(v.Classes, func(a, b classView) int {
		if a.Other != b.Other {
			if a.Other {
				return 1
			}
			return -1
		}
		return cmp.Or(cmp.Compare(b.WaitedSeconds, a.WaitedSeconds), cmp.Compare(b.Acquired+b.GaveUp, a.Acquired+a.GaveUp),
			cmp.Compare(a.Class, b.Class))
	})
	for i := range v.Classes {
		v.Classes[i].charts = v.charts(&v.Classes[i])
	}
	return v
}

// view returns the class's buckets from bucket number first on, and false
// when nothing happened in them and nothing waits.
func (r *classRing) view(first int64, width time.Duration) (classView, bool) {
	r.mu.Lock()
	slots := r.slots
	waiting := r.waiting
	r.mu.Unlock()
	c := classView{Class: r.name, Other: r.other, Buckets: make([]bucketView, historySlots)}
	var all waitHist
	var waited time.Duration
	active := waiting > 0
	// Waiting counts carry over buckets without events: before the first
	// bucket seen, what it started with; after one, what it ended with.
	carry := waiting
	for i := range historySlots {
		if s := &slots[(first+int64(i))%historySlots]; s.n == first+int64(i) {
			carry = s.startWaiting
			break
		}
	}
	for i := range historySlots {
		n := first + int64(i)
		b := &c.Buckets[i]
		b.Start = time.Unix(0, n*int64(width)).UTC()
		s := &slots[n%historySlots]
		if s.n != n {
			b.MaxWaiting = carry
			continue
		}
		active = true
		b.Acquired, b.GaveUp, b.MaxWaiting, b.MaxAhead = s.acquired, s.gaveUp, s.maxWaiting, s.maxAhead
		carry = s.endWaiting
		if p50, ok := s.waits.quantile(0.5); ok {
			p99, _ := s.waits.quantile(0.99)
			b.WaitP50Seconds, b.WaitP99Seconds = ptr(p50), ptr(p99)
		}
		for reason, n := range s.lost {
			if n == 0 {
				continue
			}
			if b.Lost == nil {
				b.Lost = map[string]uint32{}
			}
			b.Lost[lossName(reason)] += n
			c.Lost += uint64(n)
		}
		c.Acquired += uint64(s.acquired)
		c.GaveUp += uint64(s.gaveUp)
		waited += s.waited
		all.merge(&s.waits)
	}
	c.WaitedSeconds = waited.Seconds()
	if p50, ok := all.quantile(0.5); ok {
		p99, _ := all.quantile(0.99)
		c.WaitP50Seconds, c.WaitP99Seconds = ptr(p50), ptr(p99)
	}
	return c, active
}

// lossName names loss reason i of a slot's counts.
func lossName(i int) string {
	for _, r := range lossNames {
		if int(r) == i {
			return r.String()
		}
	}
	return "other"
}
