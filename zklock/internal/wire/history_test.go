package wire

import (
	"io"
	"net"
	"testing"
	"time"

	"github.com/zklockkit/zklockkit/zklock/internal/zkwire"
)

// addrConn is a scriptConn with an address, as a dialed connection has.
type addrConn struct{ *scriptConn }

func (addrConn) RemoteAddr() net.Addr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 2181} }

// A History keeps each request with its round trip, pings, syncs and the
// connect request apart from the rest; the dial and the connect
// response as marks; the session's notes; the last frame read. The
// requests a connection never answered are kept as such when the next
// connection is dialed, and those still outstanding show as pending.
func TestHistoryRecordsRoundTrips(t *testing.T) {
	tr := NewTracker()
	h := NewHistory()
	tr.Record(h)
	sc := &scriptConn{}
	c := tr.Dial(addrConn{sc})
	write := func(f []byte) {
		t.Helper()
		if _, err := c.Write(f); err != nil {
			t.Fatal(err)
		}
	}
	read := func() {
		t.Helper()
		if _, err := io.ReadAll(c); err != nil {
			t.Fatal(err)
		}
	}
	path := "/q/_c_x-lock-"
	write(frame(make([]byte, 44))) // connect
	sc.serve(frame(i32(0), i32(4000), i64(42), i32(16), make([]byte, 16)))
	read()
	write(frame(i32(1), i32(zkwire.OpCreate), i32(int32(len(path))), []byte(path), make([]byte, 30)))
	write(frame(i32(-2), i32(OpPing)))
	write(frame(i32(2), i32(OpSync), i32(1), []byte("/")))
	time.Sleep(2 * time.Millisecond)
	sc.serve(frame(i32(1), i64(0x10), i32(0)))
	sc.serve(frame(i32(-1), i64(-1), i32(0), i32(3), i32(2), i32(1), []byte("/"))) // a watch event answers nothing
	sc.serve(frame(i32(-2), i64(0x10), i32(0)))
	read()
	h.Note("state verified", 42)
	write(frame(i32(3), i32(4), i32(2), []byte("/q"), []byte{0})) // getData, never answered

	s := h.Snapshot()
	if len(s.Beats) != 2 || s.Beats[0].Op != OpConnect || s.Beats[1].Op != OpPing {
		t.Fatalf("beats %+v; want the connect request and the ping", s.Beats)
	}
	if len(s.Trips) != 1 || s.Trips[0].Op != zkwire.OpCreate || s.Trips[0].Xid != 1 || s.Trips[0].RTT < int64(2*time.Millisecond) {
		t.Fatalf("trips %+v; want the create, answered after at least 2ms", s.Trips)
	}
	if len(s.Pending) != 2 || s.Pending[0].Op != OpSync || s.Pending[1].Op != 4 || s.Pending[0].RTT != -1 {
		t.Fatalf("pending %+v; want the sync and the getData", s.Pending)
	}
	if len(s.Marks) != 3 || s.Marks[0].What != "dial" || s.Marks[0].Detail != "127.0.0.1:2181" ||
		s.Marks[1].What != "connected" || s.Marks[1].Session != 42 || s.Marks[1].Timeout != int64(4*time.Second) ||
		s.Marks[2].What != "state verified" {
		t.Fatalf("marks %+v", s.Marks)
	}
	if s.LastRead.IsZero() || time.Since(s.LastRead) > time.Minute {
		t.Fatalf("last read %v", s.LastRead)
	}

	// A new connection: the sync and the getData were never answered.
	old := c
	c = tr.Dial(addrConn{&scriptConn{}})
	s = h.Snapshot()
	if len(s.Pending) != 0 {
		t.Fatalf("pending after a new dial: %+v", s.Pending)
	}
	if last := s.Beats[len(s.Beats)-1]; last.Op != OpSync || last.RTT != -1 {
		t.Fatalf("last beat %+v; want the sync, never answered", last)
	}
	if last := s.Trips[len(s.Trips)-1]; last.Op != 4 || last.RTT != -1 {
		t.Fatalf("last trip %+v; want the getData, never answered", last)
	}
	// An answer read on the old connection matches nothing of the new one.
	write(frame(make([]byte, 44)))
	sc.serve(frame(i32(3), i64(0x11), i32(0)))
	if _, err := io.ReadAll(old); err != nil {
		t.Fatal(err)
	}
	if s = h.Snapshot(); len(s.Pending) != 1 || s.Pending[0].Op != OpConnect {
		t.Fatalf("pending %+v; want the new connect request", s.Pending)
	}
}

// The rings keep the last values put, oldest first.
func TestHistoryRingWraps(t *testing.T) {
	r := newRing[int](4)
	for i := range 3 {
		r.put(i)
	}
	if got := r.all(); len(got) != 3 || got[0] != 0 || got[2] != 2 {
		t.Fatalf("before wrapping: %v", got)
	}
	for i := 3; i < 10; i++ {
		r.put(i)
	}
	if got := r.all(); len(got) != 4 || got[0] != 6 || got[3] != 9 {
		t.Fatalf("after wrapping: %v; want 6..9", got)
	}
}

func TestOpName(t *testing.T) {
	for op, want := range map[int32]string{OpPing: "ping", OpSync: "sync", zkwire.OpCreate: "create", OpConnect: "connect", 77: "op77"} {
		if got := OpName(op); got != want {
			t.Errorf("OpName(%d) = %q, want %q", op, got, want)
		}
	}
}

// BenchmarkHistoryRoundTrip measures what a History adds to one request
// and its answer on the tap: the two events it takes.
func BenchmarkHistoryRoundTrip(b *testing.B) {
	h := NewHistory()
	h.dialed(1, "127.0.0.1:2181")
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		h.requestSent(requestSent{conn: 1, at: time.Now(), xid: int32(i), op: 4})
		h.replyRead(replyRead{conn: 1, xid: int32(i)})
	}
}
