package zktest_test

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"io"
	"net"
	"testing"
	"time"

	"github.com/zklockkit/zklockkit/zktest"
)

// A TLS server answers a ZooKeeper connect request on its secure port
// over mutually authenticated TLS, refuses a client without a certificate,
// and keeps serving four-letter words on its plain port.
func TestTLSServer(t *testing.T) {
	s, err := zktest.StartTLSServer(zktest.WithTickTime(500 * time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if m, err := s.Mode(); err != nil || m != "standalone" {
		t.Fatalf("Mode() = %q, %v", m, err)
	}
	if s.SecureAddr() == s.Addr() {
		t.Fatal("secure and plain addresses are the same")
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(s.CACertPEM()) {
		t.Fatal("CACertPEM holds no certificate")
	}

	conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", s.SecureAddr(), s.ClientTLSConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if cn := conn.ConnectionState().PeerCertificates[0].Subject.CommonName; cn != "zktest server" {
		t.Fatalf("server certificate CN %q", cn)
	}
	// A connect request (protocol 0, zxid 0, timeout 4s, session 0, no
	// password); the answer carries the new session's id.
	req := make([]byte, 4+4+8+4+8+4+16)
	binary.BigEndian.PutUint32(req[0:], uint32(len(req)-4))
	binary.BigEndian.PutUint32(req[16:], 4000)
	binary.BigEndian.PutUint32(req[28:], 16)
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := conn.Write(req); err != nil {
		t.Fatal(err)
	}
	resp := make([]byte, 4+4+4+8)
	if _, err := io.ReadFull(conn, resp); err != nil {
		t.Fatalf("no connect response over TLS: %v", err)
	}
	if sid := binary.BigEndian.Uint64(resp[12:]); sid == 0 {
		t.Fatal("no session id in the connect response")
	}

	noCert := s.ClientTLSConfig()
	noCert.Certificates = nil
	bad, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", s.SecureAddr(), noCert)
	if err == nil {
		// TLS 1.3: the server's refusal arrives with the first read.
		_ = bad.SetDeadline(time.Now().Add(10 * time.Second))
		_, _ = bad.Write(req)
		_, err = io.ReadFull(bad, resp)
		bad.Close()
	}
	if err == nil {
		t.Fatal("a client without a certificate was served")
	}
}
