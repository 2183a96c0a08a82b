package wire

import (
	"net"
	"sync"
	"time"
)

// bufferedConn saves system calls on a tracked connection (see
// tracker.dial). go-zookeeper reads each reply with two reads straight
// from the socket (length, then body) and sets the read deadline twice per
// reply; bufferedConn reads whatever has arrived into a buffer, so that
// under load one read serves many replies, and applies a read deadline
// only when it is about to block. Around each write go-zookeeper sets a
// deadline and clears it again; bufferedConn applies the deadline in force
// when it writes. It holds its write lock across each Write to the
// connection below and its read lock across each Read, which the tap below
// it relies on.
type bufferedConn struct {
	net.Conn

	wmu    sync.Mutex
	wdl    time.Time // write deadline asked for
	wdlSet time.Time // write deadline in force on the connection

	rmu      sync.Mutex
	rbuf     []byte // bytes read from the connection and not yet returned
	rpos     int
	rerr     error // error that ended the last read, returned once rbuf is drained
	rdl      time.Time
	rdlSet   time.Time
	rdlDirty bool
}

// readBufSize is the read buffer: large enough for a burst of replies,
// small enough not to matter per connection.
const readBufSize = 32 << 10

func (c *bufferedConn) SetDeadline(t time.Time) error {
	if err := c.SetReadDeadline(t); err != nil {
		return err
	}
	return c.SetWriteDeadline(t)
}

func (c *bufferedConn) SetReadDeadline(t time.Time) error {
	c.rmu.Lock()
	c.rdl, c.rdlDirty = t, !t.Equal(c.rdlSet)
	c.rmu.Unlock()
	return nil
}

func (c *bufferedConn) SetWriteDeadline(t time.Time) error {
	c.wmu.Lock()
	c.wdl = t
	c.wmu.Unlock()
	return nil
}

func (c *bufferedConn) Write(p []byte) (int, error) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if !c.wdl.Equal(c.wdlSet) {
		if err := c.Conn.SetWriteDeadline(c.wdl); err != nil {
			return 0, err
		}
		c.wdlSet = c.wdl
	}
	return c.Conn.Write(p)
}

func (c *bufferedConn) Read(p []byte) (int, error) {
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
			return c.Conn.Read(p)
		}
		if c.rbuf == nil {
			c.rbuf = make([]byte, 0, readBufSize)
		}
		n, err := c.Conn.Read(c.rbuf[:cap(c.rbuf)])
		c.rbuf, c.rpos, c.rerr = c.rbuf[:n], 0, err
		if n == 0 {
			c.rerr = nil
			return 0, err
		}
	}
	n := copy(p, c.rbuf[c.rpos:])
	c.rpos += n
	return n, nil
}
