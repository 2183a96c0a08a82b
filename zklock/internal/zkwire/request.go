package zkwire

import "encoding/binary"

// Opcodes of the requests zklock's tap tells apart (ZooKeeper's OpCode).
const (
	OpCreate       int32 = 1   // create
	OpExists       int32 = 3   // exists: may set a watch
	OpGetData      int32 = 4   // getData: may set a watch
	OpGetChildren  int32 = 8   // getChildren: may set a watch
	OpGetChildren2 int32 = 12  // getChildren2 (children and stat): may set a watch
	OpMulti        int32 = 14  // multi: a transaction of several operations
	OpSetWatches   int32 = 101 // setWatches: go-zookeeper's request restoring watches on a reconnection
)

// watchingRead reports whether op is a read that may ask for a watch: its
// body is a path, then a boolean watch flag.
func watchingRead(op int32) bool {
	switch op {
	case OpExists, OpGetData, OpGetChildren, OpGetChildren2:
		return true
	}
	return false
}

// RequestHeaderLen is the size of a request's header: xid(4) opcode(4).
const RequestHeaderLen = 8

// multiHeaderLen is the size of the header before each operation of a
// multi: type(4) done(1) err(4).
const multiHeaderLen = 9

// MaxPathLen is the longest path ParseRequest and ParseNotification report. ZooKeeper's
// paths are far shorter in practice; a longer one is not read (and the
// request is reported without it).
const MaxPathLen = 8192

// Request is what zklock reads of a request: its header, the path a create
// asks for, and whether a read asks for a watch, on which path.
type Request struct {
	Xid int32
	Op  int32
	// Watch is set on a read that asks the server for a watch (exists,
	// getData, getChildren or getChildren2 with its watch flag set), and
	// on one of those reads whose flag could not be read (its path longer
	// than MaxPathLen, or the frame too short): a reader that must not
	// miss a watch takes that for one.
	Watch bool
	// WatchPath is the path of a read with Watch; nil if the flag could
	// not be read. It aliases the head it was parsed from.
	WatchPath []byte
	// CreatePath is the path of a create, or of the create that opens a
	// multi, as the request asks for it (before the server appends a
	// sequence number); nil for any other request, or if the path is
	// longer than MaxPathLen or runs past the frame. It aliases the head
	// it was parsed from.
	CreatePath []byte
}

// pathAt reads a request's head as far as it goes. If the request carries
// a path zklock reads (a create's, alone or opening a multi, or a read's
// that may ask for a watch), it returns the offset of the path's length
// and true. Otherwise it returns false and how many bytes it needs to
// tell, which is no more than head holds when the request carries none.
func pathAt(head []byte) (int, bool) {
	if len(head) < RequestHeaderLen {
		return RequestHeaderLen, false
	}
	switch op := int32(binary.BigEndian.Uint32(head[4:8])); {
	case op == OpCreate, watchingRead(op):
		return RequestHeaderLen, true
	case op == OpMulti:
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
// body in head: the header; for a create (alone or opening a multi) the
// path's length and the path, up to MaxPathLen; for a read that may ask
// for a watch, also the flag after the path.
func RequestWant(head []byte) int {
	at, ok := pathAt(head)
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
	if watchingRead(int32(binary.BigEndian.Uint32(head[4:8]))) {
		return at + 4 + int(n) + 1
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
	reads := watchingRead(r.Op)
	at, has := pathAt(head)
	if !has {
		return r, true
	}
	path, end := pathFrom(head, at)
	switch {
	case !reads:
		r.CreatePath = path
	case path == nil || end >= len(head):
		r.Watch = true // the flag is past what we could read: assume one
	case head[end] != 0:
		r.Watch, r.WatchPath = true, path
	}
	return r, true
}

// pathFrom reads the length-prefixed path whose length is at offset at of
// head, and returns it and the offset after it; nil if the length is
// missing, negative, over MaxPathLen, or runs past head.
func pathFrom(head []byte, at int) ([]byte, int) {
	if len(head) < at+4 {
		return nil, 0
	}
	n := int32(binary.BigEndian.Uint32(head[at : at+4]))
	if n < 0 || n > MaxPathLen || int(n) > len(head)-at-4 {
		return nil, 0
	}
	end := at + 4 + int(n)
	return head[at+4 : end : end], end
}
