package zklock

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"time"
)

// WithTLS makes the client talk to ZooKeeper over TLS, on the servers'
// secureClientPort (ZooKeeper 3.5+ with the Netty connection factory).
// cfg says what to trust (RootCAs; the system's CAs when nil) and, when the
// server asks for one (ssl.clientAuth), which certificate to present. When
// cfg.ServerName is empty, each server's certificate is verified against
// the host of its address, as tls.Dial does.
//
// WithTLS wraps the dialer in effect when it is applied (the default
// net.DialTimeout, or one given earlier with WithDialer, e.g. a proxy), and
// completes the handshake within the dial timeout. A dialer given with
// WithDialer after WithTLS replaces it.
func WithTLS(cfg *tls.Config) Option {
	return func(c *clientConfig) {
		if cfg == nil {
			c.setErr(fmt.Errorf("%w: nil TLS config", ErrInvalidOption))
			return
		}
		base := c.dialer
		conf := cfg.Clone()
		c.dialer = func(network, addr string, timeout time.Duration) (net.Conn, error) {
			raw, err := base(network, addr, timeout)
			if err != nil {
				return nil, err
			}
			tc := conf
			if tc.ServerName == "" && !tc.InsecureSkipVerify {
				if host, _, err := net.SplitHostPort(addr); err == nil {
					tc = conf.Clone()
					tc.ServerName = host
				}
			}
			ctx := context.Background()
			if timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, timeout)
				defer cancel()
			}
			conn := tls.Client(raw, tc)
			if err := conn.HandshakeContext(ctx); err != nil {
				raw.Close()
				return nil, fmt.Errorf("zklock: TLS handshake with %s: %w", addr, err)
			}
			return conn, nil
		}
	}
}
