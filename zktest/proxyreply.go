package zktest

import "encoding/binary"

// Op is a ZooKeeper request's opcode, as it appears in the request header
// on the wire.
type Op int32

// Opcodes of the requests a lock client sends (ZooKeeper's ZooDefs.OpCode).
const (
	OpCreate          Op = 1
	OpDelete          Op = 2
	OpExists          Op = 3
	OpGetData         Op = 4
	OpSetData         Op = 5
	OpGetChildren     Op = 8
	OpSync            Op = 9
	OpGetChildren2    Op = 12
	OpMulti           Op = 14
	OpCreate2         Op = 15
	OpCreateContainer Op = 19
)

// replyLoss is one armed LoseReply: the first request with opcode op seen
// after it became the head of the queue is its target; the reply to that
// request is replaced by closing the connection.
type replyLoss struct {
	op     Op
	conn   *proxyConn // the connection of the targeted request, if chosen
	xid    int32
	active bool // head of the queue: requests seen from now on may be targeted
	fired  chan struct{}
}

// LoseReply makes the proxy lose the server's reply to the next request
// with opcode op: the request reaches the server and is carried out, and
// where its reply would be delivered, both sides of the connection are
// closed instead. The client sees a connection loss with the request's
// outcome unknown, the fault that protected lock-node names exist for.
//
// Calls queue up: a second LoseReply takes effect only once the first has
// fired, and targets a request sent after that. The returned channel is
// closed when the reply has been lost. If the targeted connection ends
// before its reply arrives, the next request with op is targeted instead.
func (p *Proxy) LoseReply(op Op) <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	r := &replyLoss{op: op, fired: make(chan struct{}), active: len(p.losses) == 0}
	p.losses = append(p.losses, r)
	return r.fired
}

// sawRequest is called, in order, for each request header forwarded from
// a client to the server.
func (p *Proxy) sawRequest(c *proxyConn, xid int32, op Op) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.losses) == 0 {
		return
	}
	if r := p.losses[0]; r.active && r.conn == nil && r.op == op {
		r.conn, r.xid = c, xid
	}
}

// loseReply reports whether the reply with xid, about to be forwarded from
// the server to the client of c, must be lost; if so, the loss has fired.
func (p *Proxy) loseReply(c *proxyConn, xid int32) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.losses) == 0 {
		return false
	}
	r := p.losses[0]
	if r.conn != c || r.xid != xid {
		return false
	}
	close(r.fired)
	p.losses = p.losses[1:]
	if len(p.losses) > 0 {
		p.losses[0].active = true
	}
	return true
}

// connEnded lets a loss targeted at c target the next matching request.
func (p *Proxy) connEnded(c *proxyConn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.losses) > 0 && p.losses[0].conn == c {
		p.losses[0].conn = nil
	}
}

// frameScanner follows ZooKeeper's length-prefixed frames in one direction
// of a connection, across arbitrary chunk boundaries. The first frame (the
// connect request or response) has no header; every later one starts with
// the xid, and a request's xid is followed by its opcode.
type frameScanner struct {
	hdrLen  int // header bytes wanted after the length: 8 (xid, op) or 4 (xid)
	started bool
	buf     [12]byte
	have    int   // bytes of the current length prefix and header seen
	left    int64 // body bytes of the current frame still to skip
}

// scan walks data and calls frame for each header completed in it, with
// the offset in data where that frame began (0 if it began in an earlier
// chunk). If frame returns true, scan stops and returns that offset and
// true.
func (s *frameScanner) scan(data []byte, frame func(xid int32, op Op) bool) (int, bool) {
	start := 0
	for i := 0; i < len(data); {
		if s.left > 0 {
			n := min(int64(len(data)-i), s.left)
			i += int(n)
			s.left -= n
			continue
		}
		if s.have == 0 {
			start = i
		}
		want := 4
		if s.started {
			want += s.hdrLen
		}
		for s.have < want && i < len(data) {
			s.buf[s.have] = data[i]
			s.have++
			i++
		}
		if s.have < want {
			return 0, false // the header continues in the next chunk
		}
		length := int64(binary.BigEndian.Uint32(s.buf[:4]))
		s.have = 0
		if !s.started {
			s.started = true
			s.left = length
			continue
		}
		s.left = max(0, length-int64(s.hdrLen))
		xid := int32(binary.BigEndian.Uint32(s.buf[4:8]))
		var op Op
		if s.hdrLen == 8 {
			op = Op(binary.BigEndian.Uint32(s.buf[8:12]))
		}
		if frame(xid, op) {
			return start, true
		}
	}
	return 0, false
}
