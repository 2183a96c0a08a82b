package zklock

import (
	"encoding/binary"
	"net"
	"sync"
	"time"
)

// liveness works out, from the bytes on the wire, the latest moment at which
// the ZooKeeper server is known to have heard from this client. The server
// expires a session only after a full session timeout without a packet from
// the client, so no other client can be granted our locks before
// anchor + negotiated timeout.
//
// Every frame the client writes is a request that the server answers in
// order (pings included); watch notifications (xid -1) answer nothing. When
// an answer arrives, the request it answers (the oldest outstanding one) was
// sent no later than its send time, so that send time is a safe anchor. The
// first frames on each connection are the connect request and response,
// which also carry the negotiated timeout and the session id.
type liveness struct {
	mu        sync.Mutex
	pending   []time.Time // send times of unanswered requests, oldest first
	anchor    time.Time   // the server heard from us at or after this time
	timeout   time.Duration
	sessionID int64
	conns     uint64 // connection generation; frames of an old connection are ignored

	// Create replies carry the zxid of their transaction, which is the new
	// node's czxid (its fencing token). go-zookeeper drops it, so it is
	// taken from the wire: creates[xid] is the path a pending create asked
	// for (protected names make it unique), created[path] its zxid.
	creates map[int32]string
	created map[string]int64
	// onWire[path] is closed when a create request for path is written
	// (see createNode: a request queued after that is answered after it).
	onWire map[string]chan struct{}
}

// notifyWritten returns a channel closed once a create request for path
// has been written to the connection; stop forgets it.
func (l *liveness) notifyWritten(path string) (written <-chan struct{}, stop func()) {
	ch := make(chan struct{})
	l.mu.Lock()
	if l.onWire == nil {
		l.onWire = make(map[string]chan struct{})
	}
	l.onWire[path] = ch
	l.mu.Unlock()
	return ch, func() {
		l.mu.Lock()
		if l.onWire[path] == ch {
			delete(l.onWire, path)
		}
		l.mu.Unlock()
	}
}

// takeCreated returns (and forgets) the czxid of the node created from the
// request path path, or 0 if unknown.
func (l *liveness) takeCreated(path string) int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	z := l.created[path]
	delete(l.created, path)
	return z
}

func (l *liveness) snapshot() (anchor time.Time, timeout time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.anchor, l.timeout
}

// wrap returns a net.Conn that feeds l.
func (l *liveness) wrap(c net.Conn) net.Conn {
	l.mu.Lock()
	l.conns++
	gen := l.conns
	l.pending = l.pending[:0]
	hadSession := l.sessionID != 0
	l.mu.Unlock()
	tc := &trackedConn{Conn: c, l: l, gen: gen, rd: frameScanner{want: readWant}, wr: frameScanner{want: writeWant}}
	if hadSession {
		tc.gate = make(chan struct{})
		tc.gateWait = setWatchesWait
	}
	return tc
}

func (l *liveness) sent(gen uint64, at time.Time, hdr []byte, first bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if gen != l.conns {
		return
	}
	l.pending = append(l.pending, at)
	if first {
		return
	}
	at4, ok := createPathAt(hdr)
	if !ok || len(hdr) < at4+4 {
		return
	}
	n := int(binary.BigEndian.Uint32(hdr[at4 : at4+4]))
	if n < 0 || at4+4+n > len(hdr) {
		return
	}
	if l.creates == nil || len(l.creates) > maxTracked {
		l.creates = make(map[int32]string)
	}
	path := string(hdr[at4+4 : at4+4+n])
	l.creates[int32(binary.BigEndian.Uint32(hdr[0:4]))] = path
	if ch, ok := l.onWire[path]; ok {
		delete(l.onWire, path)
		close(ch)
	}
}

func (l *liveness) received(gen uint64, hdr []byte, first bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if gen != l.conns {
		return
	}
	if first {
		// connect response: protocolVersion(4) timeOut(4) sessionId(8)
		if len(hdr) >= 16 {
			sid := int64(binary.BigEndian.Uint64(hdr[8:16]))
			if sid == 0 {
				// session expired: nothing the server heard counts any more
				l.pending = l.pending[:0]
				return
			}
			l.timeout = time.Duration(binary.BigEndian.Uint32(hdr[4:8])) * time.Millisecond
			l.sessionID = sid
		}
	} else if len(hdr) >= 4 {
		// reply: xid(4) zxid(8) err(4)
		xid := int32(binary.BigEndian.Uint32(hdr[:4]))
		if xid == -1 {
			return // watch notification: answers no request
		}
		if path, ok := l.creates[xid]; ok && len(hdr) >= 16 {
			delete(l.creates, xid)
			if binary.BigEndian.Uint32(hdr[12:16]) == 0 {
				if l.created == nil || len(l.created) > maxTracked {
					l.created = make(map[string]int64) // abandoned entries: start over
				}
				l.created[path] = int64(binary.BigEndian.Uint64(hdr[4:12]))
			}
		}
	}
	if len(l.pending) == 0 {
		return
	}
	at := l.pending[0]
	l.pending = l.pending[1:]
	if at.After(l.anchor) {
		l.anchor = at
	}
}

const (
	opCreate     = 1    // ZooKeeper's create opcode
	opMulti      = 14   // and its multi opcode
	opSetWatches = 101  // go-zookeeper's request restoring watches on reconnection
	maxTracked   = 8192 // bound on remembered creates
	maxPathLen   = 8192 // longest create path parsed from the wire
)

// trackedConn feeds liveness with the frames written and read, and saves
// system calls. go-zookeeper reads each reply with two reads straight from
// the socket (length, then body) and sets the read deadline twice per
// reply; trackedConn reads whatever has arrived into a buffer, so that under
// load one read serves many replies, and applies a read deadline only when
// it is about to block. Around each write go-zookeeper sets a deadline and
// clears it again; trackedConn applies the deadline in force when it writes.
// go-zookeeper reads from one goroutine and writes from one goroutine; the
// mutexes guard only against other callers.
type trackedConn struct {
	net.Conn
	l   *liveness
	gen uint64

	wmu    sync.Mutex
	wr     frameScanner
	wdl    time.Time // write deadline asked for
	wdlSet time.Time // write deadline in force on the socket

	// gate, on a connection made after a session existed, holds back the
	// first answer to a request until go-zookeeper has sent its request
	// to restore the session's watches (see holdAnswer); nil otherwise.
	gate     chan struct{}
	gateOnce sync.Once
	gateWait time.Duration

	rmu      sync.Mutex
	rd       frameScanner
	connAt   time.Time // when the connect response was read
	answered bool      // an answer to a request was read (gate not yet passed)
	rbuf     []byte    // bytes read from the socket and not yet returned
	rpos     int
	rerr     error // error that ended the last socket read, returned once rbuf is drained
	rdl      time.Time
	rdlSet   time.Time
	rdlDirty bool
}

// readBufSize is the read buffer: large enough for a burst of replies,
// small enough not to matter per connection.
const readBufSize = 32 << 10

func (c *trackedConn) SetDeadline(t time.Time) error {
	if err := c.SetReadDeadline(t); err != nil {
		return err
	}
	return c.SetWriteDeadline(t)
}

func (c *trackedConn) SetReadDeadline(t time.Time) error {
	c.rmu.Lock()
	c.rdl, c.rdlDirty = t, !t.Equal(c.rdlSet)
	c.rmu.Unlock()
	return nil
}

func (c *trackedConn) SetWriteDeadline(t time.Time) error {
	c.wmu.Lock()
	c.wdl = t
	c.wmu.Unlock()
	return nil
}

func (c *trackedConn) Write(p []byte) (int, error) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if !c.wdl.Equal(c.wdlSet) {
		if err := c.Conn.SetWriteDeadline(c.wdl); err != nil {
			return 0, err
		}
		c.wdlSet = c.wdl
	}
	// Record the frames before they go out: go-zookeeper reads on another
	// goroutine, and the server's answer can be read before this Write
	// returns. Recorded after, that answer would find no send time to
	// match (every later answer then matched an older one) and no create
	// to take a fencing token from. A send time taken a moment early only
	// makes the anchor earlier, never later; if the write fails, the
	// connection is dropped with everything recorded for it.
	now := time.Now()
	c.wr.scan(p, func(hdr []byte, frame int) {
		c.l.sent(c.gen, now, hdr, frame == 1)
		if frame > 1 && len(hdr) >= 8 && int32(binary.BigEndian.Uint32(hdr[4:8])) == opSetWatches {
			c.openGate()
		}
	})
	return c.Conn.Write(p)
}

func (c *trackedConn) Read(p []byte) (int, error) {
	c.rmu.Lock()
	defer c.rmu.Unlock()
	if c.rpos == len(c.rbuf) {
		if c.rerr != nil {
			err := c.rerr
			c.rerr = nil
			return 0, err
		}
		if c.rdlDirty {
			if err := c.Conn.SetReadDeadline(c.rdl); err != nil {
				return 0, err
			}
			c.rdlSet, c.rdlDirty = c.rdl, false
		}
		if len(p) >= readBufSize {
			// a large body: read it in place
			n, err := c.Conn.Read(p)
			c.scanRead(p[:n])
			c.holdAnswer()
			return n, err
		}
		if c.rbuf == nil {
			c.rbuf = make([]byte, 0, readBufSize)
		}
		n, err := c.Conn.Read(c.rbuf[:cap(c.rbuf)])
		c.rbuf, c.rpos, c.rerr = c.rbuf[:n], 0, err
		c.scanRead(c.rbuf)
		c.holdAnswer()
		if n == 0 {
			c.rerr = nil
			return 0, err
		}
	}
	n := copy(p, c.rbuf[c.rpos:])
	c.rpos += n
	return n, nil
}

func (c *trackedConn) scanRead(p []byte) {
	if len(p) > 0 {
		c.rd.scan(p, func(hdr []byte, frame int) {
			c.l.received(c.gen, hdr, frame == 1)
			switch {
			case frame == 1:
				c.connAt = time.Now()
			case c.gate != nil && len(hdr) >= 4 && int32(binary.BigEndian.Uint32(hdr[:4])) >= 0:
				c.answered = true
			}
		})
	}
}

// setWatchesWait bounds holdAnswer's wait: longer than go-zookeeper takes
// from the connect response to sending setWatches, short enough not to
// matter on a reconnection that has no watches to restore.
const setWatchesWait = 20 * time.Millisecond

// holdAnswer keeps the first answer to a request on a reconnection from
// go-zookeeper's reader until go-zookeeper has sent setWatches, or until
// gateWait after the connect response when it has no watches to restore.
//
// go-zookeeper (v1.0.4) reads the last zxid it has seen, to restore the
// watches, without a lock, while its reader may already be storing the
// zxid of an answer to a request queued before the reconnection
// (go-zookeeper/zk#35, unmerged). The race detector fails our tests on it
// now and then. Once setWatches is on the wire, that read is behind us:
// its request passed through go-zookeeper's send queue to this
// connection's Write, which opens the gate the reader waits on. Without
// watches there is no such read. Called by the reader, under rmu.
func (c *trackedConn) holdAnswer() {
	if !c.answered {
		return
	}
	c.answered = false
	select {
	case <-c.gate:
		return
	default:
	}
	if d := time.Until(c.connAt.Add(c.gateWait)); d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-c.gate:
			return
		case <-t.C:
		}
	}
	c.openGate()
}

func (c *trackedConn) openGate() {
	if c.gate != nil {
		c.gateOnce.Do(func() { close(c.gate) })
	}
}

// frameScanner splits a stream of 4-byte-length-prefixed frames and calls a
// function with the first bytes of each frame's body, as many as want asks
// for given those seen so far, as soon as they have arrived.
type frameScanner struct {
	want   func(hdr []byte, frame int) int // body bytes needed (frame counts from 1)
	lenBuf [4]byte
	lenN   int
	length int    // body length of the current frame
	hdr    []byte // body bytes collected
	skip   int    // body bytes still to skip after the callback
	frames int    // frames whose callback has run
}

// readWant: the connect reply (first frame) has its timeout and session id
// in 16 bytes; later replies have xid, zxid and err in 16.
func readWant(hdr []byte, frame int) int { return 16 }

// writeWant: the connect request needs nothing; a request has xid and
// opcode in 8 bytes, and a create (alone, or first in a multi) the length
// and bytes of its path.
func writeWant(hdr []byte, frame int) int {
	if frame == 1 {
		return 0
	}
	at, ok := createPathAt(hdr)
	switch {
	case !ok:
		return at
	case len(hdr) < at+4:
		return at + 4
	}
	n := int(binary.BigEndian.Uint32(hdr[at : at+4]))
	if n < 0 || n > maxPathLen {
		return at + 4
	}
	return at + 4 + n
}

// createPathAt reads a request's header as far as hdr goes. If the request
// creates a node (a create, or a multi whose first operation is one: an
// acquire's create with its queue's child count, see createAndList), it
// returns the offset of the create's path and true. Otherwise it returns
// false and how many bytes it needs to tell, which is no more than it has
// when the request creates nothing.
//
// Layout: xid(4) opcode(4), then a create's path length(4) and path; a
// multi's first operation starts with its own header, type(4) done(1)
// err(4).
func createPathAt(hdr []byte) (int, bool) {
	if len(hdr) < 8 {
		return 8, false
	}
	switch int32(binary.BigEndian.Uint32(hdr[4:8])) {
	case opCreate:
		return 8, true
	case opMulti:
		if len(hdr) < 17 {
			return 17, false
		}
		if int32(binary.BigEndian.Uint32(hdr[8:12])) == opCreate {
			return 17, true
		}
		return 17, false
	}
	return 8, false
}

func (s *frameScanner) scan(p []byte, frame func(hdr []byte, frame int)) {
	for len(p) > 0 {
		if s.skip > 0 {
			k := min(s.skip, len(p))
			s.skip -= k
			p = p[k:]
			continue
		}
		if s.lenN < 4 {
			k := copy(s.lenBuf[s.lenN:], p)
			s.lenN += k
			p = p[k:]
			if s.lenN < 4 {
				continue
			}
			s.length = int(binary.BigEndian.Uint32(s.lenBuf[:]))
			s.hdr = s.hdr[:0]
		}
		// collect body bytes until want is satisfied (or the frame ends)
		for {
			need := min(s.want(s.hdr, s.frames+1), s.length)
			if len(s.hdr) >= need {
				break
			}
			if len(p) == 0 {
				return
			}
			k := min(need-len(s.hdr), len(p))
			s.hdr = append(s.hdr, p[:k]...)
			p = p[k:]
		}
		s.frames++
		frame(s.hdr, s.frames)
		s.skip = s.length - len(s.hdr)
		s.lenN = 0
	}
}
