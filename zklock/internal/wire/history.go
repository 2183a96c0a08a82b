package wire

import (
	"strconv"
	"sync"
	"time"
	"unsafe"

	"github.com/zklockkit/zklockkit/zklock/internal/zkwire"
)

// The bounds of a History: how much of the recent past it keeps.
const (
	// HistoryBeats is the number of pings and syncs (the requests that
	// prove the session alive) a History keeps, with their round trips:
	// at a session timeout of 10 s, a client pings every 3.3 s and, while
	// it holds locks, syncs every second, so this covers about the last
	// three minutes.
	HistoryBeats = 256
	// HistoryTrips is the number of other requests it keeps (creates,
	// deletes, reads...): on a busy client, the last moments only.
	HistoryTrips = 1024
	// HistoryMarks is the number of connection and session events it
	// keeps: dials, connect responses, the session's notes.
	HistoryMarks = 64
	// HistoryBytes is the memory of a History's rings. Requests sent and
	// not yet answered take 32 bytes each on top, while they are
	// outstanding.
	HistoryBytes = HistoryBeats*unsafe.Sizeof(Trip{}) + HistoryTrips*unsafe.Sizeof(Trip{}) + HistoryMarks*unsafe.Sizeof(Mark{})
)

// Opcodes a History names (ZooKeeper's OpCode) besides zkwire's.
const (
	OpConnect int32 = -100 // not a ZooKeeper opcode: the connect request, which has none
	OpSync    int32 = 9
	OpPing    int32 = 11
)

// Trip is a request and its answer.
type Trip struct {
	Sent int64 // Unix nanoseconds
	RTT  int64 // nanoseconds from sending to reading the answer; -1: never answered
	Conn uint32
	Xid  int32
	Op   int32
	Err  int32 // ZooKeeper's error code in the answer
}

// Mark is a moment of the connection or the session: a dial, a connect
// response, or a note of the session's (History.Note).
type Mark struct {
	At      int64 // Unix nanoseconds
	Conn    uint32
	What    string // "dial", "connected", "session expired" or the session's note
	Detail  string // a dial's address
	Session int64
	Timeout int64 // a connect response's negotiated timeout, in nanoseconds
}

// History keeps the recent past of a tracked connection, in bounded rings
// (HistoryBytes): each request with its round trip, pings and syncs apart
// from the rest so that a busy client's traffic does not push them out,
// the connections dialed and the connect responses, and what the session
// notes (its state changes). It is a tap subscriber (see Tracker.Record);
// recording a frame costs a lock, a clock read and a few stores.
//
// Requests are matched to answers as liveness matches them: the server
// answers a session's requests in order.
type History struct {
	mu       sync.Mutex
	conn     uint64
	pending  []sentReq // requests of conn not yet answered, oldest first from head
	head     int
	lastRead time.Time // the last frame read from the server, any connection
	beats    ring[Trip]
	trips    ring[Trip]
	marks    ring[Mark]
}

type sentReq struct {
	at  time.Time
	xid int32
	op  int32
}

// NewHistory returns an empty History.
func NewHistory() *History {
	return &History{beats: newRing[Trip](HistoryBeats), trips: newRing[Trip](HistoryTrips), marks: newRing[Mark](HistoryMarks)}
}

var _ tapSubscriber = (*History)(nil)

// Record makes h keep the history of t's connections. It must be called
// before t dials.
func (t *Tracker) Record(h *History) {
	t.hist = h
	t.subs = append(t.subs, h)
}

// Note records a moment of the session: what happened (a constant
// string: "disconnected", "state suspended"...), on session sid.
func (h *History) Note(what string, sid int64) {
	now := time.Now()
	h.mu.Lock()
	h.marks.put(Mark{At: now.UnixNano(), Conn: uint32(h.conn), What: what, Session: sid})
	h.mu.Unlock()
}

// dialed records a new connection, to addr. The requests of the last one
// that were never answered are kept as such.
func (h *History) dialed(conn uint64, addr string) {
	now := time.Now()
	h.mu.Lock()
	defer h.mu.Unlock()
	h.switchTo(conn)
	h.marks.put(Mark{At: now.UnixNano(), Conn: uint32(conn), What: "dial", Detail: addr})
}

// switchTo makes conn the connection whose requests are matched; the
// unanswered requests of the last one are recorded as never answered.
// Called under mu.
func (h *History) switchTo(conn uint64) {
	if conn == h.conn {
		return
	}
	for _, r := range h.pending[h.head:] {
		h.trip(r, -1, 0)
	}
	h.conn, h.pending, h.head = conn, h.pending[:0], 0
}

func (h *History) requestSent(e requestSent) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if e.conn < h.conn {
		return
	}
	h.switchTo(e.conn)
	r := sentReq{at: e.at, xid: e.xid, op: e.op}
	if e.connect {
		r.op = OpConnect
	}
	if h.head == len(h.pending) {
		h.pending, h.head = h.pending[:0], 0
	}
	h.pending = append(h.pending, r)
}

func (h *History) connected(e connected) {
	now := time.Now()
	h.mu.Lock()
	defer h.mu.Unlock()
	h.lastRead = now
	if e.conn != h.conn {
		return
	}
	what := "connected"
	if e.sessionID == 0 {
		what = "session expired"
	}
	h.marks.put(Mark{At: now.UnixNano(), Conn: uint32(e.conn), What: what, Session: e.sessionID, Timeout: int64(e.timeout)})
	h.answered(now, 0)
}

func (h *History) replyRead(e replyRead) {
	now := time.Now()
	h.mu.Lock()
	defer h.mu.Unlock()
	h.lastRead = now
	if e.conn == h.conn {
		h.answered(now, e.err)
	}
}

// answered records the oldest unanswered request as answered at now.
// Called under mu.
func (h *History) answered(now time.Time, code int32) {
	if h.head == len(h.pending) {
		return
	}
	r := h.pending[h.head]
	h.head++
	h.trip(r, int64(now.Sub(r.at)), code)
}

// trip records a request, answered after rtt (-1: never). Called under mu.
func (h *History) trip(r sentReq, rtt int64, code int32) {
	t := Trip{Sent: r.at.UnixNano(), RTT: rtt, Conn: uint32(h.conn), Xid: r.xid, Op: r.op, Err: code}
	switch r.op {
	case OpPing, OpSync, OpConnect:
		h.beats.put(t)
	default:
		h.trips.put(t)
	}
}

// HistorySnapshot is a copy of what a History holds, oldest first.
type HistorySnapshot struct {
	Beats    []Trip // pings, syncs and connect requests, answered or never answered
	Trips    []Trip // other requests
	Pending  []Trip // sent on the current connection and not answered yet (RTT -1)
	Marks    []Mark
	LastRead time.Time // the last frame read from the server; zero if none
}

// Snapshot returns a copy of what h holds.
func (h *History) Snapshot() HistorySnapshot {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := HistorySnapshot{Beats: h.beats.all(), Trips: h.trips.all(), Marks: h.marks.all(), LastRead: h.lastRead}
	for _, r := range h.pending[h.head:] {
		s.Pending = append(s.Pending, Trip{Sent: r.at.UnixNano(), RTT: -1, Conn: uint32(h.conn), Xid: r.xid, Op: r.op})
	}
	return s
}

// OpName names a request's opcode as ZooKeeper's documentation does.
func OpName(op int32) string {
	switch op {
	case OpConnect:
		return "connect"
	case zkwire.OpCreate:
		return "create"
	case 2:
		return "delete"
	case 3:
		return "exists"
	case 4:
		return "getData"
	case 5:
		return "setData"
	case 8:
		return "getChildren"
	case OpSync:
		return "sync"
	case OpPing:
		return "ping"
	case 12:
		return "getChildren2"
	case 13:
		return "check"
	case zkwire.OpMulti:
		return "multi"
	case 19:
		return "createContainer"
	case -11:
		return "closeSession"
	case 100:
		return "auth"
	case zkwire.OpSetWatches:
		return "setWatches"
	}
	return "op" + strconv.Itoa(int(op))
}

// ring is a fixed-size ring of the last values put.
type ring[T any] struct {
	buf []T
	n   uint64 // values put in all
}

func newRing[T any](size int) ring[T] { return ring[T]{buf: make([]T, size)} }

func (r *ring[T]) put(v T) {
	r.buf[r.n%uint64(len(r.buf))] = v
	r.n++
}

// all returns the values kept, oldest first.
func (r *ring[T]) all() []T {
	size := uint64(len(r.buf))
	if r.n <= size {
		return append([]T(nil), r.buf[:r.n]...)
	}
	at := r.n % size
	return append(append([]T(nil), r.buf[at:]...), r.buf[:at]...)
}
