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
	l.mu.Unlock()
	return &trackedConn{Conn: c, l: l, gen: gen, rd: frameScanner{peek: 16}, wr: frameScanner{peek: 0}}
}

func (l *liveness) sent(gen uint64, at time.Time, frames int) {
	l.mu.Lock()
	if gen == l.conns {
		for ; frames > 0; frames-- {
			l.pending = append(l.pending, at)
		}
	}
	l.mu.Unlock()
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
	} else if len(hdr) >= 4 && int32(binary.BigEndian.Uint32(hdr[:4])) == -1 {
		return // watch notification: answers no request
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

type trackedConn struct {
	net.Conn
	l      *liveness
	gen    uint64
	rmu    sync.Mutex
	rd, wr frameScanner
}

func (c *trackedConn) Write(p []byte) (int, error) {
	now := time.Now()
	n, err := c.Conn.Write(p)
	if n > 0 {
		// go-zookeeper writes from one goroutine at a time, but guard anyway.
		c.rmu.Lock()
		frames := 0
		c.wr.scan(p[:n], func([]byte) { frames++ })
		c.rmu.Unlock()
		if frames > 0 {
			c.l.sent(c.gen, now, frames)
		}
	}
	return n, err
}

func (c *trackedConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.rd.scan(p[:n], func(hdr []byte) {
			c.l.received(c.gen, hdr, c.rd.frames == 1)
		})
	}
	return n, err
}

// frameScanner splits a stream of 4-byte-length-prefixed frames and calls a
// function with the first peek bytes of each frame's body as soon as they
// have arrived.
type frameScanner struct {
	peek   int // body bytes wanted before the callback
	buf    [20]byte
	n      int // bytes of buf filled for the current frame
	skip   int // body bytes still to skip after the callback
	frames int // frames whose callback has run
}

func (s *frameScanner) scan(p []byte, frame func(hdr []byte)) {
	for len(p) > 0 {
		if s.skip > 0 {
			k := min(s.skip, len(p))
			s.skip -= k
			p = p[k:]
			continue
		}
		// collect the length prefix, then up to peek body bytes
		want := 4
		var length int
		if s.n >= 4 {
			length = int(binary.BigEndian.Uint32(s.buf[:4]))
			want = 4 + min(s.peekFor(), length)
		}
		if s.n < want {
			k := min(want-s.n, len(p))
			copy(s.buf[s.n:], p[:k])
			s.n += k
			p = p[k:]
			if s.n < want {
				continue
			}
			if s.n == 4 {
				length = int(binary.BigEndian.Uint32(s.buf[:4]))
				if want = 4 + min(s.peekFor(), length); s.n < want {
					continue
				}
			}
		}
		s.frames++
		frame(s.buf[4:s.n])
		s.skip = length - (s.n - 4)
		s.n = 0
	}
}

// peekFor: the connect response (first frame) needs 16 bytes, later frames
// only the 4-byte xid.
func (s *frameScanner) peekFor() int {
	if s.peek == 0 {
		return 0
	}
	if s.frames == 0 {
		return 16
	}
	return 4
}
