package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"
)

// readReply reads one frame the way go-zookeeper's recvLoop does: a read
// deadline, the length, the body, then the deadline cleared.
func readReply(t *testing.T, c net.Conn) []byte {
	t.Helper()
	if err := c.SetReadDeadline(time.Now().Add(5 * time.Second)); err != nil {
		t.Fatal(err)
	}
	var n [4]byte
	if _, err := io.ReadFull(c, n[:]); err != nil {
		t.Fatal(err)
	}
	body := make([]byte, binary.BigEndian.Uint32(n[:]))
	if _, err := io.ReadFull(c, body); err != nil {
		t.Fatal(err)
	}
	if err := c.SetReadDeadline(time.Time{}); err != nil {
		t.Fatal(err)
	}
	return body
}

// Replies that arrive together are served from one socket read: all of
// them reach liveness at once, and the bytes come out intact, in order.
func TestTrackedConnBuffersReads(t *testing.T) {
	server, client := net.Pipe()
	defer server.Close()
	tr := NewTracker()
	tc := tr.Dial(client).(*bufferedConn)
	defer tc.Close()

	replies := [][]byte{
		append(append(i32(0), i32(6000)...), i64(42)...), // connect response
		append(append(i32(1), i64(0x10)...), i32(0)...),
		append(append(append(i32(2), i64(0x11)...), i32(0)...), bytes.Repeat([]byte{'x'}, 300)...),
		append(append(i32(-1), i64(0)...), i32(0)...), // a watch event
	}
	var stream []byte
	for _, r := range replies {
		stream = append(stream, frame(r)...)
	}
	go func() { _, _ = server.Write(stream) }()

	first := readReply(t, tc)
	if !bytes.Equal(first, replies[0]) {
		t.Fatalf("first reply %x, want %x", first, replies[0])
	}
	if n := tapOf(tc).rd.Frames(); n != len(replies) {
		t.Fatalf("after the first reply the tap has seen %d frames, want all %d from one read", n, len(replies))
	}
	for i, want := range replies[1:] {
		if got := readReply(t, tc); !bytes.Equal(got, want) {
			t.Fatalf("reply %d: %x, want %x", i+1, got, want)
		}
	}
	if sid := tr.live.sessionID(); sid != 42 {
		t.Fatalf("session id %d, want 42", sid)
	}
}

// A read deadline is applied before the connection blocks, however many
// replies were served from the buffer since it was set; buffered bytes are
// served even past it.
func TestTrackedConnReadDeadline(t *testing.T) {
	server, client := net.Pipe()
	defer server.Close()
	tc := NewTracker().Dial(client).(*bufferedConn)
	defer tc.Close()
	go func() { _, _ = server.Write(frame(i32(0), i32(6000), i64(1))) }()
	var n [4]byte
	if _, err := io.ReadFull(tc, n[:]); err != nil {
		t.Fatal(err)
	}
	if err := tc.SetReadDeadline(time.Now().Add(-time.Second)); err != nil {
		t.Fatal(err)
	}
	body := make([]byte, 16)
	if _, err := io.ReadFull(tc, body); err != nil {
		t.Fatalf("buffered bytes past the deadline: %v", err)
	}
	start := time.Now()
	errc := make(chan error, 1)
	go func() { _, err := tc.Read(n[:]); errc <- err }()
	select {
	case err := <-errc:
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("read on an empty buffer past the deadline: %v, want os.ErrDeadlineExceeded", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("read on an empty buffer past the deadline still blocked after 5s")
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("the expired deadline took %v to apply", d)
	}
	// Cleared again, the connection reads normally.
	if err := tc.SetReadDeadline(time.Time{}); err != nil {
		t.Fatal(err)
	}
	go func() { _, _ = server.Write(frame(i32(5), i64(1), i32(0))) }()
	if got := readReply(t, tc); int32(binary.BigEndian.Uint32(got)) != 5 {
		t.Fatalf("reply after the timeout: %x", got)
	}
}

// A write deadline asked for is in force when the write happens, and a
// cleared one no longer is.
func TestTrackedConnWriteDeadline(t *testing.T) {
	server, client := net.Pipe()
	defer server.Close()
	tc := NewTracker().Dial(client).(*bufferedConn)
	defer tc.Close()
	if err := tc.SetWriteDeadline(time.Now().Add(-time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := tc.Write(frame(i32(0))); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("write past the deadline: %v, want os.ErrDeadlineExceeded", err)
	}
	if err := tc.SetWriteDeadline(time.Time{}); err != nil {
		t.Fatal(err)
	}
	go func() { _, _ = io.Copy(io.Discard, server) }()
	if _, err := tc.Write(frame(i32(0))); err != nil {
		t.Fatalf("write with the deadline cleared: %v", err)
	}
}

// A large body is read in place, straight into the caller's buffer.
func TestTrackedConnLargeBody(t *testing.T) {
	server, client := net.Pipe()
	defer server.Close()
	tc := NewTracker().Dial(client).(*bufferedConn)
	defer tc.Close()
	big := bytes.Repeat([]byte{'y'}, 2*readBufSize)
	go func() {
		_, _ = server.Write(frame(i32(0), i32(6000), i64(1)))
		_, _ = server.Write(frame(big))
	}()
	readReply(t, tc)
	if got := readReply(t, tc); !bytes.Equal(got, big) {
		t.Fatalf("large body: %d bytes, want %d", len(got), len(big))
	}
}

// lastReadConn returns its data together with io.EOF in one Read, as a
// net.Conn may.
type lastReadConn struct {
	net.Conn
	data []byte
}

func (c *lastReadConn) Read(p []byte) (int, error) {
	n := copy(p, c.data)
	c.data = c.data[n:]
	return n, io.EOF
}

// Bytes that arrive with an error are all returned before the error.
func TestTrackedConnDataThenError(t *testing.T) {
	want := frame(i32(0), i32(6000), i64(1))
	tc := NewTracker().Dial(&lastReadConn{data: want}).(*bufferedConn)
	got, err := io.ReadAll(tc)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("read %x, %v; want %x and EOF", got, err, want)
	}
	if n, err := tc.Read(make([]byte, 4)); n != 0 || !errors.Is(err, io.EOF) {
		t.Fatalf("read again: %d, %v; want 0, io.EOF", n, err)
	}
}
