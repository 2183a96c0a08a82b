package zklock

import (
	"encoding/binary"
	"testing"
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

// The scanner finds frame boundaries however the stream is cut.
func TestFrameScanner(t *testing.T) {
	stream := append(frame(i32(0), i32(4000), i64(0x1234), make([]byte, 16)), frame(i32(-2), i64(5), i32(0))...)
	stream = append(stream, frame(i32(-1), make([]byte, 40))...)
	stream = append(stream, frame(i32(7))...)
	for chunk := 1; chunk <= len(stream); chunk++ {
		s := frameScanner{want: readWant}
		var got [][]byte
		for i := 0; i < len(stream); i += chunk {
			s.scan(stream[i:min(i+chunk, len(stream))], func(h []byte, _ int) { got = append(got, append([]byte(nil), h...)) })
		}
		if len(got) != 4 {
			t.Fatalf("chunk %d: %d frames", chunk, len(got))
		}
		if len(got[0]) != 16 || binary.BigEndian.Uint32(got[0][4:8]) != 4000 {
			t.Fatalf("chunk %d: connect response header %x", chunk, got[0])
		}
		for i, xid := range []int32{-2, -1, 7} {
			if int32(binary.BigEndian.Uint32(got[i+1])) != xid {
				t.Fatalf("chunk %d: frame %d xid %x", chunk, i+1, got[i+1])
			}
		}
	}
}

// The anchor is the send time of the oldest unanswered request when an
// answer arrives; watch notifications do not move it.
func TestLivenessAnchor(t *testing.T) {
	l := &liveness{}
	tc := l.wrap(nil).(*trackedConn)
	t0 := time.Now()
	l.sent(tc.gen, t0, nil, true) // connect request
	l.received(tc.gen, append(append(i32(0), i32(6000)...), i64(42)...), true)
	if a, to := l.snapshot(); !a.Equal(t0) || to != 6*time.Second || l.sessionID != 42 {
		t.Fatalf("after connect: anchor %v timeout %v session %d", a, to, l.sessionID)
	}
	t1, t2 := t0.Add(time.Second), t0.Add(2*time.Second)
	l.sent(tc.gen, t1, append(i32(1), i32(4)...), false)
	l.sent(tc.gen, t2, append(i32(2), i32(4)...), false)
	l.received(tc.gen, i32(-1), false) // a watch event answers nothing
	if a, _ := l.snapshot(); !a.Equal(t0) {
		t.Fatalf("watch event moved the anchor to %v", a)
	}
	l.received(tc.gen, append(append(i32(1), i64(0x99)...), i32(0)...), false)
	if a, _ := l.snapshot(); !a.Equal(t1) {
		t.Fatalf("anchor %v, want the oldest request's send time %v", a, t1)
	}
	// Frames of an old connection are ignored.
	old := tc.gen
	l.wrap(nil)
	l.received(old, append(append(i32(2), i64(0x9a)...), i32(0)...), false)
	if a, _ := l.snapshot(); !a.Equal(t1) {
		t.Fatalf("stale connection moved the anchor to %v", a)
	}
}

// A create reply's zxid is recorded as the czxid of the path it asked for,
// for a create alone and for a multi whose first operation is a create (an
// acquire's counted create); a multi that starts otherwise records nothing.
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
		{"create", append(append(i32(7), i32(opCreate)...), create...), 0x1234},
		{"multi", append(append(append(append(i32(7), i32(opMulti)...), multiOp(opCreate)...), create...),
			append(multiOp(5), make([]byte, 20)...)...), 0x1234},
		{"multi of other operations", append(append(append(i32(7), i32(opMulti)...), multiOp(5)...), create...), 0},
		{"truncated multi", append(append(i32(7), i32(opMulti)...), 0, 0), 0},
	} {
		req := append(frame(i32(0)), frame(tc.body)...) // connect request, then the request
		for chunk := 1; chunk <= len(req); chunk += 7 {
			l := &liveness{}
			c := l.wrap(nil).(*trackedConn)
			frames := 0
			for i := 0; i < len(req); i += chunk {
				c.wr.scan(req[i:min(i+chunk, len(req))], func(h []byte, f int) {
					frames++
					l.sent(c.gen, time.Now(), h, f == 1)
				})
			}
			if frames != 2 {
				t.Fatalf("%s, chunk %d: %d frames, want 2", tc.name, chunk, frames)
			}
			reply := frame(i32(7), i64(0x1234), i32(0), i32(int32(len(path)+10)), []byte(path+"0000000003"))
			c.rd.frames = 1 // past the connect reply
			c.rd.scan(reply, func(h []byte, f int) { l.received(c.gen, h, f == 1) })
			if z := l.takeCreated(path); z != tc.want {
				t.Fatalf("%s, chunk %d: czxid %#x, want %#x", tc.name, chunk, z, tc.want)
			}
			if z := l.takeCreated(path); z != 0 {
				t.Fatalf("%s: taken twice", tc.name)
			}
		}
	}
}
