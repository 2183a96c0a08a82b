package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zklockkit/zklockkit/zklock"
	"github.com/zklockkit/zklockkit/zktest"
)

// tlsFront terminates TLS (requiring a client certificate signed by the
// test CA) in front of the plain ZooKeeper server, as ZooKeeper's
// secureClientPort would.
type tlsFront struct {
	ln       net.Listener
	verified atomic.Int32 // handshakes that verified a client certificate
	wg       sync.WaitGroup
}

func newTLSFront(t *testing.T, dir string) *tlsFront {
	t.Helper()
	caKey, ca := makeCert(t, nil, nil, "zklock test CA", true)
	srvKey, srv := makeCert(t, ca, caKey, "zookeeper", false)
	cliKey, cli := makeCert(t, ca, caKey, "operator", false)
	writePEM(t, filepath.Join(dir, "ca.pem"), "CERTIFICATE", ca.Raw)
	writePEM(t, filepath.Join(dir, "client.pem"), "CERTIFICATE", cli.Raw)
	der, err := x509.MarshalECPrivateKey(cliKey)
	if err != nil {
		t.Fatal(err)
	}
	writePEM(t, filepath.Join(dir, "client.key"), "EC PRIVATE KEY", der)
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	cfg := &tls.Config{
		Certificates: []tls.Certificate{{Certificate: [][]byte{srv.Raw}, PrivateKey: srvKey}},
		ClientCAs:    pool,
		ClientAuth:   tls.RequireAndVerifyClientCert,
		MinVersion:   tls.VersionTLS12,
	}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	f := &tlsFront{ln: ln}
	f.wg.Add(1)
	go f.serve()
	t.Cleanup(func() { ln.Close(); f.wg.Wait() })
	return f
}

func (f *tlsFront) serve() {
	defer f.wg.Done()
	var conns sync.WaitGroup
	defer conns.Wait()
	for {
		c, err := f.ln.Accept()
		if err != nil {
			return
		}
		conns.Add(1)
		go func() {
			defer conns.Done()
			defer c.Close()
			tc := c.(*tls.Conn)
			_ = tc.SetDeadline(time.Now().Add(10 * time.Second))
			if err := tc.Handshake(); err != nil {
				return
			}
			_ = tc.SetDeadline(time.Time{})
			if len(tc.ConnectionState().VerifiedChains) > 0 {
				f.verified.Add(1)
			}
			up, err := net.Dial("tcp", zkAddr)
			if err != nil {
				return
			}
			defer up.Close()
			done := make(chan struct{}, 2)
			go func() { _, _ = io.Copy(up, tc); done <- struct{}{} }()
			go func() { _, _ = io.Copy(tc, up); done <- struct{}{} }()
			<-done
		}()
	}
}

func makeCert(t *testing.T, parent *x509.Certificate, parentKey *ecdsa.PrivateKey, cn string, isCA bool) (*ecdsa.PrivateKey, *x509.Certificate) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial, _ := rand.Int(rand.Reader, big.NewInt(1<<62))
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: cn},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
	}
	if isCA {
		tmpl.IsCA, tmpl.BasicConstraintsValid = true, true
		tmpl.KeyUsage |= x509.KeyUsageCertSign
		tmpl.IPAddresses = nil
		parent, parentKey = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return key, cert
}

func writePEM(t *testing.T, path, typ string, der []byte) {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestTLS: the --tls-* flags connect through TLS with a client
// certificate; a wrong trust anchor or server name is refused.
func TestTLS(t *testing.T) {
	dir := t.TempDir()
	front := newTLSFront(t, dir)
	root := zktest.UniqueRoot(t)
	lease, err := client(t, root, zklock.WithLabel("plain")).Acquire(context.Background(), "tls/job")
	if err != nil {
		t.Fatal(err)
	}
	defer lease.Release(context.Background())
	ca, cert, key := filepath.Join(dir, "ca.pem"), filepath.Join(dir, "client.pem"), filepath.Join(dir, "client.key")
	base := []string{"--servers", front.ln.Addr().String(), "--root", root, "--connect-timeout", "3s"}

	r := zkl(t, nil, append([]string{"ls", "--tls-ca", ca, "--tls-cert", cert, "--tls-key", key}, base...)...)
	if r.code != 0 || !strings.Contains(r.stdout, "tls/job") || !strings.Contains(r.stdout, "plain") {
		t.Fatalf("ls over TLS: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	if front.verified.Load() == 0 {
		t.Fatal("no TLS handshake with a verified client certificate")
	}
	ran := filepath.Join(dir, "ran")
	r = zkl(t, nil, append(append([]string{"run", "--tls-ca", ca, "--tls-cert", cert, "--tls-key", key}, base...),
		"--resource", "tls/other", "--", "touch", ran)...)
	if _, err := os.Stat(ran); r.code != 0 || err != nil {
		t.Errorf("run over TLS: exit %d, stderr %q", r.code, r.stderr)
	}

	for _, tc := range []struct {
		name  string
		flags []string
	}{
		{"no client certificate", []string{"--tls-ca", ca}},
		{"server name mismatch", []string{"--tls-ca", ca, "--tls-cert", cert, "--tls-key", key, "--tls-server-name", "zk.example.com"}},
		{"unknown CA", []string{"--tls", "--tls-cert", cert, "--tls-key", key}},
	} {
		r := zkl(t, nil, append(append([]string{"show"}, tc.flags...), append(base, "tls/job")...)...)
		if r.code != 113 || !strings.Contains(r.stderr, "cannot reach ZooKeeper") {
			t.Errorf("%s: exit %d, stderr %q; want 113", tc.name, r.code, r.stderr)
		}
		oneLine(t, tc.name, r.stderr)
	}
}
