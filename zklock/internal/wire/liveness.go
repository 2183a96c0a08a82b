package wire

import (
	"sync"
	"time"
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
type liveness struct {
	mu      sync.Mutex
	conn    uint64      // connection generation; frames of an old connection are ignored
	pending []time.Time // send times of unanswered requests, oldest first
	anchor  time.Time   // the server heard from us at or after this time
	timeout time.Duration
	sid     int64
	est     time.Time // send time of the connect request of sid's last connect
}

var _ tapSubscriber = (*liveness)(nil)

// connecting starts a new connection generation and forgets the send
// times of the last connection's unanswered requests. resumed reports
// whether a session existed before it.
func (l *liveness) connecting() (conn uint64, resumed bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.conn++
	l.pending = l.pending[:0]
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
	if e.conn == l.conn {
		l.pending = append(l.pending, e.at)
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
		l.pending = l.pending[:0]
		return
	}
	l.timeout, l.sid = e.timeout, e.sessionID
	if len(l.pending) > 0 {
		l.est = l.pending[0] // the connect request's
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
	defer l.mu.Unlock()
	if e.conn == l.conn {
		l.answered()
	}
}

// answered moves the anchor to the send time of the oldest unanswered
// request, which the frame just read answers. Called under mu.
func (l *liveness) answered() {
	if len(l.pending) == 0 {
		return
	}
	at := l.pending[0]
	l.pending = l.pending[1:]
	if at.After(l.anchor) {
		l.anchor = at
	}
}
