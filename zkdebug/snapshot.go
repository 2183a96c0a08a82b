package zkdebug

import (
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/zklockkit/zklockkit/zklock"
)

// snapshot is what the page shows; its JSON is the ?format=json answer.
type snapshot struct {
	Session string       `json:"session"`
	Root    string       `json:"root"`
	Time    time.Time    `json:"time"`
	Held    int          `json:"held"`
	Waiting int          `json:"waiting"`
	Locks   []lockView   `json:"locks"`
	History *historyView `json:"history,omitempty"`

	// The holders' freshness, for the page's summary line.
	lookups, stale, unavailable int
	budget                      time.Duration
}

// lockView is one lock node of the client.
type lockView struct {
	Resource   string    `json:"resource"`
	Mode       string    `json:"mode"`
	State      string    `json:"state"` // "held" or "waiting"
	Position   int       `json:"position"`
	Since      time.Time `json:"since"`
	AgeSeconds float64   `json:"age_seconds"`
	Token      int64     `json:"token"`
	Session    string    `json:"session"`
	Path       string    `json:"path"`
	// A waiting lock's holders (the nodes that hold its queue), as read
	// from ZooKeeper, and how current that read is: "fresh", "stale" (an
	// older read: the last one failed or did not end in time), or
	// "unavailable" (none succeeded); absent when not looked up.
	WaitsFor      []holderView `json:"waits_for,omitempty"`
	HoldersStatus string       `json:"holders_status,omitempty"`
	HoldersRead   *time.Time   `json:"holders_read,omitempty"`
	HoldersError  string       `json:"holders_error,omitempty"`
	// A waiting lock's estimated wait (see estimate): its turns, the
	// hold-time median and whence ("reports": the queue's nodes'; "this
	// client": its own holds), turns × median in seconds, the deadline
	// its acquire wrote, and whether that falls first. Absent when
	// unknown.
	Turns                *int       `json:"turns,omitempty"`
	HoldP50Seconds       *float64   `json:"hold_p50_seconds,omitempty"`
	HoldSource           string     `json:"hold_source,omitempty"`
	EstimatedWaitSeconds *float64   `json:"estimated_wait_seconds,omitempty"`
	Deadline             *time.Time `json:"deadline,omitempty"`
	GivesUpFirst         bool       `json:"gives_up_first,omitempty"`

	age  time.Duration
	wait time.Duration
}

// holderView is a node that holds a queue some lock of this process
// waits in.
type holderView struct {
	Label   string    `json:"label"`
	Host    string    `json:"host"`
	PID     int       `json:"pid"`
	Session string    `json:"session"`
	Path    string    `json:"path"`
	Token   int64     `json:"token"`
	Since   time.Time `json:"since"` // when its node joined the queue (server clock)
	// HeldSeconds is how long it has held: exact for a lease of this
	// Client; for another's, the time since its node joined the queue
	// (ZooKeeper does not record when a node began to hold, so this is
	// an upper bound).
	HeldSeconds float64 `json:"held_seconds"`
	Exact       bool    `json:"held_exact"` // HeldSeconds is exact: the holder is this Client
	Mine        bool    `json:"this_client"`
}

// Age is the time since the node joined the queue, rounded for people.
func (l lockView) Age() string { return formatAge(l.age) }

// Node is the name of the lock's znode (the last element of Path).
func (l lockView) Node() string { return l.Path[strings.LastIndexByte(l.Path, '/')+1:] }

// SinceText is the clock time the node joined the queue.
func (l lockView) SinceText() string { return l.Since.Local().Format("15:04:05.000") }

// HoldersAge says how old a stale read of the holders is.
func (l lockView) HoldersAge() string {
	if l.HoldersRead == nil {
		return ""
	}
	return formatAge(time.Since(*l.HoldersRead))
}

// Held is how long the holder has held, for people: "held 1.2s" when
// known, "held ≤ 3.7s" when bounded by its node's age.
func (h holderView) Held() string {
	if h.Exact {
		return "held " + formatAge(seconds(h.HeldSeconds))
	}
	return "held ≤ " + formatAge(seconds(h.HeldSeconds))
}

// Node is the name of the holder's znode.
func (h holderView) Node() string { return h.Path[strings.LastIndexByte(h.Path, '/')+1:] }

// take makes the page's snapshot of c's locks; with lk, it adds the
// holders of the queues its waiting locks are in, read at most ttl ago.
func take(c *zklock.Client, lk *lookup, ttl time.Duration, now time.Time) snapshot {
	locks := c.Locks()
	s := snapshot{Session: session(c.SessionID()), Root: c.Root(), Time: now.UTC(), Locks: []lockView{}}
	var queues map[string]holders
	if lk != nil {
		queues = lk.read(locks, ttl, now)
		s.budget = lk.budget
	}
	mine := make(map[string]zklock.LocalLock, len(locks))
	for _, l := range locks {
		mine[l.Path] = l
	}
	for _, l := range locks {
		v := lockView{Resource: l.Resource, Mode: l.Mode.String(), State: "waiting", Position: l.Position,
			Since: l.Since.UTC(), Token: l.Token, Session: session(l.SessionID), Path: l.Path, age: max(now.Sub(l.Since), 0)}
		v.AgeSeconds = v.age.Seconds()
		if l.Held {
			v.State = "held"
			s.Held++
		} else {
			s.Waiting++
			h, ok := queues[path.Dir(l.Path)]
			v.estimate(l, h, ok, now)
			if ok {
				s.lookups++
				v.waitsFor(h, mine, c.SessionID(), now)
				switch v.HoldersStatus {
				case "stale":
					s.stale++
				case "unavailable":
					s.unavailable++
				}
			}
		}
		s.Locks = append(s.Locks, v)
	}
	return s
}

// waitsFor fills in the holders of the lock's queue from h.
func (v *lockView) waitsFor(h holders, mine map[string]zklock.LocalLock, sid int64, now time.Time) {
	switch {
	case h.q == nil:
		v.HoldersStatus = "unavailable"
	case h.fresh:
		v.HoldersStatus = "fresh"
	default:
		v.HoldersStatus = "stale"
	}
	if h.err != nil {
		v.HoldersError = h.err.Error()
	}
	if h.q == nil {
		return
	}
	at := h.at.UTC()
	v.HoldersRead = &at
	for _, n := range h.q.Holders() {
		hv := holderView{Label: n.Owner.Label, Host: n.Owner.Host, PID: n.Owner.PID, Session: session(n.SessionID),
			Path: n.Path, Token: n.Token, Since: n.Created.UTC(), HeldSeconds: max(now.Sub(n.Created), 0).Seconds(),
			Mine: sid != 0 && n.SessionID == sid}
		if l, ok := mine[n.Path]; ok && hv.Mine && l.Held && !l.Acquired.IsZero() {
			hv.HeldSeconds, hv.Exact = max(now.Sub(l.Acquired), 0).Seconds(), true
		}
		v.WaitsFor = append(v.WaitsFor, hv)
	}
}

// session formats a ZooKeeper session id as ZooKeeper's tools do.
func session(id int64) string {
	if id == 0 {
		return "-"
	}
	return fmt.Sprintf("0x%x", uint64(id))
}

// formatAge rounds d to a precision that suits its size.
func formatAge(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return d.Round(time.Microsecond).String()
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Minute:
		return d.Round(100 * time.Millisecond).String()
	case d < time.Hour:
		return d.Round(time.Second).String()
	}
	return strings.TrimSuffix(d.Round(time.Minute).String(), "0s")
}
