package zkwire

// WantRequests is the Want for the client's side of a connection: its
// first frame is the connect request, of which nothing is read (a reader
// needs only to know it was sent), and each later frame is a request, of
// which RequestWant.
func WantRequests(head []byte, frame int) int {
	if frame == 1 {
		return 0
	}
	return RequestWant(head)
}

// WantReplies is the Want for the server's side of a connection: its first
// frame is the connect response, of which ConnectResponseLen bytes are
// read, and each later frame a reply, of which ReplyHeaderLen, or a watch
// notification, of which also its event's type, state and path (up to
// MaxPathLen).
func WantReplies(head []byte, frame int) int {
	if frame == 1 {
		return ConnectResponseLen
	}
	return replyWant(head)
}
