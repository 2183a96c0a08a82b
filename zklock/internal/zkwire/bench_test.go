package zkwire_test

import (
	"testing"

	"github.com/zklockkit/zklockkit/zklock/internal/zkwire"
)

// BenchmarkSplitter: splitting and parsing a stream of typical frames as
// the tap does, one Split per frame; an operation is one frame.
func BenchmarkSplitter(b *testing.B) {
	path := "/zklock/accounts%2F42/_c_8d3a6f2e-2b1c-4a5e-9f00-1234567890ab-lock-"
	for _, bc := range []struct {
		name  string
		want  zkwire.Want
		parse func(head []byte) int32
		frame []byte
	}{
		{"create", zkwire.WantRequests, request, frame(createBody(7, path))},
		{"getChildren", zkwire.WantRequests, request, frame(i32(8), i32(8), i32(int32(len(path))), []byte(path), []byte{0})},
		{"reply", zkwire.WantReplies, reply, frame(i32(7), i64(0x1234), i32(0), i32(int32(len(path)+10)), []byte(path+"0000000003"))},
	} {
		b.Run(bc.name, func(b *testing.B) {
			s := zkwire.NewSplitter(bc.want)
			s.Split(frame(make([]byte, 44)), func([]byte, int) {}) // the connect frame
			var sink int32
			b.SetBytes(int64(len(bc.frame)))
			b.ReportAllocs()
			for b.Loop() {
				s.Split(bc.frame, func(head []byte, _ int) {
					sink += bc.parse(head)
				})
			}
			_ = sink
		})
	}
}

func request(head []byte) int32 {
	r, _ := zkwire.ParseRequest(head)
	return r.Xid + int32(len(r.CreatePath))
}

func reply(head []byte) int32 {
	h, _ := zkwire.ParseReplyHeader(head)
	return h.Xid + h.Err
}
