package zklock

import (
	"net"
	"slices"
	"time"
)

// createWire is all the lock recipe learns from the wire (see
// createAndList and waiter.create).
type createWire interface {
	// written returns a channel closed once a create request for path
	// has been written to the connection; stop forgets it.
	written(path string) (written <-chan struct{}, stop func())
	// created returns, and forgets, the czxid of the node created by a
	// request for path, or 0 if the wire did not show it.
	created(path string) int64
}

// sessionWire is what the session handling learns from the wire (see
// onSessionEvent, unreachable and lossDeadline).
type sessionWire interface {
	// sessionID returns the session id of the last connect response that
	// carried one.
	sessionID() int64
	// snapshot returns the latest moment at which the server is known to
	// have heard from us, and the negotiated session timeout.
	snapshot() (anchor time.Time, timeout time.Duration)
	// established returns the session of the last connect response and
	// the send time of its connect request: a session is created, and
	// resumed on another server, by the leader, so that is a moment the
	// leader is known to have heard from it (see quorum.go).
	established() (sid int64, sent time.Time)
}

// tracker turns each connection go-zookeeper dials into a tracked
// connection, a stack of wrappers each with one job:
//
//	go-zookeeper
//	  gatedConn     on a reconnection, holds the first answer until setWatches is sent (gate.go)
//	  bufferedConn  reads ahead into a buffer; applies deadlines lazily (bufconn.go)
//	  tap           parses the frames passing by and publishes events (tap.go)
//	the network connection
//
// The tap's subscribers learn what the recipe and the session handling
// need: liveness (the anchor, timeout and session id), czxids (fencing
// tokens) and onWire (creates on the wire); the gate is the fourth on a
// reconnection.
type tracker struct {
	live   *liveness
	czxids *czxids
	onWire *onWire
	subs   []tapSubscriber
}

var (
	_ createWire  = (*tracker)(nil)
	_ sessionWire = (*liveness)(nil)
)

func newTracker() *tracker {
	t := &tracker{live: &liveness{}, czxids: &czxids{}, onWire: &onWire{}}
	t.subs = []tapSubscriber{t.live, t.czxids, t.onWire}
	return t
}

// dial returns c as a tracked connection.
func (t *tracker) dial(c net.Conn) net.Conn {
	conn, resumed := t.live.connecting()
	if !resumed {
		return &bufferedConn{Conn: newTap(c, conn, t.subs)}
	}
	g := &gatedConn{wait: setWatchesWait, open: make(chan struct{})}
	g.Conn = &bufferedConn{Conn: newTap(c, conn, append(slices.Clip(t.subs), g))}
	return g
}

func (t *tracker) written(path string) (<-chan struct{}, func()) { return t.onWire.notify(path) }
func (t *tracker) created(path string) int64                     { return t.czxids.take(path) }
