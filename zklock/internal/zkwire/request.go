package zkwire

import "encoding/binary"

// Opcodes of the requests zklock's tap tells apart (ZooKeeper's OpCode).
const (
	OpCreate     int32 = 1   // create
	OpMulti      int32 = 14  // multi: a transaction of several operations
	OpSetWatches int32 = 101 // setWatches: go-zookeeper's request restoring watches on a reconnection
)

// RequestHeaderLen is the size of a request's header: xid(4) opcode(4).
const RequestHeaderLen = 8

// multiHeaderLen is the size of the header before each operation of a
// multi: type(4) done(1) err(4).
const multiHeaderLen = 9

// MaxPathLen is the longest create path ParseRequest reports. ZooKeeper's
// paths are far shorter in practice; a longer one is not read (and the
// request is reported without it).
const MaxPathLen = 8192

// Request is what zklock reads of a request: its header and, if it creates
// a node, the path the create asks for.
type Request struct {
	Xid int32
	Op  int32
	// CreatePath is the path of a create, or of the create that opens a
	// multi, as the request asks for it (before the server appends a
	// sequence number); nil for any other request, or if the path is
	// longer than MaxPathLen or runs past the frame. It aliases the head
	// it was parsed from.
	CreatePath []byte
}

// createPathAt reads a request's head as far as it goes. If the request
// creates a node (a create, or a multi whose first operation is one), it
// returns the offset of the create's path length and true. Otherwise it
// returns false and how many bytes it needs to tell, which is no more than
// head holds when the request creates nothing.
func createPathAt(head []byte) (int, bool) {
	if len(head) < RequestHeaderLen {
		return RequestHeaderLen, false
	}
	switch int32(binary.BigEndian.Uint32(head[4:8])) {
	case OpCreate:
		return RequestHeaderLen, true
	case OpMulti:
		at := RequestHeaderLen + multiHeaderLen
		if len(head) < at {
			return at, false
		}
		return at, int32(binary.BigEndian.Uint32(head[8:12])) == OpCreate
	}
	return RequestHeaderLen, false
}

// RequestWant returns how many bytes of a request's body ParseRequest
// needs to report everything it reports, given the first bytes of the
// body in head: the header, and for a create (alone or opening a multi)
// the path's length and the path, up to MaxPathLen.
func RequestWant(head []byte) int {
	at, ok := createPathAt(head)
	switch {
	case !ok:
		return at
	case len(head) < at+4:
		return at + 4
	}
	n := int32(binary.BigEndian.Uint32(head[at : at+4]))
	if n < 0 || n > MaxPathLen {
		return at + 4
	}
	return at + 4 + int(n)
}

// ParseRequest parses the head of a request's body. ok is false if head is
// shorter than a request header.
func ParseRequest(head []byte) (r Request, ok bool) {
	if len(head) < RequestHeaderLen {
		return Request{}, false
	}
	r.Xid = int32(binary.BigEndian.Uint32(head[0:4]))
	r.Op = int32(binary.BigEndian.Uint32(head[4:8]))
	at, creates := createPathAt(head)
	if !creates || len(head) < at+4 {
		return r, true
	}
	n := int32(binary.BigEndian.Uint32(head[at : at+4]))
	if n < 0 || n > MaxPathLen || int(n) > len(head)-at-4 {
		return r, true
	}
	r.CreatePath = head[at+4 : at+4+int(n) : at+4+int(n)]
	return r, true
}
