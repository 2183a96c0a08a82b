package zklock

import (
	"context"
	"encoding/json"
	"os"
	"path"
	"slices"
	"time"

	"github.com/go-zookeeper/zk"

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
	servers, err := checkServers(servers)
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
		Dialer: cfg.dialer, Auth: auth, Logger: cfg.logger}
	if len(cfg.observers) > 0 {
		scfg.OnConn = c.b.connState
		scfg.OnStatus = c.b.sessionStatus
	}
	if cfg.flight != nil {
		c.flightSrc = &flightSource{c: c, hist: wire.NewHistory()}
		scfg.History = c.flightSrc.hist
	}
	c.sess = session.New(scfg)
	c.q = queue.New(c.sess, queue.Config{ACL: cfg.acl, Logger: cfg.logger})
	if err := c.sess.Connect(ctx, c.q); err != nil {
		return nil, err
	}
	return c, nil
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
// Observers also receive each change, as EventState. Asking for the
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
// of failed acquires. Locks leaves them out. A node stays here while
// ZooKeeper is out of reach, for as long as the session lives. It makes no
// ZooKeeper call.
func (c *Client) Deleting() []string { return c.q.Deleting() }
