package wire

import (
	"io"
	"testing"
	"time"

	"github.com/zklockkit/zklockkit/zklock/internal/zkwire"
)

// The anchor is the send time of the oldest unanswered request when an
// answer arrives; watch notifications do not move it. The requests' send
// times are given; the server's frames are read through a tap.
func TestLivenessAnchor(t *testing.T) {
	l := &liveness{}
	gen, resumed := l.connecting()
	if resumed {
		t.Fatal("a first connection resumes a session")
	}
	sc := &scriptConn{}
	tp := newTap(sc, gen, []tapSubscriber{l})
	read := func(f []byte) {
		t.Helper()
		sc.serve(f)
		if _, err := io.ReadFull(tp, make([]byte, len(f))); err != nil {
			t.Fatal(err)
		}
	}
	t0 := time.Now()
	l.requestSent(requestSent{conn: gen, at: t0, connect: true})
	read(frame(i32(0), i32(6000), i64(42), i32(16), make([]byte, 16)))
	if a, to := l.snapshot(); !a.Equal(t0) || to != 6*time.Second || l.sessionID() != 42 {
		t.Fatalf("after connect: anchor %v timeout %v session %d", a, to, l.sessionID())
	}
	t1, t2 := t0.Add(time.Second), t0.Add(2*time.Second)
	l.requestSent(requestSent{conn: gen, at: t1, xid: 1, op: 4})
	l.requestSent(requestSent{conn: gen, at: t2, xid: 2, op: 4})
	read(frame(i32(-1), i64(-1), i32(0), i32(3), i32(2), i32(1), []byte("/"))) // a watch event answers nothing
	if a, _ := l.snapshot(); !a.Equal(t0) {
		t.Fatalf("watch event moved the anchor to %v", a)
	}
	read(frame(i32(1), i64(0x99), i32(0)))
	if a, _ := l.snapshot(); !a.Equal(t1) {
		t.Fatalf("anchor %v, want the oldest request's send time %v", a, t1)
	}
	// Frames of an old connection are ignored: an answer read on it
	// matches no request of the new one, and a request sent on it is
	// answered by nothing on the new one.
	gen2, resumed := l.connecting()
	if !resumed {
		t.Fatal("a connection after a session does not resume it")
	}
	t3, t4 := t0.Add(3*time.Second), t0.Add(4*time.Second)
	l.requestSent(requestSent{conn: gen2, at: t3, connect: true})
	read(frame(i32(2), i64(0x9a), i32(0))) // through the old connection's tap
	if a, _ := l.snapshot(); !a.Equal(t1) {
		t.Fatalf("stale connection moved the anchor to %v", a.Sub(t0))
	}
	l.requestSent(requestSent{conn: gen, at: t4, xid: 3, op: 4})
	l.connected(connected{conn: gen2, sessionID: 42, timeout: 6 * time.Second})
	l.replyRead(replyRead{conn: gen2, xid: 4})
	if a, _ := l.snapshot(); !a.Equal(t3) {
		t.Fatalf("anchor %v after the new connection's answers, want its connect request's send time %v", a.Sub(t0), t3.Sub(t0))
	}
}

// A connect response with no session (the session expired) forgets the
// requests sent: none of them counts as heard.
func TestLivenessExpiredSession(t *testing.T) {
	t0 := time.Now()
	l, _ := established(t0)
	gen, _ := l.connecting()
	l.requestSent(requestSent{conn: gen, at: t0.Add(time.Second), connect: true})
	l.connected(connected{conn: gen, sessionID: 0})
	l.requestSent(requestSent{conn: gen, at: t0.Add(2 * time.Second), xid: 1, op: 4})
	l.replyRead(replyRead{conn: gen, xid: 1})
	if a, to := l.snapshot(); !a.Equal(t0.Add(2*time.Second)) || to != 6*time.Second || l.sessionID() != 42 {
		t.Fatalf("after an expired session: anchor %v (want the later request's), timeout %v, session %d", a.Sub(t0), to, l.sessionID())
	}
}

// A create reply's zxid is recorded as the czxid of the path it asked for,
// for a create alone and for a multi whose first operation is a create (an
// acquire's counted create); a multi that starts otherwise records
// nothing. The requests go through a tracked connection in writes of any
// size.
func TestLivenessCreateZxid(t *testing.T) {
	path := "/zklock/r/_c_8d3a6f2e-2b1c-4a5e-9f00-1234567890ab-lock-"
	create := append(i32(int32(len(path))), path...)
	create = append(create, make([]byte, 30)...) // data, ACL, flags
	multiOp := func(op int32) []byte {           // type, done, err
		return append(append(i32(op), 0), i32(-1)...)
	}
	for _, tc := range []struct {
		name string
		body []byte
		want int64
	}{
		{"create", append(append(i32(7), i32(1)...), create...), 0x1234},
		{"multi", append(append(append(append(i32(7), i32(14)...), multiOp(1)...), create...),
			append(multiOp(5), make([]byte, 20)...)...), 0x1234},
		{"multi of other operations", append(append(append(i32(7), i32(14)...), multiOp(5)...), create...), 0},
		{"truncated multi", append(append(i32(7), i32(14)...), 0, 0), 0},
	} {
		req := append(frame(make([]byte, 44)), frame(tc.body)...) // connect request, then the request
		for chunk := 1; chunk <= len(req); chunk += 7 {
			tr, rec := recordingTracker()
			sc := &scriptConn{}
			c := tr.Dial(sc)
			for i := 0; i < len(req); i += chunk {
				if _, err := c.Write(req[i:min(i+chunk, len(req))]); err != nil {
					t.Fatal(err)
				}
			}
			if n := len(rec.got()); n != 2 {
				t.Fatalf("%s, chunk %d: %d frames, want 2", tc.name, chunk, n)
			}
			sc.serve(frame(i32(0), i32(6000), i64(42), i32(16), make([]byte, 16)))
			sc.serve(frame(i32(7), i64(0x1234), i32(0), i32(int32(len(path)+10)), []byte(path+"0000000003")))
			if _, err := io.ReadAll(c); err != nil {
				t.Fatal(err)
			}
			if z := tr.Created(path); z != tc.want {
				t.Fatalf("%s, chunk %d: czxid %#x, want %#x", tc.name, chunk, z, tc.want)
			}
			if z := tr.Created(path); z != 0 {
				t.Fatalf("%s: taken twice", tc.name)
			}
		}
	}
}

// A create that fails (here: the queue does not exist) records no czxid,
// and its xid is forgotten: a later reply with the same xid records
// nothing either.
func TestLivenessCreateFailed(t *testing.T) {
	path := "/zklock/r/_c_x-lock-"
	tr := NewTracker()
	sc := &scriptConn{}
	c := tr.Dial(sc)
	req := append(frame(make([]byte, 44)), frame(i32(7), i32(1), i32(int32(len(path))), []byte(path), make([]byte, 30))...)
	if _, err := c.Write(req); err != nil {
		t.Fatal(err)
	}
	sc.serve(frame(i32(0), i32(6000), i64(42), i32(16), make([]byte, 16)))
	sc.serve(frame(i32(7), i64(0x1234), i32(-101))) // NoNode
	sc.serve(frame(i32(7), i64(0x1235), i32(0)))
	if _, err := io.ReadAll(c); err != nil {
		t.Fatal(err)
	}
	if z := tr.Created(path); z != 0 {
		t.Fatalf("czxid %#x of a failed create", z)
	}
}

// A write answered with success is reported to OnCommit's function, with
// its session and send time, when the request before it on the connection
// (not an auth packet, which touches no session) was sent within the gap;
// a failed write, a read, a write after a longer silence, one sent on an
// older connection and one after the session expired are not.
func TestLivenessCommit(t *testing.T) {
	tr := NewTracker()
	type proof struct {
		sid int64
		at  time.Time
	}
	var got []proof
	tr.OnCommit(func(timeout time.Duration) time.Duration { return timeout / 10 }, func(sid int64, at time.Time) {
		got = append(got, proof{sid, at})
	})
	l := tr.live
	t0 := time.Now()
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	gen, _ := l.connecting()
	l.requestSent(requestSent{conn: gen, at: at(0), connect: true})
	l.connected(connected{conn: gen, sessionID: 42, timeout: 10 * time.Second}) // gap 1 s
	check := func(what string, want ...proof) {
		t.Helper()
		if len(got) != len(want) {
			t.Fatalf("%s: told %v, want %v", what, got, want)
		}
		for i := range want {
			if got[i].sid != want[i].sid || !got[i].at.Equal(want[i].at) {
				t.Fatalf("%s: told %v, want %v", what, got, want)
			}
		}
		got = got[:0]
	}
	xid := int32(0)
	send := func(ms int, op int32) {
		xid++
		l.requestSent(requestSent{conn: gen, at: at(ms), xid: xid, op: op})
	}
	answer := func(code int32) { l.replyRead(replyRead{conn: gen, xid: xid, err: code}) }

	send(500, zkwire.OpCreate) // 0.5 s after the connect request
	answer(0)
	check("a create after the connect", proof{42, at(500)})
	send(900, opDelete)
	answer(0)
	check("a delete", proof{42, at(900)})
	send(1000, zkwire.OpGetChildren)
	answer(0)
	check("a read")
	send(1100, opDelete)
	answer(-101) // no node
	check("a failed delete")
	send(3000, opSetData) // 1.9 s after the delete before it
	answer(0)
	check("a write after a silence longer than the gap")
	send(3100, opAuth)
	answer(0)
	send(4050, zkwire.OpMulti) // 1.05 s after the setData: the auth packet does not count
	answer(0)
	check("a write whose only recent predecessor is an auth packet")
	send(4060, OpPing)
	send(4070, opCreate2) // pipelined behind the ping
	answer(0)
	answer(0)
	check("a create2 behind a ping", proof{42, at(4070)})

	// A write sent on the old connection and answered after a new one
	// began counts for nothing.
	send(4100, zkwire.OpCreate)
	old := gen
	gen, _ = l.connecting()
	l.replyRead(replyRead{conn: old, xid: xid})
	check("a write answered on an old connection")
	// The first write on the new connection has only the connect request
	// before it.
	l.requestSent(requestSent{conn: gen, at: at(4200), connect: true})
	l.connected(connected{conn: gen, sessionID: 42, timeout: 10 * time.Second})
	send(4300, zkwire.OpCreate)
	answer(0)
	check("a create after a reconnection", proof{42, at(4300)})
	// A session that expired proves nothing, until a new one is made.
	gen, _ = l.connecting()
	l.requestSent(requestSent{conn: gen, at: at(4400), connect: true})
	l.connected(connected{conn: gen, sessionID: 0})
	send(4500, zkwire.OpCreate)
	answer(0)
	check("a write after the session expired")
	gen, _ = l.connecting()
	l.requestSent(requestSent{conn: gen, at: at(4600), connect: true})
	l.connected(connected{conn: gen, sessionID: 43, timeout: 10 * time.Second})
	send(4700, zkwire.OpCreate)
	answer(0)
	check("a create on the new session", proof{43, at(4700)})
}

// On a connection that is never idle (a request always unanswered), each
// answer still moves the anchor to its own request's send time, and the
// requests answered do not pile up.
func TestLivenessNeverIdle(t *testing.T) {
	t0 := time.Now()
	l, gen := established(t0)
	at := func(i int) time.Time { return t0.Add(time.Duration(i+1) * time.Millisecond) }
	const inFlight = 3
	for i := range inFlight {
		l.requestSent(requestSent{conn: gen, at: at(i), xid: int32(i + 1), op: 4})
	}
	most := 0
	for i := range 10_000 {
		l.requestSent(requestSent{conn: gen, at: at(i + inFlight), xid: int32(i + inFlight + 1), op: 4})
		l.replyRead(replyRead{conn: gen, xid: int32(i + 1)})
		if a, _ := l.snapshot(); !a.Equal(at(i)) {
			t.Fatalf("answer %d: anchor %v, want %v", i, a.Sub(t0), at(i).Sub(t0))
		}
		l.mu.Lock()
		if len(l.pending)-l.head != inFlight {
			t.Fatalf("answer %d: %d unanswered, want %d", i, len(l.pending)-l.head, inFlight)
		}
		most = max(most, len(l.pending))
		l.mu.Unlock()
	}
	if most > 2*64+inFlight {
		t.Fatalf("%d requests kept for %d unanswered", most, inFlight)
	}
}

// established returns a liveness whose first connection, generation gen,
// established session 42 (timeout 6 s) with a connect request sent at t0.
func established(t0 time.Time) (*liveness, uint64) {
	l := &liveness{}
	gen, _ := l.connecting()
	l.requestSent(requestSent{conn: gen, at: t0, connect: true})
	l.connected(connected{conn: gen, sessionID: 42, timeout: 6 * time.Second})
	return l, gen
}
