package wire

import (
	"testing"

	"github.com/zklockkit/zklockkit/zklock/internal/zkwire"
)

// read is the frame of a read of path with xid, asking for a watch.
func read(xid, op int32, path string) []byte {
	return frame(i32(xid), i32(op), i32(int32(len(path))), []byte(path), []byte{1})
}

// answer is the frame of the answer to xid with ZooKeeper's error code.
func answer(xid, err int32) []byte { return frame(i32(xid), i64(0x20), i32(err), make([]byte, 20)) }

// event is the frame of a watch notification.
func event(typ int32, path string) []byte {
	return frame(i32(zkwire.XidNotification), i64(-1), i32(0), i32(typ), i32(3), i32(int32(len(path))), []byte(path))
}

// The Tracker follows go-zookeeper's watches from the wire, as
// go-zookeeper's callbacks and notifyWatches keep them: a watching read
// adds one only when answered as go-zookeeper's callback adds it, an
// event removes the kinds go-zookeeper fires for it, a read without a
// watch adds none, a new session drops them all, and a setWatches it did
// not foresee leaves it with watches it cannot name, until forget.
func TestWatchSetFollowsGoZookeeper(t *testing.T) {
	tr := NewTracker()
	sc := &scriptConn{}
	c := tr.Dial(sc)
	write := func(frames ...[]byte) {
		t.Helper()
		for _, f := range frames {
			if _, err := c.Write(f); err != nil {
				t.Fatal(err)
			}
		}
	}
	serve := func(frames ...[]byte) {
		t.Helper()
		for _, f := range frames {
			sc.serve(f)
		}
		buf := make([]byte, 4096)
		for {
			if n, _ := c.Read(buf); n == 0 {
				return
			}
		}
	}
	check := func(step string, want bool) {
		t.Helper()
		if got := tr.watches.any(); got != want {
			t.Fatalf("%s: watches held %v, want %v (%+v)", step, got, want, tr.watches.set)
		}
	}
	write(frame(make([]byte, 44)))
	serve(frame(i32(0), i32(4000), i64(42), i32(16), make([]byte, 16)))
	check("connected", false)

	write(read(1, zkwire.OpGetChildren2, "/q"), frame(i32(2), i32(zkwire.OpExists), i32(2), []byte("/a"), []byte{0}))
	serve(answer(2, 0))
	check("a read without a watch answered", false)
	serve(answer(1, 0))
	check("a watching getChildren2 answered", true)
	serve(event(zkwire.EventNodeDataChanged, "/q"))
	check("a data event on a child watch", true)
	serve(event(zkwire.EventNodeChildrenChanged, "/q"))
	check("its children event", false)

	write(read(3, zkwire.OpGetData, "/b"), read(4, zkwire.OpExists, "/c"), read(5, zkwire.OpExists, "/d"), read(6, zkwire.OpGetChildren2, "/e"))
	serve(answer(3, errNoNode), answer(6, -4))
	check("a getData answered no node, a getChildren2 failed", false)
	serve(answer(4, errNoNode), answer(5, 0))
	check("exists of a missing and of a present node", true)
	serve(event(zkwire.EventNodeDeleted, "/d"), event(zkwire.EventNodeChildrenChanged, "/c"))
	check("/d deleted; a children event on /c, which waits for a creation", true)
	serve(event(zkwire.EventNodeCreated, "/c"))
	check("/c created", false)

	// A read answered on a later connection was failed on the first.
	write(read(7, zkwire.OpExists, "/f"))
	c = tr.Dial(sc)
	write(frame(make([]byte, 44)))
	serve(frame(i32(0), i32(4000), i64(42), i32(16), make([]byte, 16)), answer(7, 0))
	check("an answer to a read of an earlier connection", false)

	// A watch set with a path too long to read has no name.
	long := string(make([]byte, zkwire.MaxPathLen+1))
	write(read(8, zkwire.OpExists, long))
	serve(answer(8, 0))
	check("a watch on an unreadable path", true)
	serve(event(zkwire.EventNodeDeleted, "/"))
	check("after an event", true)
	tr.watches.forget()
	check("forgotten", false)

	// A setWatches we did not foresee.
	write(frame(i32(9), i32(zkwire.OpSetWatches), i64(1), make([]byte, 12)))
	check("an unforeseen setWatches", true)

	// A new session has none.
	c = tr.Dial(sc)
	write(frame(make([]byte, 44)))
	serve(frame(i32(0), i32(4000), i64(43), i32(16), make([]byte, 16)))
	check("a new session", false)
}
