// Package zkwire parses the few parts of ZooKeeper's client protocol that
// zklock's connection tap reads as the bytes pass between go-zookeeper and
// the server:
//
//   - the stream of frames, each a 4-byte big-endian length and a body
//     ([Splitter]);
//   - on the client's side, the connect request (the first frame, which
//     the tap only counts) and then requests: a header of xid and opcode,
//     and the path of a create, alone or as the first operation of a multi
//     ([ParseRequest], [RequestWant]);
//   - on the server's side, the connect response: protocol version,
//     negotiated session timeout and session id ([ParseConnectResponse]),
//     and then replies: a header of xid, zxid and error code
//     ([ParseReplyHeader]).
//
// It is pure: no I/O, no locks, no goroutines, and no allocation once a
// Splitter's head buffer has grown to its largest head. Every function
// takes any input, however short or hostile, and says whether it could
// parse it; nothing panics. The fuzz targets (make fuzz) check that, and
// that a stream split at any points yields the same frames as the stream
// whole.
//
// Layouts are those of ZooKeeper's jute records (RequestHeader,
// ReplyHeader, ConnectResponse, MultiHeader, CreateRequest), big-endian.
package zkwire
