package zklock

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
	l := &liveness{}
	tc := l.wrap(client).(*trackedConn)
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
	if tc.rd.frames != len(replies) {
		t.Fatalf("after the first reply liveness has seen %d frames, want all %d from one read", tc.rd.frames, len(replies))
	}
	for i, want := range replies[1:] {
		if got := readReply(t, tc); !bytes.Equal(got, want) {
			t.Fatalf("reply %d: %x, want %x", i+1, got, want)
		}
	}
	if l.sessionID != 42 {
		t.Fatalf("session id %d, want 42", l.sessionID)
	}
}

// A read deadline is applied before the connection blocks, however many
// replies were served from the buffer since it was set; buffered bytes are
// served even past it.
func TestTrackedConnReadDeadline(t *testing.T) {
	server, client := net.Pipe()
	defer server.Close()
	tc := (&liveness{}).wrap(client).(*trackedConn)
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
	if _, err := tc.Read(n[:]); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read on an empty buffer past the deadline: %v, want os.ErrDeadlineExceeded", err)
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
	tc := (&liveness{}).wrap(client).(*trackedConn)
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
	tc := (&liveness{}).wrap(client).(*trackedConn)
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
	tc := (&liveness{}).wrap(&lastReadConn{data: want}).(*trackedConn)
	got, err := io.ReadAll(tc)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("read %x, %v; want %x and EOF", got, err, want)
	}
	if n, err := tc.Read(make([]byte, 4)); n != 0 || !errors.Is(err, io.EOF) {
		t.Fatalf("read again: %d, %v; want 0, io.EOF", n, err)
	}
}

// recordingConn is a net.Conn whose Write runs a hook before it writes, as
// a server that answers at once would see it.
type recordingConn struct {
	net.Conn
	beforeWrite func()
}

func (c *recordingConn) Write(p []byte) (int, error) {
	c.beforeWrite()
	return c.Conn.Write(p)
}

// A request is on record (its send time, its create path) before its bytes
// leave: the answer may be read before Write returns. Recorded after, that
// answer would match no request and its create's zxid (the fencing token)
// would be lost.
func TestTrackedConnRecordsBeforeWriting(t *testing.T) {
	server, client := net.Pipe()
	defer server.Close()
	go func() { _, _ = io.Copy(io.Discard, server) }()
	l := &liveness{}
	var pendingAtWrite []int
	var createAtWrite []bool
	rc := &recordingConn{Conn: client}
	rc.beforeWrite = func() {
		l.mu.Lock()
		pendingAtWrite = append(pendingAtWrite, len(l.pending))
		_, ok := l.creates[7]
		createAtWrite = append(createAtWrite, ok)
		l.mu.Unlock()
	}
	tc := l.wrap(rc).(*trackedConn)
	defer tc.Close()
	connect := frame(make([]byte, 44))
	path := "/q/_c_x-lock-"
	create := frame(i32(7), i32(opCreate), i32(int32(len(path))), []byte(path), i32(0))
	for _, f := range [][]byte{connect, create} {
		if _, err := tc.Write(f); err != nil {
			t.Fatal(err)
		}
	}
	if want := []int{1, 2}; pendingAtWrite[0] != want[0] || pendingAtWrite[1] != want[1] {
		t.Fatalf("requests on record when their bytes were written: %v, want %v", pendingAtWrite, want)
	}
	if !createAtWrite[1] {
		t.Fatal("the create was not on record when its bytes were written")
	}
}

// On a connection made after a session existed, the first answer to a
// request reaches go-zookeeper only once its setWatches request has been
// written (go-zookeeper reads its last zxid for that request without a
// lock while its reader stores the zxid of answers), or, when it has no
// watches to restore, gateWait after the connect response. The first
// connection of a client is not held, nor are watch events and pings.
func TestTrackedConnHoldsAnswersUntilSetWatches(t *testing.T) {
	connectResp := frame(i32(0), i32(6000), i64(42))
	answer := frame(i32(5), i64(0x99), i32(0))
	event := frame(i32(-1), i64(-1), i32(0), i32(3), i32(2), i32(1), []byte("/"))
	setWatches := frame(i32(6), i32(opSetWatches), i64(0x98), make([]byte, 12))
	open := func(gateWait time.Duration) (server net.Conn, tc *trackedConn) {
		server, client := net.Pipe()
		t.Cleanup(func() { server.Close(); client.Close() })
		l := &liveness{sessionID: 42}
		tc = l.wrap(client).(*trackedConn)
		if tc.gate == nil {
			t.Fatal("no gate on a connection after a session")
		}
		tc.gateWait = gateWait
		go func() { _, _ = server.Write(connectResp) }()
		readReply(t, tc)
		go func() { _, _ = server.Write(event) }()
		readReply(t, tc) // a watch event passes
		go func() { _, _ = server.Write(answer) }()
		return server, tc
	}
	read := func(tc *trackedConn) <-chan []byte {
		ch := make(chan []byte, 1)
		go func() { ch <- readReply(t, tc) }()
		return ch
	}

	// Held until setWatches goes out.
	server, tc := open(time.Hour)
	got := read(tc)
	select {
	case b := <-got:
		t.Fatalf("answer %x read before setWatches was sent", b)
	case <-time.After(50 * time.Millisecond):
	}
	go func() { _, _ = io.Copy(io.Discard, server) }()
	if _, err := tc.Write(frame(make([]byte, 44))); err != nil { // the connect request
		t.Fatal(err)
	}
	if _, err := tc.Write(setWatches); err != nil {
		t.Fatal(err)
	}
	select {
	case b := <-got:
		if !bytes.Equal(b, answer[4:]) {
			t.Fatalf("answer %x, want %x", b, answer[4:])
		}
	case <-time.After(5 * time.Second):
		t.Fatal("answer still held after setWatches was sent")
	}

	// No watches to restore: held for gateWait after the connect response.
	_, tc = open(100 * time.Millisecond)
	start := time.Now()
	if b := <-read(tc); !bytes.Equal(b, answer[4:]) {
		t.Fatalf("answer %x, want %x", b, answer[4:])
	}
	if waited := time.Since(tc.connAt); waited < 100*time.Millisecond {
		t.Fatalf("answer read %v after the connect response, want >= 100ms", waited)
	}
	t.Logf("without setWatches, read after %v", time.Since(start))

	// A client's first connection: nothing is held.
	server, client := net.Pipe()
	defer server.Close()
	first := (&liveness{}).wrap(client).(*trackedConn)
	defer first.Close()
	if first.gate != nil {
		t.Fatal("a gate on a client's first connection")
	}
	go func() { _, _ = server.Write(append(connectResp, answer...)) }()
	readReply(t, first)
	readReply(t, first)
}
