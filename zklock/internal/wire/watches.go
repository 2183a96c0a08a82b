package wire

import (
	"sync"
	"sync/atomic"

	"github.com/zklockkit/zklockkit/zklock/internal/zkwire"
)

// ZooKeeper's error code for a node that does not exist; an exists read
// answered with it sets a watch on the node's creation.
const errNoNode int32 = -101

// watchKind is the kind of watch go-zookeeper registers (its watchType).
type watchKind uint8

const (
	watchData  watchKind = iota // getData, or exists on a node that exists
	watchExist                  // exists on a node that does not
	watchChild                  // getChildren, getChildren2
)

type watchKey struct {
	path string
	kind watchKind
}

// watchSet follows, from the wire, the watches go-zookeeper holds for
// the session, to tell whether it will send setWatches on a reconnection
// (see gatedConn): it adds a watch when a read that asked for one is
// answered as go-zookeeper's own callback does (v1.0.4: an exists answered
// "no node" watches the node's creation, any other read watches only on
// success), and removes the watches an event fires as go-zookeeper's
// notifyWatches does. A new session starts with none.
//
// It errs only towards holding watches: a read whose path it could not
// read, or a setWatches it did not foresee, leaves it with watches it
// cannot name, which only forget clears; and a watch answered by a frame
// cut short (its header read, the connection closed before its body)
// was never added by go-zookeeper, and is never fired. Either costs a
// gate's bound once (gatedConn calls forget when no setWatches followed).
// It never drops a watch go-zookeeper holds: a notification is published
// only once all of it has been read, and what the tap has read reaches
// go-zookeeper before the connection's error does (bufferedConn returns
// its buffer first).
type watchSet struct {
	mu      sync.Mutex
	conn    uint64                // the connection pending belongs to
	pending map[int32]watchRead   // reads asking for a watch, by xid, not yet answered
	set     map[watchKey]struct{} // watches go-zookeeper holds
	unnamed bool                  // watches it may hold that set does not name
	sid     int64                 // the session the watches belong to
	// awaited is len(pending), read without mu so that the answers of a
	// client with no watching read in flight cost no lock. A read is on
	// record before its request is written (see tap.Write), so before its
	// answer can be read.
	awaited atomic.Int32
}

// watchRead is a read that asked for a watch.
type watchRead struct {
	op   int32
	path string // "" if it could not be read
}

var (
	_ tapSubscriber    = (*watchSet)(nil)
	_ notifySubscriber = (*watchSet)(nil)
)

// any reports whether go-zookeeper may hold a watch.
func (w *watchSet) any() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.unnamed || len(w.set) > 0
}

// forget drops every watch: go-zookeeper showed it holds none.
func (w *watchSet) forget() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.set, w.unnamed = nil, false
}

func (w *watchSet) requestSent(e requestSent) {
	if e.connect || !e.watch && e.op != zkwire.OpSetWatches {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case e.watch:
		if e.conn != w.conn || w.pending == nil {
			// (see connected)
			w.conn, w.pending = e.conn, make(map[int32]watchRead)
			w.awaited.Store(0)
		}
		w.pending[e.xid] = watchRead{op: e.op, path: e.watchPath}
		w.awaited.Store(int32(len(w.pending)))
	case e.op == zkwire.OpSetWatches && len(w.set) == 0:
		w.unnamed = true // go-zookeeper holds watches we did not see set
	}
}

func (w *watchSet) connected(e connected) {
	w.mu.Lock()
	defer w.mu.Unlock()
	// Reads unanswered on an earlier connection were failed by
	// go-zookeeper: drop them, so that answers on this one take no lock.
	w.conn, w.pending = e.conn, nil
	w.awaited.Store(0)
	if e.sessionID != w.sid {
		// A new session (or 0: the old one expired): go-zookeeper has
		// dropped the old session's watches.
		w.set, w.unnamed, w.sid = nil, false, e.sessionID
	}
}

func (w *watchSet) replyRead(e replyRead) {
	if w.awaited.Load() == 0 {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if e.conn != w.conn {
		return
	}
	r, ok := w.pending[e.xid]
	if !ok {
		return
	}
	delete(w.pending, e.xid)
	w.awaited.Store(int32(len(w.pending)))
	var kind watchKind
	switch {
	case e.err == 0 && (r.op == zkwire.OpExists || r.op == zkwire.OpGetData):
		kind = watchData
	case e.err == 0:
		kind = watchChild
	case e.err == errNoNode && r.op == zkwire.OpExists:
		kind = watchExist
	default:
		return
	}
	if r.path == "" {
		w.unnamed = true
		return
	}
	if w.set == nil {
		w.set = make(map[watchKey]struct{})
	}
	w.set[watchKey{r.path, kind}] = struct{}{}
}

// notified removes the watches an event fires, as go-zookeeper's
// notifyWatches does.
func (w *watchSet) notified(e notified) {
	var kinds []watchKind
	switch e.typ {
	case zkwire.EventNodeCreated:
		kinds = []watchKind{watchExist}
	case zkwire.EventNodeDataChanged:
		kinds = []watchKind{watchExist, watchData}
	case zkwire.EventNodeChildrenChanged:
		kinds = []watchKind{watchChild}
	case zkwire.EventNodeDeleted:
		kinds = []watchKind{watchExist, watchData, watchChild}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, k := range kinds {
		delete(w.set, watchKey{e.path, k})
	}
}
