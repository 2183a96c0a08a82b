package zktest

import (
	"encoding/binary"
	"net"
)

// ZooKeeper 3.8's election protocol: a server opening an election
// connection first sends an initial message, in big-endian,
//
//	int64 protocol version (-65536 or -65535), int64 sid,
//	int32 n, n bytes: the opener's own election address ("host:port")
//
// (a non-negative first int64 is an old-style sid with no address). The
// receiver with the higher id closes a connection opened by a lower id and
// opens one back, to the address in that message. Behind link proxies that
// address must be the proxy of the link back, or the connection back would
// bypass every proxy and survive a cut.
const (
	electionProtocolV1 = -65536
	electionProtocolV2 = -65535
	maxElectionAddr    = 4096
)

// announceAs returns a rewrite for the proxy of link i→j's election port:
// it replaces the address in i's initial message with addr, the proxy of
// link j→i, so that j's connection back to i runs through it.
func announceAs(addr string) func([]byte) ([]byte, bool) {
	return func(b []byte) ([]byte, bool) {
		if len(b) < 8 {
			return b, false
		}
		v := int64(binary.BigEndian.Uint64(b))
		if v != electionProtocolV1 && v != electionProtocolV2 {
			return b, true // not a message we know: pass it on untouched
		}
		if len(b) < 20 {
			return b, false
		}
		n := int(int32(binary.BigEndian.Uint32(b[16:20])))
		if n < 0 || n > maxElectionAddr {
			return b, true
		}
		if len(b) < 20+n {
			return b, false
		}
		out := make([]byte, 0, len(b)-n+len(addr))
		out = append(out, b[:16]...)
		out = binary.BigEndian.AppendUint32(out, uint32(len(addr)))
		out = append(out, addr...)
		return append(out, b[20+n:]...), true
	}
}

// rewritingConn passes reads through rewrite until it reports the first
// message complete (or the peer stops sending), then reads as is.
type rewritingConn struct {
	net.Conn
	rewrite func([]byte) ([]byte, bool)
	buf     []byte // rewritten bytes not yet returned
	done    bool
}

func (c *rewritingConn) Read(p []byte) (int, error) {
	for !c.done {
		chunk := make([]byte, 4096)
		n, err := c.Conn.Read(chunk)
		c.buf = append(c.buf, chunk[:n]...)
		if out, complete := c.rewrite(c.buf); complete {
			c.buf, c.done = out, true
			break
		}
		if err != nil {
			c.done = true // pass on what came, then the error
			if len(c.buf) == 0 {
				return 0, err
			}
			break
		}
	}
	if len(c.buf) > 0 {
		n := copy(p, c.buf)
		c.buf = c.buf[n:]
		return n, nil
	}
	return c.Conn.Read(p)
}
