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

// Types of a watch notification's event (ZooKeeper's EventType).
const (
	EventNodeCreated         int32 = 1
	EventNodeDeleted         int32 = 2
	EventNodeDataChanged     int32 = 3
	EventNodeChildrenChanged int32 = 4
)

// notificationPathAt is the offset of a notification's path length: the
// reply header, then the event's type(4) and state(4).
const notificationPathAt = ReplyHeaderLen + 8

// Notification is a watch notification: the server tells the client that a
// watched node changed.
type Notification struct {
	Type  int32 // EventNodeCreated, EventNodeDeleted, ...
	State int32
	// Path is the path of the node that changed. It aliases the head it
	// was parsed from.
	Path []byte
}

// replyWant returns how many bytes of a reply's body ParseReplyHeader and,
// for a notification, ParseNotification need, given the first bytes of the
// body in head.
func replyWant(head []byte) int {
	if len(head) < ReplyHeaderLen || int32(binary.BigEndian.Uint32(head[0:4])) != XidNotification {
		return ReplyHeaderLen
	}
	if len(head) < notificationPathAt+4 {
		return notificationPathAt + 4
	}
	n := int32(binary.BigEndian.Uint32(head[notificationPathAt:]))
	if n < 0 || n > MaxPathLen {
		return notificationPathAt + 4
	}
	return notificationPathAt + 4 + int(n)
}

// ParseNotification parses the head of a reply's body as a watch
// notification. ok is false if it is not one (its xid is not
// XidNotification), or if head does not hold its event's type, state and
// whole path (a path over MaxPathLen is never read).
func ParseNotification(head []byte) (n Notification, ok bool) {
	h, ok := ParseReplyHeader(head)
	if !ok || h.Xid != XidNotification || len(head) < notificationPathAt+4 {
		return Notification{}, false
	}
	n.Type = int32(binary.BigEndian.Uint32(head[ReplyHeaderLen:]))
	n.State = int32(binary.BigEndian.Uint32(head[ReplyHeaderLen+4:]))
	path, _ := pathFrom(head, notificationPathAt)
	if path == nil {
		return Notification{}, false
	}
	n.Path = path
	return n, true
}
