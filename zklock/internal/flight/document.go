package flight

import (
	"fmt"
	"slices"
	"time"

	"github.com/zklockkit/zklockkit/zklock/internal/wire"
)

// Version is the version of the JSON document a recording writes: a
// field is never renamed or given another meaning within a version.
const Version = 1

// Document is a recording's JSON: what was lost, and what each client
// involved knew of its session and its wire.
type Document struct {
	Version int       `json:"version"`
	Time    time.Time `json:"time"` // when the recording was written
	Host    string    `json:"host"`
	PID     int       `json:"pid"`
	// Trace is the name of the trace file beside this one (`go tool
	// trace` opens it); empty when it could not be written (TraceError).
	Trace         string  `json:"trace,omitempty"`
	TraceError    string  `json:"trace_error,omitempty"`
	WindowSeconds float64 `json:"window_seconds"` // the trace window asked of the runtime
	// Suppressed counts the losses the rate limit left unrecorded since
	// the last recording.
	Suppressed int      `json:"suppressed"`
	Losses     []Loss   `json:"losses"`
	Clients    []Client `json:"clients"`
}

// Loss is one lost lease.
type Loss struct {
	Time        time.Time `json:"time"`
	Resource    string    `json:"resource"`
	Mode        string    `json:"mode"`
	Reason      string    `json:"reason"`
	Error       string    `json:"error"`
	Token       int64     `json:"token"`
	Acquired    time.Time `json:"acquired"`
	HeldSeconds float64   `json:"held_seconds"`
	Nodes       []Node    `json:"nodes"`
	Client      int       `json:"client"` // its client, an index in Document.Clients
}

// Node is a lock node of a lost lease.
type Node struct {
	Resource string `json:"resource"`
	Path     string `json:"path"`
	Token    int64  `json:"token"`
	Session  string `json:"session"`
}

// Client is what a client knew of its session and its wire when the
// recording was written.
type Client struct {
	Session               string  `json:"session"`
	State                 string  `json:"state"`
	SessionTimeoutSeconds float64 `json:"session_timeout_seconds"` // negotiated
	// LastHeard is when the client last read a frame from ZooKeeper.
	LastHeard *time.Time `json:"last_heard"`
	// Anchor is the latest moment ZooKeeper is known to have heard from
	// the client: the send time of the last request answered.
	Anchor *time.Time `json:"anchor"`
	// LossDeadline is when the client gives its leases up if the leader
	// is not heard to hear from it again.
	LossDeadline *time.Time `json:"loss_deadline"`
	// LongestSilence is the longest interval in the history with no
	// answer read from ZooKeeper, up to when the recording was written.
	LongestSilence *Silence `json:"longest_silence"`
	Beats          []Trip   `json:"beats"`    // pings, syncs and connect requests, oldest first
	Requests       []Trip   `json:"requests"` // the other requests, oldest first
	Pending        []Trip   `json:"pending"`  // sent and not answered when written
	Marks          []Mark   `json:"marks"`    // connections and the session's transitions, oldest first
}

// Trip is a request and its round trip.
type Trip struct {
	Sent       time.Time `json:"sent"`
	Op         string    `json:"op"`
	Xid        int32     `json:"xid"`
	RTTSeconds *float64  `json:"rtt_seconds"`   // null: not answered
	Err        int32     `json:"err,omitempty"` // ZooKeeper's error code
	Conn       uint32    `json:"conn"`          // the connection, numbered from 1
}

// Mark is a moment of a connection or of the session.
type Mark struct {
	Time           time.Time `json:"time"`
	What           string    `json:"what"`
	Conn           uint32    `json:"conn"`
	Session        string    `json:"session,omitempty"`
	Address        string    `json:"address,omitempty"`
	TimeoutSeconds float64   `json:"timeout_seconds,omitempty"`
}

// Silence is an interval with no answer read from ZooKeeper.
type Silence struct {
	From    time.Time `json:"from"`
	To      time.Time `json:"to"`
	Seconds float64   `json:"seconds"`
}

// Session is what a client knows of its session (see Report).
type Session struct {
	ID           int64
	State        string
	Timeout      time.Duration // negotiated
	Anchor       time.Time
	LossDeadline time.Time
}

// Report is a client's part of a recording, from its session and its
// wire history, at now.
func Report(h wire.HistorySnapshot, s Session, now time.Time) Client {
	c := Client{Session: SessionText(s.ID), State: s.State, SessionTimeoutSeconds: s.Timeout.Seconds(),
		LastHeard: timePtr(h.LastRead), Anchor: timePtr(s.Anchor), LossDeadline: timePtr(s.LossDeadline),
		Beats: trips(h.Beats), Requests: trips(h.Trips), Pending: trips(h.Pending), Marks: make([]Mark, len(h.Marks))}
	for i, m := range h.Marks {
		c.Marks[i] = Mark{Time: time.Unix(0, m.At), What: m.What, Conn: m.Conn, Session: sessionIf(m.Session),
			Address: m.Detail, TimeoutSeconds: time.Duration(m.Timeout).Seconds()}
	}
	c.LongestSilence = longestSilence(h, now)
	return c
}

func trips(ts []wire.Trip) []Trip {
	out := make([]Trip, len(ts))
	for i, t := range ts {
		out[i] = Trip{Sent: time.Unix(0, t.Sent), Op: wire.OpName(t.Op), Xid: t.Xid, Err: t.Err, Conn: t.Conn}
		if t.RTT >= 0 {
			s := time.Duration(t.RTT).Seconds()
			out[i].RTTSeconds = &s
		}
	}
	return out
}

// longestSilence finds the longest interval between two answers read
// (and from the last one to now), over the history's round trips.
func longestSilence(h wire.HistorySnapshot, now time.Time) *Silence {
	var reads []int64
	for _, ts := range [][]wire.Trip{h.Beats, h.Trips} {
		for _, t := range ts {
			if t.RTT >= 0 {
				reads = append(reads, t.Sent+t.RTT)
			}
		}
	}
	if len(reads) == 0 {
		return nil
	}
	slices.Sort(reads)
	reads = append(reads, now.UnixNano())
	best := -1
	for i := 1; i < len(reads); i++ {
		if best < 0 || reads[i]-reads[i-1] > reads[best]-reads[best-1] {
			best = i
		}
	}
	if best < 0 {
		return nil
	}
	from, to := time.Unix(0, reads[best-1]), time.Unix(0, reads[best])
	return &Silence{From: from, To: to, Seconds: to.Sub(from).Seconds()}
}

func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

// SessionText formats a ZooKeeper session id as ZooKeeper's tools do; "-"
// for none.
func SessionText(id int64) string {
	if id == 0 {
		return "-"
	}
	return fmt.Sprintf("0x%x", uint64(id))
}

func sessionIf(id int64) string {
	if id == 0 {
		return ""
	}
	return SessionText(id)
}
