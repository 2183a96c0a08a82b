package zkwire_test

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/zklockkit/zklockkit/zklock/internal/zkwire"
)

// heads splits stream in chunks of size chunk and returns copies of the
// heads handed over.
func heads(want zkwire.Want, stream []byte, chunk int) [][]byte {
	s := zkwire.NewSplitter(want)
	var got [][]byte
	for i := 0; i < len(stream); i += chunk {
		s.Split(stream[i:min(i+chunk, len(stream))], func(h []byte, _ int) {
			got = append(got, bytes.Clone(h))
		})
	}
	return got
}

// The splitter finds frame boundaries however the stream is cut.
func TestFrameScanner(t *testing.T) {
	stream := append(frame(i32(0), i32(4000), i64(0x1234), make([]byte, 16)), frame(i32(-2), i64(5), i32(0))...)
	stream = append(stream, frame(i32(-1), make([]byte, 40))...)
	stream = append(stream, frame(i32(7))...)
	for chunk := 1; chunk <= len(stream); chunk++ {
		got := heads(zkwire.WantReplies, stream, chunk)
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
		if len(got[3]) != 4 {
			t.Fatalf("chunk %d: head of a 4-byte frame is %d bytes, want the whole body", chunk, len(got[3]))
		}
	}
}

// A head that says more follows (a create's path length, a read's path and
// watch flag) is read further, however the stream is cut; the rest of each
// body is skipped.
func TestSplitterWantsMore(t *testing.T) {
	path := "/zklock/r/_c_8d3a6f2e-2b1c-4a5e-9f00-1234567890ab-lock-"
	stream := append(frame(make([]byte, 44)), frame(createBody(7, path))...)
	stream = append(stream, frame(multiBody(8, path))...)
	stream = append(stream, frame(i32(9), i32(5), make([]byte, 100))...) // setData
	stream = append(stream, frame(readBody(10, zkwire.OpGetChildren2, path, true), make([]byte, 50))...)
	for chunk := 1; chunk <= len(stream); chunk++ {
		got := heads(zkwire.WantRequests, stream, chunk)
		if len(got) != 5 {
			t.Fatalf("chunk %d: %d frames", chunk, len(got))
		}
		if len(got[0]) != 0 {
			t.Fatalf("chunk %d: %d bytes read of the connect request, want none", chunk, len(got[0]))
		}
		for i, xid := range []int32{7, 8} {
			r, ok := zkwire.ParseRequest(got[i+1])
			if !ok || r.Xid != xid || string(r.CreatePath) != path {
				t.Fatalf("chunk %d: frame %d parsed as %+v, %v; want xid %d creating %s", chunk, i+2, r, ok, xid, path)
			}
		}
		if len(got[3]) != zkwire.RequestHeaderLen {
			t.Fatalf("chunk %d: %d bytes read of a setData, want its header only", chunk, len(got[3]))
		}
		if r, _ := zkwire.ParseRequest(got[4]); !r.Watch || string(r.WatchPath) != path || len(got[4]) != zkwire.RequestHeaderLen+4+len(path)+1 {
			t.Fatalf("chunk %d: a watching getChildren2 read as %+v from %d bytes", chunk, r, len(got[4]))
		}
	}
}

// Frames() counts the heads handed over, and a frame whose length has
// arrived but not its body hands over nothing yet.
func TestSplitterFrames(t *testing.T) {
	s := zkwire.NewSplitter(zkwire.WantReplies)
	stream := frame(i32(0), i32(6000), i64(42))
	n := 0
	s.Split(stream[:10], func([]byte, int) { n++ })
	if n != 0 || s.Frames() != 0 {
		t.Fatalf("after a partial head: %d emitted, Frames() = %d", n, s.Frames())
	}
	s.Split(stream[10:], func(_ []byte, f int) {
		n++
		if f != 1 {
			t.Fatalf("frame number %d, want 1", f)
		}
	})
	if n != 1 || s.Frames() != 1 {
		t.Fatalf("after the whole frame: %d emitted, Frames() = %d", n, s.Frames())
	}
}

// An empty frame and a frame whose length runs past everything sent are
// handled like any other: nothing is read past the body, nothing panics.
func TestSplitterEdgeLengths(t *testing.T) {
	stream := append(frame(), frame(i32(3), i64(1), i32(0))...)
	stream = append(stream, 0xff, 0xff, 0xff, 0xff, 1, 2, 3)
	s := zkwire.NewSplitter(func([]byte, int) int { return zkwire.ReplyHeaderLen })
	var lens []int
	s.Split(stream, func(h []byte, _ int) { lens = append(lens, len(h)) })
	if len(lens) != 2 || lens[0] != 0 || lens[1] != 16 {
		t.Fatalf("head lengths %v, want [0 16]", lens)
	}
}
