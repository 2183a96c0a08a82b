package zkwire

import (
	"encoding/binary"
	"time"
)

// ConnectResponseLen is the size of the connect response's fields that
// ParseConnectResponse reads: protocolVersion(4) timeOut(4) sessionId(8).
// The session password and the read-only flag follow.
const ConnectResponseLen = 16

// ConnectResponse is the server's answer to a connect request, the first
// frame it sends on a connection.
type ConnectResponse struct {
	ProtocolVersion int32
	// Timeout is the session timeout the server negotiated.
	Timeout time.Duration
	// SessionID is the session the connection serves; 0 means the session
	// the client asked to resume has expired.
	SessionID int64
}

// ParseConnectResponse parses the head of a connect response's body. ok is
// false if head is shorter than ConnectResponseLen.
func ParseConnectResponse(head []byte) (r ConnectResponse, ok bool) {
	if len(head) < ConnectResponseLen {
		return ConnectResponse{}, false
	}
	return ConnectResponse{
		ProtocolVersion: int32(binary.BigEndian.Uint32(head[0:4])),
		Timeout:         time.Duration(binary.BigEndian.Uint32(head[4:8])) * time.Millisecond,
		SessionID:       int64(binary.BigEndian.Uint64(head[8:16])),
	}, true
}
