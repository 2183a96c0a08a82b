package zklock

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zklockkit/zklockkit/zklock/internal/errs"
)

// Defaults for Client options.
const (
	DefaultRoot           = "/zklock"
	DefaultSessionTimeout = 10 * time.Second
	DefaultNodeWatchDelay = 10 * time.Millisecond
)

// Option configures a Client. Options are applied in order over the
// documented defaults.
type Option func(*clientConfig)

type clientConfig struct {
	root           string
	chroot         string // prefixes RawPath resources (a connection string's path)
	sessionTimeout time.Duration
	lossMargin     time.Duration // 0: sessionTimeout/4
	acl            []zk.ACL
	adminACL       []zk.ACL // WithAdminDigest: appended to acl by Connect, whatever the order of options
	auth           []authInfo
	logger         *slog.Logger
	label          string
	observers      []Observer
	dialer         zk.Dialer
	nodeWatchDelay time.Duration
	flight         *FlightRecorder // WithFlightRecorder
	err            error
}

type authInfo struct {
	scheme string
	auth   []byte
}

func defaultClientConfig() clientConfig {
	return clientConfig{
		root:           DefaultRoot,
		sessionTimeout: DefaultSessionTimeout,
		acl:            zk.WorldACL(zk.PermAll),
		logger:         slog.New(slog.DiscardHandler),
		dialer:         net.DialTimeout,
		nodeWatchDelay: DefaultNodeWatchDelay,
	}
}

// WithRoot sets the znode under which resource queues live (default
// "/zklock"). It is created as a persistent node when missing.
func WithRoot(path string) Option {
	return func(c *clientConfig) {
		if err := validateZnodePath(path); err != nil {
			c.setErr(errs.Errorf("%w: root: %w", ErrInvalidOption, err))
			return
		}
		c.root = path
	}
}

// withChroot makes RawPath resources relative to path, as ZooKeeper's
// chroot does for Curator and kazoo: set by a connection string's path.
func withChroot(path string) Option {
	return func(c *clientConfig) {
		if path == "/" {
			path = ""
		}
		c.chroot = path
	}
}

// WithSessionTimeout sets the session timeout asked of ZooKeeper (default
// 10s). The server clamps it to its own bounds (2 to 20 ticks by default);
// the negotiated value is the one used for loss detection.
func WithSessionTimeout(d time.Duration) Option {
	return func(c *clientConfig) {
		if d < 100*time.Millisecond {
			c.setErr(fmt.Errorf("%w: session timeout %v is below 100ms", ErrInvalidOption, d))
			return
		}
		c.sessionTimeout = d
	}
}

// WithLossMargin sets how long before the earliest moment ZooKeeper could
// expire the session the client declares its leases lost (default: a quarter
// of the negotiated session timeout). A larger margin gives holders more time
// to stop before anyone else can be granted the lock, at the price of giving
// leases up sooner during a network blip. The earliest moment is proven by
// the leader (a sync, or a write it committed, at least every tenth of the
// timeout while the client has lock nodes; see docs/protocol.md): with
// the default margin, leases outlive 40% of the timeout without an answer.
func WithLossMargin(d time.Duration) Option {
	return func(c *clientConfig) {
		if d <= 0 {
			c.setErr(fmt.Errorf("%w: loss margin must be positive", ErrInvalidOption))
			return
		}
		c.lossMargin = d
	}
}

// WithNodeWatchDelay sets how long a lease whose node carries no watch yet
// is held before the client sets one, to learn if someone else deletes the
// node (default 10ms). The watch costs a read and a notification per lease,
// about a sixth of an uncontended acquire+release on an fsync-bound server;
// a critical section shorter than the delay ends before it would matter. 0
// sets the watch at once. A waiter that may take a hand-off without a
// round trip (next in line, or queued behind a node of its own client)
// watches its node while it waits (that hand-off relies on it) and keeps
// the watch; parts of a multi-resource acquire watch theirs at
// once; session expiry and loss of contact are detected regardless.
func WithNodeWatchDelay(d time.Duration) Option {
	return func(c *clientConfig) {
		if d < 0 {
			c.setErr(fmt.Errorf("%w: negative node watch delay", ErrInvalidOption))
			return
		}
		c.nodeWatchDelay = d
	}
}

// WithACL sets the ACL of every node the client creates (default: world
// all, ZooKeeper's OPEN_ACL_UNSAFE).
func WithACL(acl []zk.ACL) Option {
	return func(c *clientConfig) {
		if len(acl) == 0 {
			c.setErr(fmt.Errorf("%w: empty ACL", ErrInvalidOption))
			return
		}
		c.acl = acl
	}
}

// WithAuth adds authentication info sent on every (re)connect, e.g.
// WithAuth("digest", []byte("user:password")).
func WithAuth(scheme string, auth []byte) Option {
	return func(c *clientConfig) { c.auth = append(c.auth, authInfo{scheme, auth}) }
}

// WithDigestAuth authenticates as user:password and, unless WithACL is also
// given later, makes every created node (root, queues, lock nodes) writable
// and deletable only by that identity: others may read it (Inspect works)
// but not queue on it; their acquire fails with ErrNoAuth. ZooKeeper accepts
// any password at connect time, so a wrong one shows up as ErrNoAuth there.
func WithDigestAuth(user, password string) Option {
	return func(c *clientConfig) {
		c.auth = append(c.auth, authInfo{"digest", []byte(user + ":" + password)})
		acl := zk.DigestACL(zk.PermAll, user, password)
		acl = append(acl, zk.WorldACL(zk.PermRead)...)
		c.acl = acl
	}
}

// WithLogger sets the logger for connection state changes and anomalies
// (default: discard).
func WithLogger(l *slog.Logger) Option {
	return func(c *clientConfig) {
		if l != nil {
			c.logger = l
		}
	}
}

// WithLabel sets a label stored in every lock node's owner data, shown by
// Inspect and the zklock CLI (e.g. a job or pod name).
func WithLabel(label string) Option {
	return func(c *clientConfig) { c.label = label }
}

// WithObserver adds an Observer of lock events. It may be given more than
// once; observers are called in order.
func WithObserver(o Observer) Option {
	return func(c *clientConfig) {
		if o != nil {
			c.observers = append(c.observers, o)
		}
	}
}

// WithDialer sets how TCP connections to ZooKeeper are made (TLS, a proxy).
// The default is net.DialTimeout.
func WithDialer(d zk.Dialer) Option {
	return func(c *clientConfig) {
		if d != nil {
			c.dialer = d
		}
	}
}

func (c *clientConfig) setErr(err error) {
	if c.err == nil {
		c.err = err
	}
}

// WithAdminDigest adds an administrator to the ACL of every node the client
// creates: the digest identity user:password gets every permission, so an
// operator authenticated as it (e.g. with the zklock CLI) can delete a lock
// node or a queue of another tenant to break a stuck lock. The client does
// not authenticate as the administrator itself.
//
// It adds to whatever ACL WithDigestAuth, WithACL or the default sets, in
// any order of options:
//
//	zklock.Connect(ctx, servers,
//		zklock.WithDigestAuth("billing", billingPassword),
//		zklock.WithAdminDigest("ops", opsPassword))
//
// With the default ACL (world: all) it changes nothing anybody can do.
func WithAdminDigest(user, password string) Option {
	return func(c *clientConfig) {
		if user == "" {
			c.setErr(fmt.Errorf("%w: empty admin user", ErrInvalidOption))
			return
		}
		c.adminACL = append(c.adminACL, zk.DigestACL(zk.PermAll, user, password)...)
	}
}

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
