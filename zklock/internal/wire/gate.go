package wire

import (
	"net"
	"sync"
	"time"

	"github.com/zklockkit/zklockkit/zklock/internal/zkwire"
)

// SetWatchesWait bounds a gate's hold: far longer than go-zookeeper takes
// from the connect response to writing setWatches (under -race on the
// 2-core machine at a CI rehearsal's load, 20 ms was once passed), and
// short enough that a gate armed on a wrong belief that go-zookeeper holds
// watches costs one short stall (see watchSet).
const SetWatchesWait = time.Second

// gatedConn is the top of a tracked connection made after a session
// existed, while go-zookeeper holds watches (see Tracker.Dial). It keeps
// the first answer to a request from go-zookeeper's reader until
// go-zookeeper has written setWatches, or until wait after the connect
// response. Watch notifications and pings pass.
//
// go-zookeeper (v1.0.4) reads the last zxid it has seen, to restore the
// watches, without a lock, while its reader may already be storing the
// zxid of an answer to a request queued before the reconnection
// (go-zookeeper/zk#35, unmerged). The race detector fails our tests on it
// now and then; and setWatches sent with the later zxid would tell the
// server the client saw changes it did not, whose events are then never
// sent. Once setWatches is on the wire, that read is behind us: its
// request passed through go-zookeeper's send queue to this connection's
// Write, which opens the gate the reader waits on. go-zookeeper makes the
// read only if it holds watches; without any, the connection has no gate
// (the Tracker's watchSet follows them from the wire).
//
// If wait passes after the connect response with no setWatches written,
// go-zookeeper held no watches after all: noSetWatches tells the
// watchSet, so that the next reconnection has no gate.
//
// The gate learns what passes as a subscriber of the connection's tap.
type gatedConn struct {
	net.Conn
	wait         time.Duration
	open         chan struct{} // closed once the gate opens
	once         sync.Once
	noSetWatches func() // called when wait passed after the connect response without setWatches

	rmu sync.Mutex // serializes Reads: one hold at a time

	mu            sync.Mutex
	connAt        time.Time // when the connect response was read
	answered      bool      // an answer to a request was read and not yet held
	setWatchesOut bool      // setWatches was written
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
	g.expire()
}

func (g *gatedConn) openGate() { g.once.Do(func() { close(g.open) }) }

func (g *gatedConn) requestSent(e requestSent) {
	if !e.connect && e.op == zkwire.OpSetWatches {
		g.mu.Lock()
		g.setWatchesOut = true
		g.mu.Unlock()
		g.openGate()
	}
}

func (g *gatedConn) connected(connected) {
	g.mu.Lock()
	g.connAt = time.Now()
	g.mu.Unlock()
	time.AfterFunc(g.wait, g.expire)
}

// expire opens the gate once wait has passed after the connect response,
// and tells noSetWatches if no setWatches was written by then.
func (g *gatedConn) expire() {
	g.once.Do(func() {
		g.mu.Lock()
		out := g.setWatchesOut
		g.mu.Unlock()
		if !out && g.noSetWatches != nil {
			g.noSetWatches()
		}
		close(g.open)
	})
}

func (g *gatedConn) replyRead(e replyRead) {
	if e.xid < 0 { // a ping's answer, or another of go-zookeeper's own
		return
	}
	g.mu.Lock()
	g.answered = true
	g.mu.Unlock()
}
