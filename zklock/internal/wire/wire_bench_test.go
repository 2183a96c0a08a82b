package wire

import (
	"encoding/binary"
	"io"
	"net"
	"testing"
	"time"
)

// benchTracked returns c as a tracked connection, with the calls the
// recipe makes on the wire.
func benchTracked(c net.Conn) (tc net.Conn, written func(string) (<-chan struct{}, func()), created func(string) int64) {
	tr := NewTracker()
	return tr.Dial(c), tr.Written, tr.Created
}

// loopConn is an in-memory net.Conn: writes are dropped, and reads return
// the bytes set in next.
type loopConn struct {
	net.Conn
	next []byte
}

func (c *loopConn) Write(p []byte) (int, error) { return len(p), nil }
func (c *loopConn) Read(p []byte) (int, error) {
	if len(c.next) == 0 {
		return 0, io.EOF
	}
	n := copy(p, c.next)
	c.next = c.next[n:]
	return n, nil
}
func (c *loopConn) SetReadDeadline(time.Time) error  { return nil }
func (c *loopConn) SetWriteDeadline(time.Time) error { return nil }

// zkRead reads one frame as go-zookeeper's reader does: a read deadline,
// the length, the body, the deadline cleared.
func zkRead(b *testing.B, c net.Conn, buf []byte) {
	if err := c.SetReadDeadline(time.Now().Add(time.Minute)); err != nil {
		b.Fatal(err)
	}
	if _, err := io.ReadFull(c, buf[:4]); err != nil {
		b.Fatal(err)
	}
	if _, err := io.ReadFull(c, buf[:binary.BigEndian.Uint32(buf[:4])]); err != nil {
		b.Fatal(err)
	}
	if err := c.SetReadDeadline(time.Time{}); err != nil {
		b.Fatal(err)
	}
}

// zkWrite writes one frame as go-zookeeper's writer does: a write
// deadline, the frame, the deadline cleared.
func zkWrite(b *testing.B, c net.Conn, f []byte) {
	if err := c.SetWriteDeadline(time.Now().Add(time.Minute)); err != nil {
		b.Fatal(err)
	}
	if _, err := c.Write(f); err != nil {
		b.Fatal(err)
	}
	if err := c.SetWriteDeadline(time.Time{}); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkTrackedConn: the cost of a tracked connection (tap, buffering,
// and what the recipe asks of the wire) per request and its reply, on an
// in-memory connection, the frames written and read as go-zookeeper does.
// An operation is one request and its reply: a create with its on-wire
// notice and czxid taken as an acquire does; a getData; and 64 getData
// requests whose replies arrive together.
func BenchmarkTrackedConn(b *testing.B) {
	path := "/zklock/accounts%2F42/_c_8d3a6f2e-2b1c-4a5e-9f00-1234567890ab-lock-"
	setXid := func(f []byte, xid int) []byte { binary.BigEndian.PutUint32(f[4:], uint32(xid)); return f }
	createReq := frame(i32(0), i32(1), i32(int32(len(path))), []byte(path), i32(100), make([]byte, 100), i32(1), i32(31), i32(5), []byte("world"), []byte("anyone"), i32(3))
	createReply := frame(i32(0), i64(0x1234), i32(0), i32(int32(len(path)+10)), []byte(path+"0000000003"))
	getReq := frame(i32(0), i32(4), i32(int32(len(path)+10)), []byte(path+"0000000003"), []byte{0})
	getReply := frame(i32(0), i64(0x1234), i32(0), i32(100), make([]byte, 100), make([]byte, 68))
	open := func(b *testing.B) (*loopConn, net.Conn, func(string) (<-chan struct{}, func()), func(string) int64, []byte) {
		lc := &loopConn{}
		tc, written, created := benchTracked(lc)
		buf := make([]byte, 1024)
		zkWrite(b, tc, frame(make([]byte, 44)))
		lc.next = frame(i32(0), i32(6000), i64(42), i32(16), make([]byte, 16))
		zkRead(b, tc, buf)
		return lc, tc, written, created, buf
	}
	b.Run("create", func(b *testing.B) {
		lc, tc, written, created, buf := open(b)
		b.ReportAllocs()
		xid := 0
		for b.Loop() {
			xid++
			ch, stop := written(path)
			zkWrite(b, tc, setXid(createReq, xid))
			<-ch
			stop()
			lc.next = setXid(createReply, xid)
			zkRead(b, tc, buf)
			if created(path) != 0x1234 {
				b.Fatal("no czxid")
			}
		}
	})
	b.Run("getData", func(b *testing.B) {
		lc, tc, _, _, buf := open(b)
		b.ReportAllocs()
		xid := 0
		for b.Loop() {
			xid++
			zkWrite(b, tc, setXid(getReq, xid))
			lc.next = setXid(getReply, xid)
			zkRead(b, tc, buf)
		}
	})
	b.Run("getData-batch64", func(b *testing.B) {
		lc, tc, _, _, buf := open(b)
		b.ReportAllocs()
		var replies []byte
		xid := 0
		for i := 0; i < b.N; i += 64 {
			replies = replies[:0]
			for range min(64, b.N-i) {
				xid++
				zkWrite(b, tc, setXid(getReq, xid))
				replies = append(replies, setXid(getReply, xid)...)
			}
			lc.next = replies
			for range min(64, b.N-i) {
				zkRead(b, tc, buf)
			}
		}
	})
}
