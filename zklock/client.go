package zklock

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path"
	"slices"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zklockkit/zklockkit/zklock/internal/dsn"
	"github.com/zklockkit/zklockkit/zklock/internal/queue"
	"github.com/zklockkit/zklockkit/zklock/internal/session"
	"github.com/zklockkit/zklockkit/zklock/internal/wire"
)

// Client is one ZooKeeper session shared by every lock of a process. It is
// safe for concurrent use; any number of goroutines may wait on any number
// of resources through it.
type Client struct {
	cfg   clientConfig
	sess  *session.Session // the session, its proof of life, its watchdog
	q     *queue.Queues    // our lock nodes on it, and the recipe
	b     *zkBackend       // the acquire shell's view of the client (backend.go)
	owner []byte           // default node data: JSON Owner
	// steps runs the acquires' steps (see step.go).
	steps stepRunners
	holds holdTimes // how long this client's leases were held, per queue
	// flightSrc, with WithFlightRecorder, keeps the wire history the
	// recorder reports (flight.go).
	flightSrc *flightSource
}

// Connect opens a session with the ZooKeeper ensemble at servers
// ("host:port", "[ipv6]:port", or a host alone for defaultPort; checked
// as Open checks the hosts of a connection string) and waits until it is
// established. If ctx has no deadline,
// Connect gives up after twice the session timeout. An unreachable ensemble
// returns an error matching ErrUnavailable and the context's error.
func Connect(ctx context.Context, servers []string, opts ...Option) (*Client, error) {
	cfg := defaultClientConfig()
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	if cfg.err != nil {
		return nil, cfg.err
	}
	cfg.acl = append(slices.Clone(cfg.acl), cfg.adminACL...)
	servers, err := dsn.CheckServers(servers)
	if err != nil {
		return nil, err
	}
	host, _ := os.Hostname()
	owner, _ := json.Marshal(Owner{Host: host, PID: os.Getpid(), Label: cfg.label})
	c := &Client{cfg: cfg, owner: owner}
	c.b = &zkBackend{c: c}
	auth := make([]session.Auth, len(cfg.auth))
	for i, a := range cfg.auth {
		auth[i] = session.Auth{Scheme: a.scheme, Auth: a.auth}
	}
	scfg := session.Config{Servers: servers, SessionTimeout: cfg.sessionTimeout, LossMargin: cfg.lossMargin,
		Dialer: cfg.dialer, Hosts: &dsn.Hosts{}, Auth: auth, Logger: cfg.logger}
	if len(cfg.observers) > 0 {
		scfg.OnConn = c.b.connState
		scfg.OnStatus = c.b.sessionStatus
	}
	if cfg.flight != nil {
		c.flightSrc = &flightSource{c: c, hist: wire.NewHistory()}
		scfg.History = c.flightSrc.hist
	}
	c.sess = session.New(scfg)
	c.steps.spawn = c.sess.Spawn
	c.q = queue.New(c.sess, queue.Config{ACL: cfg.acl, Logger: cfg.logger})
	if err := c.sess.Connect(ctx, c.q); err != nil {
		return nil, err
	}
	return c, nil
}

// EnvPassword is the environment variable a connection string's digest
// password is read from when the string names a user and gives no
// password (see Open).
const EnvPassword = dsn.EnvPassword

// Open connects using a connection string, the way sql.Open takes a DSN.
// It takes ZooKeeper's own connect string, the one Curator, kazoo, Kafka
// and zkCli take, and a zk:// URL:
//
//	127.0.0.1:2181
//	h1:2181,h2:2181,h3:2181/app
//	h1,h2,h3/app?session_timeout=10s
//	[::1]:2181
//	zk://h1:2181,h2:2181/app?session_timeout=10s&label=worker
//	zk://app@h1,h2/app?password_file=/run/secrets/zk
//
// The grammar:
//
//	dsn      = [ "zk://" [ userinfo "@" ] ] hosts [ path ] [ "?" params ] .
//	hosts    = host { "," host } .
//	host     = ( name | ipv4 | "[" ipv6 "]" ) [ ":" port ] .
//	path     = "/" | znode path .
//	params   = param { "&" param } .
//	param    = "session_timeout=" duration | "loss_margin=" duration
//	         | "label=" text | "password_file=" file path .
//	userinfo = user [ ":" password ] .
//
// A host without a port gets the default port, 2181; a port is a number from 1 to
// 65535; a host may appear once; blanks around a host are ignored. An
// IPv6 address is written in brackets: a bare ::1 is refused, since its
// last group could be read as a port. The path, when not just "/", is
// the root under which named resources' queues live (WithRoot), and it is
// ZooKeeper's chroot for RawPath resources: "/locks/job" on "zk1/app" is
// /app/locks/job, as in Curator or kazoo connected to "zk1/app". A
// "?" always starts the parameters, in both forms (a root holding "?" is
// written %3F in the zk:// form), and each parameter may appear once, with
// a value; durations are Go's (10s, 1500ms). In the zk:// form the path,
// the user and the password are percent-decoded (write "@" as %40); the
// native form is taken as written, as ZooKeeper does; hosts are never
// decoded. Anything else, such as an empty part between commas, an
// unknown scheme or parameter, or a root that is not a valid znode path,
// is an error matching ErrInvalidOption whose message names the part; the
// password is never part of a message.
//
// User info in the zk:// form authenticates with a digest (WithDigestAuth).
// The password comes from exactly one of: the file named by password_file
// (a regular file of at most 4 KiB, one trailing newline dropped: a
// mounted secret, the recommended way), the URL (zk://app:pa%24%24@h1,
// handy on a workstation, but the string then shows up wherever it is
// passed, logged or printed), or, when the string gives neither, the
// EnvPassword variable. A user without a password is an error. The native
// form takes no user info. See docs/connecting.md.
//
// Options given to Open apply after the ones from the string, so they
// override them.
func Open(ctx context.Context, dsn string, opts ...Option) (*Client, error) {
	servers, dsnOpts, err := ParseDSN(dsn)
	if err != nil {
		return nil, err
	}
	return Connect(ctx, servers, append(dsnOpts, opts...)...)
}

// ParseDSN splits a connection string (see Open) into servers, as
// "host:port" or "[ipv6]:port" with the default port filled in, and
// options. It reads the password file or EnvPassword when the string asks
// for them, and touches no network.
func ParseDSN(s string) (servers []string, opts []Option, err error) {
	d, err := dsn.Parse(s, dsn.Checks{Root: rootReason, Param: paramError})
	if err != nil {
		return nil, nil, err
	}
	if d.Root != "" {
		opts = append(opts, WithRoot(d.Root), withChroot(d.Root))
	}
	for _, name := range slices.Sorted(maps.Keys(d.Params)) {
		opts = append(opts, paramOption(name, d.Params[name]))
	}
	if d.User != "" {
		opts = append(opts, WithDigestAuth(d.User, d.Password))
	}
	return d.Servers, opts, nil
}

// rootReason says why a connection string's root cannot be used, or "".
func rootReason(path string) string {
	err := validateZnodePath(path)
	if err == nil {
		return ""
	}
	if re := (*ResourceError)(nil); errors.As(err, &re) {
		return re.Reason
	}
	return err.Error()
}

// paramOption is the client option a connection string's parameter sets.
func paramOption(name string, value any) Option {
	switch name {
	case "session_timeout":
		return WithSessionTimeout(value.(time.Duration))
	case "loss_margin":
		return WithLossMargin(value.(time.Duration))
	case "label":
		return WithLabel(value.(string))
	}
	return func(c *clientConfig) { c.setErr(fmt.Errorf("%w: unknown parameter %q", ErrInvalidOption, name)) }
}

// paramError checks a connection string's parameter as its option does.
func paramError(name string, value any) error {
	cfg := defaultClientConfig()
	paramOption(name, value)(&cfg)
	return cfg.err
}

// Close ends the session. Held leases are reported lost (LossClientClosed)
// before the session is closed; ZooKeeper then deletes their nodes. Waiting
// acquires return ErrClosed. Close is idempotent.
func (c *Client) Close() error {
	c.sess.Close()
	return nil
}

// SessionID returns the current ZooKeeper session id (0 before the first
// session).
func (c *Client) SessionID() int64 { return c.sess.ID() }

// SessionState is what a Client knows of its ZooKeeper session now (see
// Client.State).
type SessionState int

// Session states.
const (
	// SessionVerified: connected, and ZooKeeper's leader is proven to
	// have heard from the session recently enough that a lease held now
	// is kept: the session's proof of life reaches past now.
	SessionVerified SessionState = iota + 1
	// SessionSuspended: not verified. The client is disconnected, or
	// connected to a server that has not been heard to reach its leader
	// (a server cut off from the leader still answers pings). Held
	// leases are kept until the proof runs out; then they are lost
	// (LossSessionUnverified).
	SessionSuspended
	// SessionExpired: ZooKeeper expired the session: every lease on it
	// was lost. The client is establishing a new session.
	SessionExpired
	// SessionClosed: the Client was closed.
	SessionClosed
)

// String returns the state's name, as events and logs print it:
// "verified", "suspended", "expired" or "closed".
func (s SessionState) String() string { return session.Status(s).String() }

// State returns the state of the client's session now, and a channel
// that is closed when it next changes, so that a caller can wait for a
// change without missing one:
//
//	for st, changed := c.State(); st != zklock.SessionClosed; st, changed = c.State() {
//		log.Print("session ", st)
//		<-changed
//	}
//
// Observers also receive each change, as EventState (not the verified
// state Connect establishes). Asking for the
// state keeps the session proven for a session timeout, whether or not
// the client holds locks (a sync through the leader every tenth of the
// timeout), so that a health check polling State reports
// SessionVerified only while the leader hears from the session.
func (c *Client) State() (SessionState, <-chan struct{}) {
	st, changed := c.sess.State()
	return SessionState(st), changed
}

// Root returns the znode under which resource queues live.
func (c *Client) Root() string { return c.cfg.root }

// Conn returns the underlying go-zookeeper connection, for operations this
// package does not offer. Creating or deleting lock nodes through it
// bypasses every guarantee of this package.
func (c *Client) Conn() *zk.Conn { return c.sess.Conn() }

// LocalLock describes a lock node of this Client: waiting or held.
type LocalLock struct {
	Resource  string
	Mode      Mode
	Path      string
	Held      bool
	Position  int       // nodes ahead (0 when held)
	Since     time.Time // when the node was created (the wait began)
	Acquired  time.Time // when the lock was acquired; zero while waiting
	Token     int64     // fencing token, when held
	SessionID int64
	// HoldMedian is the median of how long this Client held the lock's
	// queue over its last HoldSamples leases of it (what its nodes report
	// as Owner.HoldMedian); 0 when it has released none.
	HoldMedian time.Duration
}

// Locks returns this Client's lock nodes, waiting and held, ordered by
// resource and path. It makes no ZooKeeper call.
func (c *Client) Locks() []LocalLock {
	nodes := c.q.Nodes()
	ls := make([]LocalLock, len(nodes))
	for i, n := range nodes {
		l := LocalLock{Resource: n.Resource, Mode: Mode(n.Kind), Path: n.Path, Position: n.Position, Since: n.Since,
			SessionID: n.SessionID, HoldMedian: c.holds.median(path.Dir(n.Path))}
		if st, ok := n.Holder.(*leaseState); ok {
			l.Held, l.Position = true, 0
			st.mu.Lock()
			l.Acquired = st.acquired
			for _, h := range st.holds {
				if h.path == n.Path {
					l.Token = h.token
				}
			}
			st.mu.Unlock()
		}
		ls[i] = l
	}
	return ls
}

// Deleting returns the paths of the lock nodes of this Client's current
// session that it is deleting and ZooKeeper has not yet confirmed gone:
// released leases, leases given up or lost while the session lives, nodes
// of failed acquires (from the moment the acquire returns, also when it
// gave up waiting for a request ZooKeeper has not answered yet). Locks
// leaves them out. A node stays here while
// ZooKeeper is out of reach, for as long as the session lives. It makes no
// ZooKeeper call.
func (c *Client) Deleting() []string { return c.q.Deleting() }

// Acquire blocks until the lock on resource is held, ctx ends, or the wait
// limit (MaxWait) passes, and returns the lease. If ctx carries a lease of
// this client on the same resource (see Lease.Context), the acquire
// re-enters it instead of waiting.
//
// Errors: *ResourceError (ErrInvalidResource) for a bad name; ErrLocked with
// Try; ErrWaitTimeout; the context's error (also matching ErrUnavailable if
// ZooKeeper was unreachable at the time); ErrClosed; ErrUpgrade.
func (c *Client) Acquire(ctx context.Context, resource string, opts ...AcquireOption) (*Lease, error) {
	// Not through acquireOpts: every frame on this goroutine's stack
	// counts while it waits (see parked.park).
	return newAcquisition(ctx, c.b, []string{resource}, opts).acquire()
}

// TryAcquire is Acquire with Try: it never waits for another holder and
// returns ErrLocked when the resource is busy, leaving no node behind.
func (c *Client) TryAcquire(ctx context.Context, resource string, opts ...AcquireOption) (*Lease, error) {
	return c.Acquire(ctx, resource, append(opts, Try())...)
}

// AcquireAll acquires every resource, all or nothing, in one canonical order
// (sorted by znode path) so that two callers asking for {A,B} and {B,A}
// cannot deadlock. On failure or cancellation everything already taken is
// released. The lease is lost as soon as any part of it is lost.
func (c *Client) AcquireAll(ctx context.Context, resources []string, opts ...AcquireOption) (*Lease, error) {
	return newAcquisition(ctx, c.b, resources, opts).acquire()
}

// QueuePath returns the znode that holds resource's lock queue.
func (c *Client) QueuePath(resource string, opts ...QueueOption) (string, error) {
	return c.queuePath(resource, newQueueConfig(opts).raw)
}

func (c *Client) queuePath(resource string, raw bool) (string, error) {
	if raw {
		if err := validateZnodePath(resource); err != nil {
			return "", err
		}
		if c.cfg.chroot != "" && resource != "/" {
			return c.cfg.chroot + resource, nil
		}
		return resource, nil
	}
	if err := ValidateResource(resource); err != nil {
		return "", err
	}
	return c.cfg.root + "/" + EscapeResource(resource), nil
}
