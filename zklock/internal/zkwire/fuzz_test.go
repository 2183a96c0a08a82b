package zkwire_test

import (
	"bytes"
	"encoding/binary"
	"slices"
	"testing"

	"github.com/zklockkit/zklockkit/zklock/internal/zkwire"
)

// refHeads is a reference for Splitter: it walks a stream held whole and
// returns the head of each frame whose head the stream holds, reading no
// further than each frame's body.
func refHeads(want zkwire.Want, stream []byte) [][]byte {
	var out [][]byte
	for len(stream) >= zkwire.LengthSize {
		length := int64(binary.BigEndian.Uint32(stream))
		body := stream[zkwire.LengthSize:]
		if int64(len(body)) > length {
			body = body[:length]
		}
		var head []byte
		for {
			need := int64(max(want(head, len(out)+1), 0))
			need = min(need, length)
			if int64(len(head)) >= need {
				break
			}
			if need > int64(len(body)) {
				return out // the head has not all arrived
			}
			head = body[:need]
		}
		out = append(out, head)
		if int64(len(stream)-zkwire.LengthSize) < length {
			return out
		}
		stream = stream[zkwire.LengthSize+length:]
	}
	return out
}

// splitAt feeds stream to a Splitter in chunks whose sizes come from cuts
// (one byte each, cycled) and returns copies of the heads and their frame
// numbers.
func splitAt(want zkwire.Want, stream, cuts []byte) ([][]byte, []int) {
	s := zkwire.NewSplitter(want)
	var got [][]byte
	var nums []int
	emit := func(h []byte, f int) {
		got = append(got, bytes.Clone(h))
		nums = append(nums, f)
	}
	for i := 0; len(stream) > 0; i++ {
		k := len(stream)
		if len(cuts) > 0 {
			k = min(int(cuts[i%len(cuts)])+1, len(stream))
		}
		s.Split(stream[:k], emit)
		stream = stream[k:]
	}
	return got, nums
}

// FuzzSplit: a frame stream split at any points yields the same heads, in
// the same order and with the same frame numbers, as the stream whole, and
// both match a reference that reads the stream whole; nothing panics. The
// stream is read both as the client's side (connect request, requests) and
// as the server's (connect response, replies).
func FuzzSplit(f *testing.F) {
	path := "/zklock/r/_c_8d3a6f2e-2b1c-4a5e-9f00-1234567890ab-lock-"
	requests := append(frame(make([]byte, 44)), frame(createBody(7, path))...)
	requests = append(requests, frame(multiBody(8, path))...)
	requests = append(requests, frame(i32(9), i32(8), make([]byte, 40))...)
	replies := append(frame(i32(0), i32(6000), i64(42), make([]byte, 20)), frame(i32(7), i64(0x1234), i32(0), make([]byte, 60))...)
	replies = append(replies, frame(i32(-1), i64(-1), i32(0), make([]byte, 30))...)
	f.Add(requests, []byte{0})
	f.Add(requests, []byte{3, 17, 1})
	f.Add(replies, []byte{4, 0, 200})
	f.Add(append(frame(), 0xff, 0xff, 0xff, 0xff, 1), []byte{1})
	f.Add(append(frame(i32(1), i32(1), i32(-5)), frame(i32(1), i32(14), i32(1), []byte{0})...), []byte{2})
	f.Fuzz(func(t *testing.T, stream, cuts []byte) {
		for _, side := range []struct {
			name string
			want zkwire.Want
		}{{"requests", zkwire.WantRequests}, {"replies", zkwire.WantReplies}} {
			whole, wholeNums := splitAt(side.want, stream, nil)
			cut, cutNums := splitAt(side.want, stream, cuts)
			ref := refHeads(side.want, stream)
			if !slices.EqualFunc(whole, ref, bytes.Equal) {
				t.Fatalf("%s whole: heads %x, reference %x", side.name, whole, ref)
			}
			if !slices.EqualFunc(cut, ref, bytes.Equal) || !slices.Equal(cutNums, wholeNums) {
				t.Fatalf("%s cut by %v: heads %x (frames %v), whole %x (frames %v)", side.name, cuts, cut, cutNums, whole, wholeNums)
			}
			for i, n := range wholeNums {
				if n != i+1 {
					t.Fatalf("%s: frame numbers %v", side.name, wholeNums)
				}
			}
		}
	})
}

// FuzzParse: every parser takes any head without panicking, reports ok
// exactly when the head holds its fixed fields, decodes them as laid out,
// and reads a create's path only from within the head. ParseRequest reads
// nothing past what RequestWant asks for: more bytes change nothing.
func FuzzParse(f *testing.F) {
	path := "/zklock/r/_c_x-lock-"
	f.Add(createBody(7, path))
	f.Add(multiBody(7, path))
	f.Add(append(append(i32(7), i32(1)...), i32(-1)...))
	f.Add(append(append(i32(7), i32(14)...), multiOp(5)...))
	f.Add(readBody(7, zkwire.OpExists, path, true))
	f.Add(readBody(7, zkwire.OpGetChildren2, path, false))
	f.Add(append(append(append(i32(0), i32(6000)...), i64(42)...), 1))
	f.Add(append(append(append(append(append(i32(-1), i64(-1)...), i32(0)...), i32(2)...), i32(3)...), append(i32(int32(len(path))), path...)...))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		r, ok := zkwire.ParseRequest(b)
		if ok != (len(b) >= zkwire.RequestHeaderLen) {
			t.Fatalf("ParseRequest of %d bytes: ok %v", len(b), ok)
		}
		if ok && (r.Xid != int32(binary.BigEndian.Uint32(b)) || r.Op != int32(binary.BigEndian.Uint32(b[4:]))) {
			t.Fatalf("ParseRequest header %+v from %x", r, b[:8])
		}
		if p := r.CreatePath; p != nil {
			// a create's path follows its length, right after the request
			// header, or after the header of the multi's first operation
			at := zkwire.RequestHeaderLen + 4
			switch r.Op {
			case zkwire.OpCreate:
			case zkwire.OpMulti:
				at += 9
			default:
				t.Fatalf("a create path in a request of op %d", r.Op)
			}
			if len(p) > zkwire.MaxPathLen || len(b) < at+len(p) || !bytes.Equal(b[at:at+len(p)], p) ||
				int(binary.BigEndian.Uint32(b[at-4:])) != len(p) {
				t.Fatalf("create path %q is not the one at offset %d of %x", p, at, b)
			}
		}
		reads := ok && (r.Op == zkwire.OpExists || r.Op == zkwire.OpGetData || r.Op == zkwire.OpGetChildren || r.Op == zkwire.OpGetChildren2)
		if r.Watch && !reads || r.WatchPath != nil && !r.Watch {
			t.Fatalf("ParseRequest %+v: a watch on a request of op %d", r, r.Op)
		}
		if p := r.WatchPath; p != nil {
			// a read's path follows its length, right after the header,
			// and its watch flag follows the path
			at := zkwire.RequestHeaderLen + 4
			if len(p) > zkwire.MaxPathLen || len(b) <= at+len(p) || !bytes.Equal(b[at:at+len(p)], p) ||
				int(binary.BigEndian.Uint32(b[at-4:])) != len(p) || b[at+len(p)] == 0 {
				t.Fatalf("watch path %q is not the one at offset %d of %x, or its flag is clear", p, at, b)
			}
		}
		want := zkwire.RequestWant(b)
		if want < zkwire.RequestHeaderLen || want > zkwire.RequestHeaderLen+9+4+zkwire.MaxPathLen {
			t.Fatalf("RequestWant = %d", want)
		}
		if len(b) >= want {
			r2, ok2 := zkwire.ParseRequest(b[:want])
			if ok2 != ok || r2.Xid != r.Xid || r2.Op != r.Op || !bytes.Equal(r2.CreatePath, r.CreatePath) || (r2.CreatePath == nil) != (r.CreatePath == nil) ||
				r2.Watch != r.Watch || !bytes.Equal(r2.WatchPath, r.WatchPath) || (r2.WatchPath == nil) != (r.WatchPath == nil) {
				t.Fatalf("ParseRequest of the %d bytes RequestWant asks for: %+v; of all %d: %+v", want, r2, len(b), r)
			}
			if w := zkwire.RequestWant(b[:want]); w != want {
				t.Fatalf("RequestWant of its own %d bytes is %d", want, w)
			}
		}

		h, ok := zkwire.ParseReplyHeader(b)
		if ok != (len(b) >= zkwire.ReplyHeaderLen) {
			t.Fatalf("ParseReplyHeader of %d bytes: ok %v", len(b), ok)
		}
		if ok && (h.Xid != int32(binary.BigEndian.Uint32(b)) || h.Zxid != int64(binary.BigEndian.Uint64(b[4:])) || h.Err != int32(binary.BigEndian.Uint32(b[12:]))) {
			t.Fatalf("ParseReplyHeader %+v from %x", h, b[:16])
		}
		if n, nok := zkwire.ParseNotification(b); nok {
			at := zkwire.ReplyHeaderLen + 12
			if h.Xid != zkwire.XidNotification || len(n.Path) > zkwire.MaxPathLen || len(b) < at+len(n.Path) ||
				!bytes.Equal(b[at:at+len(n.Path)], n.Path) || int(binary.BigEndian.Uint32(b[at-4:])) != len(n.Path) ||
				n.Type != int32(binary.BigEndian.Uint32(b[16:])) {
				t.Fatalf("ParseNotification %+v (path %q) from %x", n, n.Path, b)
			}
		}
		if rw := zkwire.WantReplies(b, 2); len(b) >= rw {
			n1, ok1 := zkwire.ParseNotification(b)
			n2, ok2 := zkwire.ParseNotification(b[:rw])
			if ok1 != ok2 || n1.Type != n2.Type || n1.State != n2.State || !bytes.Equal(n1.Path, n2.Path) {
				t.Fatalf("ParseNotification of the %d bytes WantReplies asks for: %+v, %v; of all %d: %+v, %v", rw, n2, ok2, len(b), n1, ok1)
			}
		}
		c, ok := zkwire.ParseConnectResponse(b)
		if ok != (len(b) >= zkwire.ConnectResponseLen) {
			t.Fatalf("ParseConnectResponse of %d bytes: ok %v", len(b), ok)
		}
		if ok && (c.SessionID != int64(binary.BigEndian.Uint64(b[8:])) || c.Timeout < 0) {
			t.Fatalf("ParseConnectResponse %+v from %x", c, b[:16])
		}
	})
}
