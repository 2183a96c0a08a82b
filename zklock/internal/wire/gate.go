package wire

import (
	"net"
	"sync"
	"time"

	"github.com/zklockkit/zklockkit/zklock/internal/zkwire"
)

// SetWatchesWait bounds a gate's hold: longer than go-zookeeper takes from
// the connect response to sending setWatches, short enough not to matter
// on a reconnection that has no watches to restore. 20 ms was passed once
// under -race on the 2-core machine at a CI rehearsal's load (the reader
// stored a zxid after the gate gave up, while go-zookeeper's setWatches,
// whose zxid it had read, waited in its send queue).
const SetWatchesWait = 100 * time.Millisecond

// gatedConn is the top of a tracked connection made after a session
// existed (see Tracker.Dial). It keeps the first answer to a request from
// go-zookeeper's reader until go-zookeeper has written setWatches, or
// until wait after the connect response when it has no watches to
// restore. Watch notifications and pings pass.
//
// go-zookeeper (v1.0.4) reads the last zxid it has seen, to restore the
// watches, without a lock, while its reader may already be storing the
// zxid of an answer to a request queued before the reconnection
// (go-zookeeper/zk#35, unmerged). The race detector fails our tests on it
// now and then. Once setWatches is on the wire, that read is behind us:
// its request passed through go-zookeeper's send queue to this
// connection's Write, which opens the gate the reader waits on. Without
// watches there is no such read.
//
// The gate learns what passes as a subscriber of the connection's tap.
type gatedConn struct {
	net.Conn
	wait time.Duration
	open chan struct{} // closed once the gate opens
	once sync.Once

	rmu sync.Mutex // serializes Reads: one hold at a time

	mu       sync.Mutex
	connAt   time.Time // when the connect response was read
	answered bool      // an answer to a request was read and not yet held
}

var _ tapSubscriber = (*gatedConn)(nil)

// Read reads, and holds what it read until the gate opens if it holds the
// first answer to a request.
func (g *gatedConn) Read(p []byte) (int, error) {
	g.rmu.Lock()
	defer g.rmu.Unlock()
	n, err := g.Conn.Read(p)
	g.hold()
	return n, err
}

func (g *gatedConn) hold() {
	g.mu.Lock()
	answered, connAt := g.answered, g.connAt
	g.answered = false
	g.mu.Unlock()
	if !answered {
		return
	}
	select {
	case <-g.open:
		return
	default:
	}
	if d := time.Until(connAt.Add(g.wait)); d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-g.open:
			return
		case <-t.C:
		}
	}
	g.openGate()
}

func (g *gatedConn) openGate() { g.once.Do(func() { close(g.open) }) }

func (g *gatedConn) requestSent(e requestSent) {
	if !e.connect && e.op == zkwire.OpSetWatches {
		g.openGate()
	}
}

func (g *gatedConn) connected(connected) {
	g.mu.Lock()
	g.connAt = time.Now()
	g.mu.Unlock()
}

func (g *gatedConn) replyRead(e replyRead) {
	if e.xid < 0 { // a ping's answer, or another of go-zookeeper's own
		return
	}
	g.mu.Lock()
	g.answered = true
	g.mu.Unlock()
}
