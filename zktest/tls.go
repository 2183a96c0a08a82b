package zktest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// TLSServer is a standalone server that also serves clients over TLS on a
// secure client port (ZooKeeper's Netty connection factory), with mutual
// authentication: it presents a certificate signed by a throw-away test CA
// and requires clients to present one signed by the same CA. The plain
// client port stays open for four-letter words and health checks; clients
// given only SecureAddr never use it.
type TLSServer struct {
	*Server
	securePort int
	caPEM      []byte
	client     tls.Certificate
}

// StartTLSServer starts a standalone server with a secure client port, as
// StartServer does. Its keys and certificates (ECDSA P-256, valid for a
// day, for 127.0.0.1 and localhost) are made afresh and kept as PEM files
// in the server's directory, which ZooKeeper 3.8 reads as PEM key and trust
// stores.
func StartTLSServer(opts ...Option) (*TLSServer, error) {
	if err := Installed(); err != nil {
		return nil, err
	}
	cfg := newConfig(opts)
	dir, own, err := makeDir(cfg.dir, "zktest-tls-server-")
	if err != nil {
		return nil, err
	}
	ts, err := newTLSServer(cfg, dir, own)
	if err != nil {
		if own {
			os.RemoveAll(dir)
		}
		return nil, err
	}
	if err := ts.Start(); err != nil {
		return nil, errors.Join(err, ts.Close())
	}
	return ts, nil
}

func newTLSServer(cfg config, dir string, own bool) (*TLSServer, error) {
	ports, err := freePorts(2)
	if err != nil {
		return nil, err
	}
	pki, err := newTestPKI()
	if err != nil {
		return nil, err
	}
	tlsDir := filepath.Join(dir, "tls")
	if err := os.MkdirAll(tlsDir, 0o700); err != nil {
		return nil, err
	}
	keyStore := filepath.Join(tlsDir, "server-keystore.pem")
	trustStore := filepath.Join(tlsDir, "ca.pem")
	if err := os.WriteFile(keyStore, pki.serverStore, 0o600); err != nil {
		return nil, err
	}
	if err := os.WriteFile(trustStore, pki.caPEM, 0o644); err != nil {
		return nil, err
	}
	var b strings.Builder
	b.WriteString("serverCnxnFactory=org.apache.zookeeper.server.NettyServerCnxnFactory\n")
	fmt.Fprintf(&b, "secureClientPort=%d\n", ports[1])
	b.WriteString("secureClientPortAddress=127.0.0.1\n")
	fmt.Fprintf(&b, "ssl.keyStore.location=%s\n", keyStore)
	b.WriteString("ssl.keyStore.type=PEM\n")
	fmt.Fprintf(&b, "ssl.trustStore.location=%s\n", trustStore)
	b.WriteString("ssl.trustStore.type=PEM\n")
	b.WriteString("ssl.clientAuth=need\n")
	b.WriteString("authProvider.x509=org.apache.zookeeper.server.auth.X509AuthenticationProvider\n")
	s, err := newServer(cfg, dir, own, ports[0], b.String())
	if err != nil {
		return nil, err
	}
	return &TLSServer{Server: s, securePort: ports[1], caPEM: pki.caPEM, client: pki.client}, nil
}

// SecureAddr returns the TLS client address, "127.0.0.1:PORT".
func (s *TLSServer) SecureAddr() string { return "127.0.0.1:" + strconv.Itoa(s.securePort) }

// CACertPEM returns the PEM certificate of the CA that signed the server's
// and the client's certificates.
func (s *TLSServer) CACertPEM() []byte { return append([]byte(nil), s.caPEM...) }

// ClientCertificate returns a client certificate the server accepts.
func (s *TLSServer) ClientCertificate() tls.Certificate { return s.client }

// ClientTLSConfig returns a TLS configuration that trusts only the test CA
// and presents the client certificate.
func (s *TLSServer) ClientTLSConfig() *tls.Config {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(s.caPEM)
	return &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{s.client}, MinVersion: tls.VersionTLS12}
}

type testPKI struct {
	caPEM       []byte
	serverStore []byte // server key (PKCS#8) and certificate chain, PEM
	client      tls.Certificate
}

func newTestPKI() (*testPKI, error) {
	now := time.Now()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "zktest CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, err
	}
	leaf := func(serial int64, cn string, usage x509.ExtKeyUsage, server bool) ([]byte, *ecdsa.PrivateKey, error) {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return nil, nil, err
		}
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: cn},
			NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage},
		}
		if server {
			tmpl.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1)}
			tmpl.DNSNames = []string{"localhost"}
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
		return der, key, err
	}
	srvDER, srvKey, err := leaf(2, "zktest server", x509.ExtKeyUsageServerAuth, true)
	if err != nil {
		return nil, err
	}
	cliDER, cliKey, err := leaf(3, "zktest client", x509.ExtKeyUsageClientAuth, false)
	if err != nil {
		return nil, err
	}
	srvKeyDER, err := x509.MarshalPKCS8PrivateKey(srvKey)
	if err != nil {
		return nil, err
	}
	certPEM := func(der []byte) []byte { return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}) }
	p := &testPKI{caPEM: certPEM(caDER)}
	p.serverStore = append(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: srvKeyDER}), certPEM(srvDER)...)
	p.serverStore = append(p.serverStore, p.caPEM...)
	p.client = tls.Certificate{Certificate: [][]byte{cliDER, caDER}, PrivateKey: cliKey}
	return p, nil
}
