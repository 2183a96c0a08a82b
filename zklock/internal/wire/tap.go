package wire

import (
	"net"
	"time"

	"github.com/zklockkit/zklockkit/zklock/internal/zkwire"
)

// The events a tap publishes, one per frame it parses.

// requestSent: a request is about to be written. Every request is answered
// by the server, in order (pings included).
type requestSent struct {
	conn       uint64    // the connection's generation (see liveness.connecting)
	at         time.Time // taken before the bytes were written
	connect    bool      // the connect request, the connection's first frame; it has no xid or opcode
	xid        int32     // 0 if the frame is too short to hold one
	op         int32
	createPath string // the path a create asks for, alone or opening a multi; "" for any other request
	watch      bool   // a read that asks for a watch (or whose flag could not be read)
	watchPath  string // its path; "" if it could not be read
}

// connected: the server's connect response was read.
type connected struct {
	conn      uint64
	sessionID int64 // 0: the session go-zookeeper asked to resume has expired
	timeout   time.Duration
}

// replyRead: the answer to a request was read. Watch notifications answer
// no request and are not published.
type replyRead struct {
	conn uint64
	xid  int32
	zxid int64 // for a create, the new node's czxid
	err  int32 // ZooKeeper's error code; 0 when the request succeeded
}

// notified: a watch notification was read.
type notified struct {
	conn uint64
	typ  int32 // zkwire.EventNodeCreated, ...
	path string
}

// notifySubscriber is a tapSubscriber that also takes the watch
// notifications read.
type notifySubscriber interface {
	notified(notified)
}

// tapSubscriber takes a tap's events. Its methods are called in the order
// of the frames on the wire in each direction, on the goroutine that
// writes (requestSent) or reads (connected, replyRead), and must not
// block.
type tapSubscriber interface {
	requestSent(requestSent)
	connected(connected)
	replyRead(replyRead)
}

// tap is the bottom of a tracked connection (see Tracker.Dial): it parses
// the frames go-zookeeper writes and the server sends as they pass, and
// publishes what it reads to its subscribers. It changes no byte and adds
// no system call.
//
// Its Writes must not run concurrently with each other, nor its Reads:
// events are published in wire order only if the bytes are split and
// passed on in one step. The bufferedConn above it holds its write lock
// across Write and its read lock across Read, so the tap needs no lock of
// its own.
type tap struct {
	net.Conn
	conn uint64
	subs []tapSubscriber
	wr   zkwire.Splitter // written frames; used by Write only
	rd   zkwire.Splitter // read frames; used by Read only
}

func newTap(c net.Conn, conn uint64, subs []tapSubscriber) *tap {
	return &tap{Conn: c, conn: conn, subs: subs,
		wr: zkwire.NewSplitter(zkwire.WantRequests), rd: zkwire.NewSplitter(zkwire.WantReplies)}
}

// Write publishes the requests in p, then writes them. Published after,
// an answer read before Write returns (go-zookeeper reads on another
// goroutine) would find no send time to match and no create to take a
// fencing token from. A send time taken a moment early only makes the
// liveness anchor earlier, never later; if the write fails, the connection
// is dropped with everything published for it.
func (t *tap) Write(p []byte) (int, error) {
	now := time.Now()
	t.wr.Split(p, func(head []byte, frame int) { t.sent(now, head, frame) })
	return t.Conn.Write(p)
}

func (t *tap) sent(at time.Time, head []byte, frame int) {
	ev := requestSent{conn: t.conn, at: at}
	if frame == 1 {
		ev.connect = true
	} else {
		// Published even if too short to parse: were the server to answer
		// it, an answer matched to no send time would move the anchor to a
		// later request's.
		r, _ := zkwire.ParseRequest(head)
		ev.xid, ev.op = r.Xid, r.Op
		if len(r.CreatePath) > 0 {
			ev.createPath = string(r.CreatePath)
		}
		if r.Watch {
			ev.watch, ev.watchPath = true, string(r.WatchPath)
		}
	}
	for _, s := range t.subs {
		s.requestSent(ev)
	}
}

// Read reads from the connection and publishes the frames read, before
// returning them to the caller.
func (t *tap) Read(p []byte) (int, error) {
	n, err := t.Conn.Read(p)
	if n > 0 {
		t.rd.Split(p[:n], t.read)
	}
	return n, err
}

func (t *tap) read(head []byte, frame int) {
	if frame == 1 {
		r, ok := zkwire.ParseConnectResponse(head)
		if !ok {
			return
		}
		ev := connected{conn: t.conn, sessionID: r.SessionID, timeout: r.Timeout}
		for _, s := range t.subs {
			s.connected(ev)
		}
		return
	}
	h, ok := zkwire.ParseReplyHeader(head)
	if !ok {
		return
	}
	if h.Xid == zkwire.XidNotification {
		// A path too long to read is not published: the watches it
		// fires stay on record, which only costs a gate's bound.
		if n, ok := zkwire.ParseNotification(head); ok {
			ev := notified{conn: t.conn, typ: n.Type, path: string(n.Path)}
			for _, s := range t.subs {
				if ns, ok := s.(notifySubscriber); ok {
					ns.notified(ev)
				}
			}
		}
		return
	}
	ev := replyRead{conn: t.conn, xid: h.Xid, zxid: h.Zxid, err: h.Err}
	for _, s := range t.subs {
		s.replyRead(ev)
	}
}
