package wire

import (
	"io"
	"net"
	"reflect"
	"testing"
	"time"

	"github.com/zklockkit/zklockkit/zklock/internal/zkwire"
)

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
	tr := NewTracker()
	var pendingAtWrite []int
	var createAtWrite []bool
	rc := &recordingConn{Conn: client}
	rc.beforeWrite = func() {
		tr.live.mu.Lock()
		pendingAtWrite = append(pendingAtWrite, len(tr.live.pending))
		tr.live.mu.Unlock()
		tr.czxids.mu.Lock()
		_, ok := tr.czxids.creates[7]
		createAtWrite = append(createAtWrite, ok)
		tr.czxids.mu.Unlock()
	}
	tc := tr.Dial(rc)
	defer tc.Close()
	connect := frame(make([]byte, 44))
	path := "/q/_c_x-lock-"
	create := frame(i32(7), i32(zkwire.OpCreate), i32(int32(len(path))), []byte(path), i32(0))
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

// The tap publishes one event per frame, in wire order: each request
// written (the connect request marked, a create's path read from a create
// alone or opening a multi, a read's watch and its path, a frame too short
// for a header still counted), the connect response, each reply read, and
// each watch notification, to the subscribers that take them.
func TestTrackedConnPublishes(t *testing.T) {
	tr, rec := recordingTracker()
	sc := &scriptConn{}
	c := tr.Dial(sc)
	path := "/q/_c_x-lock-"
	before := time.Now()
	for _, f := range [][]byte{
		frame(make([]byte, 44)), // connect request
		frame(i32(7), i32(zkwire.OpCreate), i32(int32(len(path))), []byte(path), make([]byte, 30)),
		frame(i32(8), i32(zkwire.OpMulti), i32(zkwire.OpCreate), []byte{0}, i32(-1), i32(int32(len(path))), []byte(path), make([]byte, 30)),
		frame(i32(9), i32(8), i32(2), []byte("/q"), []byte{0}),                // getChildren
		frame(i32(10), i32(zkwire.OpExists), i32(2), []byte("/q"), []byte{1}), // exists, watching
		frame(i32(-2), i32(11)), // ping
		frame([]byte{1, 2}),     // too short for a header
	} {
		if _, err := c.Write(f); err != nil {
			t.Fatal(err)
		}
	}
	after := time.Now()
	sc.serve(frame(i32(0), i32(4000), i64(42), i32(16), make([]byte, 16)))
	sc.serve(frame(i32(7), i64(0x10), i32(0), i32(int32(len(path)+10)), []byte(path+"0000000001")))
	sc.serve(frame(i32(-1), i64(-1), i32(0), i32(3), i32(2), i32(1), []byte("/"))) // a watch event
	sc.serve(frame(i32(8), i64(0x11), i32(-101), make([]byte, 40)))
	sc.serve(frame(i32(-2), i64(0x11), i32(0)))
	sc.serve(frame(i32(9), i64(0x11))) // too short for a reply header
	if _, err := io.ReadAll(c); err != nil {
		t.Fatal(err)
	}
	got := rec.got()
	for i, e := range got {
		if r, ok := e.(requestSent); ok {
			if r.at.Before(before) || r.at.After(after) {
				t.Fatalf("event %d sent at %v, outside its write", i, r.at)
			}
			r.at = time.Time{}
			got[i] = r
		}
	}
	want := []any{
		requestSent{conn: 1, connect: true},
		requestSent{conn: 1, xid: 7, op: zkwire.OpCreate, createPath: path},
		requestSent{conn: 1, xid: 8, op: zkwire.OpMulti, createPath: path},
		requestSent{conn: 1, xid: 9, op: 8},
		requestSent{conn: 1, xid: 10, op: zkwire.OpExists, watch: true, watchPath: "/q"},
		requestSent{conn: 1, xid: -2, op: 11},
		requestSent{conn: 1},
		connected{conn: 1, sessionID: 42, timeout: 4 * time.Second},
		replyRead{conn: 1, xid: 7, zxid: 0x10},
		notified{conn: 1, typ: zkwire.EventNodeDataChanged, path: "/"},
		replyRead{conn: 1, xid: 8, zxid: 0x11, err: -101},
		replyRead{conn: 1, xid: -2, zxid: 0x11},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("events:\n%+v\nwant\n%+v", got, want)
	}
}

// written closes its channel once a create for its path is on the wire,
// not before, and not for a create of another path; stop forgets it.
func TestTrackedConnCreateOnWire(t *testing.T) {
	tr := NewTracker()
	c := tr.Dial(&scriptConn{})
	create := func(xid int32, path string) {
		t.Helper()
		if _, err := c.Write(frame(i32(xid), i32(zkwire.OpCreate), i32(int32(len(path))), []byte(path), make([]byte, 30))); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Write(frame(make([]byte, 44))); err != nil {
		t.Fatal(err)
	}
	written, stop := tr.Written("/q/_c_a-lock-")
	defer stop()
	stopped, stop2 := tr.Written("/q/_c_c-lock-")
	stop2()
	create(1, "/q/_c_b-lock-")
	select {
	case <-written:
		t.Fatal("written closed by a create of another path")
	default:
	}
	create(2, "/q/_c_a-lock-")
	select {
	case <-written:
	default:
		t.Fatal("written not closed by the create of its path")
	}
	create(3, "/q/_c_c-lock-")
	select {
	case <-stopped:
		t.Fatal("written closed after stop")
	default:
	}
	tr.onWire.mu.Lock()
	left := len(tr.onWire.waiting)
	tr.onWire.mu.Unlock()
	if left != 0 {
		t.Fatalf("%d paths still awaited", left)
	}
}
