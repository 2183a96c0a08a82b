package wire

import (
	"bytes"
	"encoding/binary"
	"io"
	"net"
	"sync"
	"time"
)

func frame(body ...[]byte) []byte {
	var b []byte
	for _, x := range body {
		b = append(b, x...)
	}
	out := binary.BigEndian.AppendUint32(nil, uint32(len(b)))
	return append(out, b...)
}

func i32(v int32) []byte { return binary.BigEndian.AppendUint32(nil, uint32(v)) }
func i64(v int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(v)) }

// scriptConn is a net.Conn whose reads return what the test put in and
// whose writes are kept; deadlines are accepted and ignored.
type scriptConn struct {
	net.Conn // nil: only the methods below are called
	mu       sync.Mutex
	in       bytes.Buffer
	out      bytes.Buffer
}

func (c *scriptConn) serve(p []byte) {
	c.mu.Lock()
	c.in.Write(p)
	c.mu.Unlock()
}

func (c *scriptConn) Read(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.in.Len() == 0 {
		return 0, io.EOF
	}
	return c.in.Read(p)
}

func (c *scriptConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.out.Write(p)
}

func (c *scriptConn) SetDeadline(time.Time) error      { return nil }
func (c *scriptConn) SetReadDeadline(time.Time) error  { return nil }
func (c *scriptConn) SetWriteDeadline(time.Time) error { return nil }
func (c *scriptConn) Close() error                     { return nil }

// recorder is a tap subscriber that keeps every event.
type recorder struct {
	mu     sync.Mutex
	events []any
}

func (r *recorder) add(e any) {
	r.mu.Lock()
	r.events = append(r.events, e)
	r.mu.Unlock()
}

func (r *recorder) requestSent(e requestSent) { r.add(e) }
func (r *recorder) connected(e connected)     { r.add(e) }
func (r *recorder) replyRead(e replyRead)     { r.add(e) }
func (r *recorder) notified(e notified)       { r.add(e) }

func (r *recorder) got() []any {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]any(nil), r.events...)
}

// recordingTracker returns a Tracker whose connections also publish to a
// recorder.
func recordingTracker() (*Tracker, *recorder) {
	tr := NewTracker()
	rec := &recorder{}
	tr.subs = append(tr.subs, rec)
	return tr, rec
}

// tapOf returns the tap at the bottom of a tracked connection.
func tapOf(c net.Conn) *tap {
	if g, ok := c.(*gatedConn); ok {
		c = g.Conn
	}
	return c.(*bufferedConn).Conn.(*tap)
}
