package wire

import (
	"sync"
	"sync/atomic"
)

// czxids captures the czxid of the nodes this client creates. A create's
// reply carries the zxid of its transaction, which is the new node's czxid
// (its fencing token); go-zookeeper drops it, so it is taken from the wire.
// It is a tap subscriber (see Tracker): creates[xid] is the path a pending
// create asked for (protected names make it unique), created[path] the
// czxid once the create succeeded, until take.
type czxids struct {
	mu      sync.Mutex
	creates map[int32]string
	created map[string]int64
	// awaited is len(creates), read without mu so that the replies of a
	// client with no create in flight (most of them) cost no lock. A
	// create is on record before its request is written (see tap.Write),
	// so before its reply can be read.
	awaited atomic.Int32
}

var _ tapSubscriber = (*czxids)(nil)

// maxTracked bounds the creates and czxids remembered: entries nobody
// takes (a create whose caller gave up) are dropped all at once past it.
const maxTracked = 8192

// take returns, and forgets, the czxid of the node created by a request
// for path, or 0 if the wire did not show it.
func (z *czxids) take(path string) int64 {
	z.mu.Lock()
	defer z.mu.Unlock()
	czxid := z.created[path]
	delete(z.created, path)
	return czxid
}

func (z *czxids) requestSent(e requestSent) {
	if e.createPath == "" {
		return
	}
	z.mu.Lock()
	defer z.mu.Unlock()
	if z.creates == nil || len(z.creates) > maxTracked {
		z.creates = make(map[int32]string)
	}
	z.creates[e.xid] = e.createPath
	z.awaited.Store(int32(len(z.creates)))
}

func (z *czxids) connected(connected) {}

func (z *czxids) replyRead(e replyRead) {
	if z.awaited.Load() == 0 {
		return
	}
	z.mu.Lock()
	defer z.mu.Unlock()
	path, ok := z.creates[e.xid]
	if !ok {
		return
	}
	delete(z.creates, e.xid)
	z.awaited.Store(int32(len(z.creates)))
	if e.err != 0 {
		return
	}
	if z.created == nil || len(z.created) > maxTracked {
		z.created = make(map[string]int64) // abandoned entries: start over
	}
	z.created[path] = e.zxid
}
