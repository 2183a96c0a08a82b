package wire

import (
	"net"
	"slices"
	"sync"
	"time"
)

// Tracker turns each connection go-zookeeper dials into a tracked
// connection, a stack of wrappers each with one job:
//
//	go-zookeeper
//	  gatedConn     on a reconnection with watches, holds the first answer until setWatches is sent (gate.go)
//	  bufferedConn  reads ahead into a buffer; applies deadlines lazily (bufconn.go)
//	  tap           parses the frames passing by and publishes events (tap.go)
//	the network connection
//
// The tap's subscribers learn what the recipe and the session handling
// need: liveness (the anchor, timeout and session id), czxids (fencing
// tokens), onWire (creates on the wire) and watches (whether go-zookeeper
// holds watches, which decides the gate); the gate is the fifth on a
// reconnection that has one.
type Tracker struct {
	live    *liveness
	czxids  *czxids
	onWire  *onWire
	watches *watchSet
	subs    []tapSubscriber
	hist    *History // see Record; nil when not recording

	mu  sync.Mutex
	cur net.Conn // the network connection dialed last (Drop)
}

// NewTracker returns a Tracker that has seen no connection yet.
func NewTracker() *Tracker {
	t := &Tracker{live: &liveness{}, czxids: &czxids{}, onWire: &onWire{}, watches: &watchSet{}}
	t.subs = []tapSubscriber{t.live, t.czxids, t.onWire, t.watches}
	return t
}

// Dial returns c, a connection go-zookeeper dialed, as a tracked
// connection. Each call starts a new connection generation: frames of an
// earlier connection no longer count.
func (t *Tracker) Dial(c net.Conn) net.Conn {
	t.mu.Lock()
	t.cur = c
	t.mu.Unlock()
	conn, resumed := t.live.connecting()
	if t.hist != nil {
		t.hist.dialed(conn, c.RemoteAddr().String())
	}
	// go-zookeeper reads its last zxid for setWatches only if it holds
	// watches (see gatedConn); the first connection of a session has
	// none to restore.
	if !resumed || !t.watches.any() {
		return &bufferedConn{Conn: newTap(c, conn, t.subs)}
	}
	g := &gatedConn{wait: SetWatchesWait, open: make(chan struct{}), noSetWatches: t.watches.forget}
	g.Conn = &bufferedConn{Conn: newTap(c, conn, append(slices.Clip(t.subs), g))}
	return g
}

// OnCommit has fn told, on the goroutine that reads the connection, of
// each write (a create, delete, setData or multi) that the server answers
// with success, with the session it was sent on and its send time, when
// the request sent before it on the same connection was sent no more than
// gap(negotiated timeout) earlier. A follower forwards a write to the
// leader and answers success only once the leader has committed it, so
// such a write proves what an answered sync does (session.quorum). fn
// must not block. Set it before the first Dial.
func (t *Tracker) OnCommit(gap func(timeout time.Duration) time.Duration, fn func(sid int64, sent time.Time)) {
	t.live.mu.Lock()
	t.live.commit = commitHook{gap: gap, fn: fn}
	t.live.mu.Unlock()
}

// Drop closes the network connection dialed last, as a broken network
// would: go-zookeeper reconnects, to the next server of its list, and
// resumes the session there if it still lives.
func (t *Tracker) Drop() {
	t.mu.Lock()
	c := t.cur
	t.mu.Unlock()
	if c != nil {
		_ = c.Close()
	}
}

// Written returns a channel closed once a create request for path has
// been written to the connection; stop forgets it. A request queued on
// the session after that is answered after the create (the server answers
// a session in order): this is how the recipe pipelines a listing behind
// its create.
func (t *Tracker) Written(path string) (written <-chan struct{}, stop func()) {
	return t.onWire.notify(path)
}

// Created returns, and forgets, the czxid of the node created by a
// request for path (the lease's fencing token), or 0 if the wire did not
// show it.
func (t *Tracker) Created(path string) int64 { return t.czxids.take(path) }

// SessionID returns the session id of the last connect response that
// carried one.
func (t *Tracker) SessionID() int64 { return t.live.sessionID() }

// Snapshot returns the latest moment at which the server is known to have
// heard from us (the anchor), and the negotiated session timeout.
func (t *Tracker) Snapshot() (anchor time.Time, timeout time.Duration) { return t.live.snapshot() }

// Established returns the session of the last connect response and the
// send time of its connect request: a session is created, and resumed on
// another server, by the leader, so that is a moment the leader is known
// to have heard from it.
func (t *Tracker) Established() (sid int64, sent time.Time) { return t.live.established() }
