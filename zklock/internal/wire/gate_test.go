package wire

import (
	"bytes"
	"io"
	"net"
	"testing"
	"time"

	"github.com/zklockkit/zklockkit/zklock/internal/zkwire"
)

// On a connection made after a session existed, while go-zookeeper holds
// watches, the first answer to a request reaches go-zookeeper only once
// its setWatches request has been written (go-zookeeper reads its last
// zxid for that request without a lock while its reader stores the zxid
// of answers), or the gate's wait after the connect response, which also
// tells the Tracker that go-zookeeper held none. A reconnection without
// watches has no gate, nor has a client's first connection; watch events
// and pings are never held.
func TestTrackedConnHoldsAnswersUntilSetWatches(t *testing.T) {
	connectResp := frame(i32(0), i32(6000), i64(42))
	answer := frame(i32(5), i64(0x99), i32(0))
	event := frame(i32(-1), i64(-1), i32(0), i32(3), i32(2), i32(1), []byte("/"))
	ping := frame(i32(-2), i64(0x98), i32(0))
	setWatches := frame(i32(6), i32(zkwire.OpSetWatches), i64(0x98), make([]byte, 12))
	resumed := func() *Tracker {
		tr := NewTracker()
		tr.live.sid = 42
		tr.watches.sid = 42
		tr.watches.set = map[watchKey]struct{}{{"/q/n", watchData}: {}}
		return tr
	}
	open := func(tr *Tracker, gateWait time.Duration) (server net.Conn, tc *gatedConn) {
		server, client := net.Pipe()
		t.Cleanup(func() { server.Close(); client.Close() })
		tc, ok := tr.Dial(client).(*gatedConn)
		if !ok {
			t.Fatal("no gate on a connection after a session")
		}
		tc.wait = gateWait
		go func() { _, _ = server.Write(connectResp) }()
		readReply(t, tc)
		go func() { _, _ = server.Write(event) }()
		readReply(t, tc) // a watch event passes
		go func() { _, _ = server.Write(ping) }()
		readReply(t, tc) // so does a ping's answer
		go func() { _, _ = server.Write(answer) }()
		return server, tc
	}
	read := func(tc *gatedConn) <-chan []byte {
		ch := make(chan []byte, 1)
		go func() { ch <- readReply(t, tc) }()
		return ch
	}

	// Held until setWatches goes out.
	server, tc := open(resumed(), time.Hour)
	got := read(tc)
	select {
	case b := <-got:
		t.Fatalf("answer %x read before setWatches was sent", b)
	case <-time.After(50 * time.Millisecond):
	}
	go func(server net.Conn) { _, _ = io.Copy(io.Discard, server) }(server)
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

	// No setWatches: held for gateWait after the connect response; then
	// the Tracker holds no watches, and the next reconnection no gate.
	tr := resumed()
	_, tc = open(tr, 100*time.Millisecond)
	start := time.Now()
	if b := <-read(tc); !bytes.Equal(b, answer[4:]) {
		t.Fatalf("answer %x, want %x", b, answer[4:])
	}
	tc.mu.Lock()
	connAt := tc.connAt
	tc.mu.Unlock()
	if waited := time.Since(connAt); waited < 100*time.Millisecond {
		t.Fatalf("answer read %v after the connect response, want >= 100ms", waited)
	}
	t.Logf("without setWatches, read after %v", time.Since(start))
	if tr.watches.any() {
		t.Fatal("the Tracker still holds watches after a reconnection without setWatches")
	}
	server, client := net.Pipe()
	defer server.Close()
	if _, ok := tr.Dial(client).(*gatedConn); ok {
		t.Fatal("a gate on a reconnection without watches")
	}

	// A client's first connection: nothing is held.
	server, client = net.Pipe()
	defer server.Close()
	first := NewTracker().Dial(client)
	defer first.Close()
	if _, ok := first.(*gatedConn); ok {
		t.Fatal("a gate on a client's first connection")
	}
	go func() { _, _ = server.Write(append(connectResp, answer...)) }()
	readReply(t, first)
	readReply(t, first)
}
