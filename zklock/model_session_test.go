package zklock_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"
)

// Ending a session on purpose, fast and for real. go-zookeeper cannot open
// a second handle on an existing session, so the test speaks the two
// requests it needs itself: it attaches to the session from a new
// connection with the session's id and password (ZooKeeper then closes the
// connection the client had) and sends closeSession. The server deletes
// the session's ephemeral nodes at once and answers the client's reconnect
// with "session expired": what a client sees after a real expiry, in a
// second or two instead of a session timeout of silence.

// sessionTap is a dialer that reads the session id and password from the
// connect response of each connection a client makes. With target set, it
// dials target whatever address it is given.
type sessionTap struct {
	target string
	gate   sync.RWMutex // held by expire: the client dials no new connection meanwhile
	mu     sync.Mutex
	sid    int64
	passwd []byte
	conn   net.Conn // the last connection dialed
}

func (s *sessionTap) dial(network, addr string, timeout time.Duration) (net.Conn, error) {
	s.gate.RLock()
	defer s.gate.RUnlock()
	if s.target != "" {
		addr = s.target
	}
	c, err := net.DialTimeout(network, addr, timeout)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.conn = c
	s.mu.Unlock()
	return &tapConn{Conn: c, tap: s}, nil
}

// cut closes the client's connection and runs f while the client cannot
// dial a new one, then lets it: the session lives on (the client is back
// within milliseconds of f, far within the session timeout).
func (s *sessionTap) cut(f func() error) error {
	s.gate.Lock()
	defer s.gate.Unlock()
	s.mu.Lock()
	c := s.conn
	s.mu.Unlock()
	if c != nil {
		_ = c.Close()
	}
	return f()
}

// session returns the session id and password of the client's last
// connect response that granted one.
func (s *sessionTap) session() (int64, []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sid, s.passwd
}

// expire ends the client's current session on the server at addr. The
// client's reconnect waits until the session is closed: otherwise it
// takes the session back (closing our connection) as soon as the server
// closes its own, before our closeSession is read.
func (s *sessionTap) expire(addr string) (sid int64, err error) {
	s.gate.Lock()
	defer s.gate.Unlock()
	sid, passwd := s.session()
	if sid == 0 {
		return 0, errSessionGone
	}
	return sid, killSession(addr, sid, passwd)
}

type tapConn struct {
	net.Conn
	tap  *sessionTap
	mu   sync.Mutex
	head []byte // the bytes read so far, until the connect response is whole
	done bool
}

func (c *tapConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done || n == 0 {
		return n, err
	}
	c.head = append(c.head, p[:n]...)
	if len(c.head) < 4 {
		return n, err
	}
	size := int(binary.BigEndian.Uint32(c.head))
	if len(c.head) < 4+size {
		return n, err
	}
	c.done = true
	if sid, passwd, ok := parseConnectResponse(c.head[4 : 4+size]); ok && sid != 0 {
		c.tap.mu.Lock()
		c.tap.sid, c.tap.passwd = sid, passwd
		c.tap.mu.Unlock()
	}
	c.head = nil
	return n, err
}

// parseConnectResponse reads protocolVersion int32, timeOut int32,
// sessionId int64, passwd (int32 length and bytes).
func parseConnectResponse(b []byte) (sid int64, passwd []byte, ok bool) {
	if len(b) < 20 {
		return 0, nil, false
	}
	sid = int64(binary.BigEndian.Uint64(b[8:16]))
	n := int(int32(binary.BigEndian.Uint32(b[16:20])))
	if n < 0 || len(b) < 20+n {
		return 0, nil, false
	}
	return sid, append([]byte(nil), b[20:20+n]...), true
}

// errSessionGone: the server no longer knows the session.
var errSessionGone = errors.New("session already gone")

// killSession attaches to session sid (with its password) on the server
// at addr and closes it.
func killSession(addr string, sid int64, passwd []byte) error {
	conn, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		return err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	// ConnectRequest: protocolVersion, lastZxidSeen, timeOut, sessionId,
	// passwd.
	req := make([]byte, 0, 32+len(passwd))
	req = binary.BigEndian.AppendUint32(req, 0)
	req = binary.BigEndian.AppendUint64(req, 0)
	req = binary.BigEndian.AppendUint32(req, uint32(4000))
	req = binary.BigEndian.AppendUint64(req, uint64(sid))
	req = binary.BigEndian.AppendUint32(req, uint32(len(passwd)))
	req = append(req, passwd...)
	// RequestHeader of closeSession: xid 1, type -11. Sent with the
	// connect request: the client, whose connection the server closes as
	// we attach, reconnects at once and would take the session back
	// before a second round trip of ours.
	closeReq := binary.BigEndian.AppendUint32(nil, 1)
	closeReq = binary.BigEndian.AppendUint32(closeReq, uint32(0xFFFFFFF5))
	if _, err := conn.Write(append(frame(req), frame(closeReq)...)); err != nil {
		return err
	}
	resp, err := readFrame(conn)
	if err != nil {
		return err
	}
	got, _, ok := parseConnectResponse(resp)
	switch {
	case !ok:
		return fmt.Errorf("malformed connect response (%d bytes)", len(resp))
	case got == 0:
		return errSessionGone
	case got != sid:
		return fmt.Errorf("server attached session %#x, asked for %#x", got, sid)
	}
	// ReplyHeader: xid, zxid, err.
	reply, err := readFrame(conn)
	if err != nil {
		return fmt.Errorf("closeSession: %w", err)
	}
	if len(reply) < 16 {
		return fmt.Errorf("closeSession: short reply (%d bytes)", len(reply))
	}
	if code := int32(binary.BigEndian.Uint32(reply[12:16])); code != 0 {
		return fmt.Errorf("closeSession: error code %d", code)
	}
	return nil
}

func frame(body []byte) []byte {
	return append(binary.BigEndian.AppendUint32(nil, uint32(len(body))), body...)
}

func readFrame(r io.Reader) ([]byte, error) {
	var size [4]byte
	if _, err := io.ReadFull(r, size[:]); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(size[:])
	if n > 1<<20 {
		return nil, fmt.Errorf("frame of %d bytes", n)
	}
	body := make([]byte, n)
	_, err := io.ReadFull(r, body)
	return body, err
}
