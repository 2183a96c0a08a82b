package zkwire

import "encoding/binary"

// ReplyHeaderLen is the size of a reply's header: xid(4) zxid(8) err(4).
const ReplyHeaderLen = 16

// Xids the server uses for frames that answer no request of the client's
// own numbering.
const (
	XidNotification int32 = -1 // a watch notification: answers no request
	XidPing         int32 = -2 // the answer to a ping
)

// ReplyHeader is the header of a reply: the xid of the request it answers
// (or XidNotification), the zxid of the server's state when it answered,
// which for a create is the new node's czxid, and ZooKeeper's error code
// (0 when the request succeeded).
type ReplyHeader struct {
	Xid  int32
	Zxid int64
	Err  int32
}

// ParseReplyHeader parses the head of a reply's body. ok is false if head
// is shorter than ReplyHeaderLen.
func ParseReplyHeader(head []byte) (h ReplyHeader, ok bool) {
	if len(head) < ReplyHeaderLen {
		return ReplyHeader{}, false
	}
	return ReplyHeader{
		Xid:  int32(binary.BigEndian.Uint32(head[0:4])),
		Zxid: int64(binary.BigEndian.Uint64(head[4:12])),
		Err:  int32(binary.BigEndian.Uint32(head[12:16])),
	}, true
}
