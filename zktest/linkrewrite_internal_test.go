package zktest

import (
	"bytes"
	"encoding/binary"
	"io"
	"net"
	"testing"
)

// initialMessage builds ZooKeeper 3.8's first election message.
func initialMessage(version, sid int64, addr string) []byte {
	var b []byte
	b = binary.BigEndian.AppendUint64(b, uint64(version))
	b = binary.BigEndian.AppendUint64(b, uint64(sid))
	b = binary.BigEndian.AppendUint32(b, uint32(len(addr)))
	return append(b, addr...)
}

// The link proxy rewrites the address a server announces in its first
// election message, whichever way the bytes arrive, and passes everything
// after it, and any other stream, untouched.
func TestAnnounceAs(t *testing.T) {
	rewrite := announceAs("127.0.0.1:40001")
	msg := initialMessage(electionProtocolV2, 3, "127.0.0.1:30000")
	tail := []byte("notification bytes")
	want := append(initialMessage(electionProtocolV2, 3, "127.0.0.1:40001"), tail...)
	for split := 0; split <= len(msg); split++ {
		// The message arrives in two reads, split anywhere.
		a, b := net.Pipe()
		go func() {
			_, _ = a.Write(msg[:split])
			_, _ = a.Write(append(msg[split:len(msg):len(msg)], tail...))
			a.Close()
		}()
		got, err := io.ReadAll(&rewritingConn{Conn: b, rewrite: rewrite})
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("split %d: %q, %v; want %q", split, got, err, want)
		}
	}
	for _, other := range [][]byte{
		initialMessage(7, 3, "x"), // an old-style sid: no address
		initialMessage(electionProtocolV2, 3, string(make([]byte, maxElectionAddr+1))), // not a message we parse
		[]byte("GET / HTTP/1.0\r\n\r\n"),
	} {
		a, b := net.Pipe()
		go func() { _, _ = a.Write(other); a.Close() }()
		got, err := io.ReadAll(&rewritingConn{Conn: b, rewrite: rewrite})
		if err != nil || !bytes.Equal(got, other) {
			t.Fatalf("%q came out as %q, %v", other[:min(len(other), 24)], got[:min(len(got), 24)], err)
		}
	}
}
