package main

import (
	"crypto/tls"
	"crypto/x509"
	"flag"
	"net"
	"os"
	"time"

	"github.com/go-zookeeper/zk"
)

// tlsFlags configure TLS to ZooKeeper (its secureClientPort).
type tlsFlags struct {
	on         bool
	ca         string
	cert       string
	key        string
	serverName string
}

func (t *tlsFlags) register(fs *flag.FlagSet) {
	fs.BoolVar(&t.on, "tls", false, "connect with TLS, trusting the system's CAs (implied by the other -tls flags)")
	fs.StringVar(&t.ca, "tls-ca", "", "PEM `file` of the CA certificates that signed ZooKeeper's certificate")
	fs.StringVar(&t.cert, "tls-cert", "", "PEM `file` of the client certificate (with --tls-key)")
	fs.StringVar(&t.key, "tls-key", "", "PEM `file` of the client certificate's private key (with --tls-cert)")
	fs.StringVar(&t.serverName, "tls-server-name", "", "`name` to verify ZooKeeper's certificate against (default: the host of each server)")
}

// config returns the TLS configuration, or nil when TLS is not asked for.
func (t *tlsFlags) config(cmd string) (*tls.Config, error) {
	if !t.on && t.ca == "" && t.cert == "" && t.key == "" && t.serverName == "" {
		return nil, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: t.serverName}
	if t.ca != "" {
		pem, err := os.ReadFile(t.ca)
		if err != nil {
			return nil, usageErrorf(cmd, "bad --tls-ca: %v", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, usageErrorf(cmd, "bad --tls-ca %s: no PEM certificate in it", t.ca)
		}
		cfg.RootCAs = pool
	}
	switch {
	case t.cert != "" && t.key != "":
		pair, err := tls.LoadX509KeyPair(t.cert, t.key)
		if err != nil {
			return nil, usageErrorf(cmd, "bad --tls-cert/--tls-key: %v", err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	case t.cert != "":
		return nil, usageErrorf(cmd, "--tls-cert needs --tls-key")
	case t.key != "":
		return nil, usageErrorf(cmd, "--tls-key needs --tls-cert")
	}
	return cfg, nil
}

// tlsDialer dials ZooKeeper servers with TLS.
func tlsDialer(cfg *tls.Config) zk.Dialer {
	return func(network, addr string, timeout time.Duration) (net.Conn, error) {
		return tls.DialWithDialer(&net.Dialer{Timeout: timeout}, network, addr, cfg)
	}
}
