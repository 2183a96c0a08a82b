package zkwire_test

import (
	"fmt"

	"github.com/zklockkit/zklockkit/zklock/internal/zkwire"
)

// A tap splits the bytes a client writes into frames as they pass, in
// whatever pieces the writes come, and reads each request's header and a
// create's path.
func ExampleSplitter() {
	stream := append(frame(make([]byte, 44)), frame(createBody(7, "/zklock/r/_c_1-lock-"))...)
	stream = append(stream, frame(i32(8), i32(8), i32(9), []byte("/zklock/r"), []byte{0})...)

	s := zkwire.NewSplitter(zkwire.WantRequests)
	for _, chunk := range [][]byte{stream[:30], stream[30:61], stream[61:]} {
		s.Split(chunk, func(head []byte, frame int) {
			if frame == 1 {
				fmt.Println("connect request")
				return
			}
			r, _ := zkwire.ParseRequest(head)
			fmt.Printf("xid %d op %d create %q\n", r.Xid, r.Op, r.CreatePath)
		})
	}
	// Output:
	// connect request
	// xid 7 op 1 create "/zklock/r/_c_1-lock-"
	// xid 8 op 8 create ""
}

func ExampleParseReplyHeader() {
	h, ok := zkwire.ParseReplyHeader([]byte{0, 0, 0, 7, 0, 0, 0, 0, 0, 0, 0x12, 0x34, 0, 0, 0, 0})
	fmt.Println(ok, h.Xid, h.Zxid, h.Err)
	// Output: true 7 4660 0
}
