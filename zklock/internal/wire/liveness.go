package wire

import (
	"sync"
	"time"

	"github.com/zklockkit/zklockkit/zklock/internal/zkwire"
)

// liveness works out, from the frames on the wire, the latest moment at
// which the ZooKeeper server is known to have heard from this client (the
// anchor). The server expires a session only after a full session timeout
// without a packet from the client, so no other client can be granted our
// locks before anchor + negotiated timeout. It also keeps the negotiated
// timeout and the session id, from each connect response. It is a tap
// subscriber (see Tracker).
//
// Every frame the client writes is a request that the server answers in
// order (pings included); watch notifications answer nothing. When an
// answer arrives, the request it answers (the oldest outstanding one) was
// sent no later than its send time, so that send time is a safe anchor.
// The first frames on each connection are the connect request and
// response.
//
// It also tells the session of each write the server answered with
// success, when the request before it on the connection was sent recently
// enough (see OnCommit): such a write, like a sync, went through the
// leader, and so proves the session alive (session.quorum).
type liveness struct {
	mu      sync.Mutex
	conn    uint64       // connection generation; frames of an old connection are ignored
	pending []unanswered // requests sent, oldest first; those from head on are not yet answered
	head    int          // the oldest unanswered request's index in pending
	last    time.Time    // send time of the connection's latest request that touches the session
	anchor  time.Time    // the server heard from us at or after this time
	timeout time.Duration
	sid     int64
	expired bool      // the last connect response carried no session
	est     time.Time // send time of the connect request of sid's last connect

	commit commitHook // see Tracker.OnCommit; fn nil: nobody told
}

// unanswered is a request sent and not yet answered.
type unanswered struct {
	at   time.Time // its send time
	prev time.Time // the send time of the request before it that touched the session; zero if none
	op   int32
}

// commitHook is Tracker.OnCommit's: gap gives, for a negotiated timeout,
// how long before a write the request before it may have been sent for
// the write to count; fn is told of each write that counts.
type commitHook struct {
	gap func(timeout time.Duration) time.Duration
	fn  func(sid int64, sent time.Time)
}

// isWrite reports whether op is a request that a follower forwards to the
// leader and answers with success only once the leader has committed it.
func isWrite(op int32) bool {
	switch op {
	case zkwire.OpCreate, opDelete, opSetData, zkwire.OpMulti, opCreate2, opCreateContainer, opCreateTTL:
		return true
	}
	return false
}

// ZooKeeper's opcodes that zkwire does not name: writes (isWrite), and the
// two requests the server handles without touching the session (auth and
// sasl, which the session's previous request must not be).
const (
	opDelete          int32 = 2
	opSetData         int32 = 5
	opCreate2         int32 = 15
	opCreateContainer int32 = 19
	opCreateTTL       int32 = 21
	opAuth            int32 = 100
	opSASL            int32 = 102
)

var _ tapSubscriber = (*liveness)(nil)

// connecting starts a new connection generation and forgets the send
// times of the last connection's unanswered requests. resumed reports
// whether a session existed before it.
func (l *liveness) connecting() (conn uint64, resumed bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.conn++
	l.pending, l.head = l.pending[:0], 0
	l.last = time.Time{}
	return l.conn, l.sid != 0
}

// sessionID returns the session id of the last connect response that
// carried one.
func (l *liveness) sessionID() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.sid
}

// snapshot returns the anchor and the negotiated session timeout.
func (l *liveness) snapshot() (anchor time.Time, timeout time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.anchor, l.timeout
}

func (l *liveness) requestSent(e requestSent) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if e.conn != l.conn {
		return
	}
	p := unanswered{at: e.at, prev: l.last, op: e.op}
	if e.connect {
		p.op = OpConnect
	}
	l.pending = append(l.pending, p)
	if p.op != opAuth && p.op != opSASL {
		l.last = e.at
	}
}

func (l *liveness) connected(e connected) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if e.conn != l.conn {
		return
	}
	if e.sessionID == 0 {
		// session expired: nothing the server heard counts any more
		l.pending, l.head = l.pending[:0], 0
		l.expired = true
		return
	}
	l.timeout, l.sid, l.expired = e.timeout, e.sessionID, false
	if l.head < len(l.pending) {
		l.est = l.pending[l.head].at // the connect request's
	}
	l.answered()
}

// established returns the session id and the send time of the connect
// request that established or resumed it.
func (l *liveness) established() (int64, time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.sid, l.est
}

func (l *liveness) replyRead(e replyRead) {
	l.mu.Lock()
	if e.conn != l.conn {
		l.mu.Unlock()
		return
	}
	p, ok := l.answered()
	fn, sid := l.commit.fn, l.sid
	counts := ok && fn != nil && e.err == 0 && isWrite(p.op) && sid != 0 && !l.expired &&
		!p.prev.IsZero() && p.at.Sub(p.prev) <= l.commit.gap(l.timeout)
	l.mu.Unlock()
	if counts {
		fn(sid, p.at)
	}
}

// answered moves the anchor to the send time of the oldest unanswered
// request, which the frame just read answers, and returns that request.
// Called under mu.
func (l *liveness) answered() (unanswered, bool) {
	if l.head == len(l.pending) {
		return unanswered{}, false
	}
	p := l.pending[l.head]
	l.head++
	switch {
	case l.head == len(l.pending):
		// All answered: the next request goes to the front again, so
		// that the slice's room is reused (sliced off its front, it was
		// reallocated every few requests).
		l.pending, l.head = l.pending[:0], 0
	case l.head >= 64 && l.head*2 >= len(l.pending):
		// A connection never idle: move the unanswered ones to the
		// front, so that the answered ones do not pile up.
		n := copy(l.pending, l.pending[l.head:])
		l.pending, l.head = l.pending[:n], 0
	}
	if p.at.After(l.anchor) {
		l.anchor = p.at
	}
	return p, true
}
