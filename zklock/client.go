package zklock

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"
)

// Client is one ZooKeeper session shared by every lock of a process. It is
// safe for concurrent use; any number of goroutines may wait on any number
// of resources through it.
type Client struct {
	cfg  clientConfig
	conn *zk.Conn
	live sessionWire // what the wire tells of the session (see tracker)
	wire createWire  // what the wire tells of our creates
	log  *slog.Logger
	// quorum: proof that the leader, not only our server, heard from
	// the session (quorum.go)
	quorum quorum
	owner  []byte // default node data: JSON Owner

	bg        context.Context // cancelled by Close; background cleanup uses it
	bgCancel  context.CancelFunc
	wg        sync.WaitGroup
	wake      chan struct{} // nudges the loss watchdog
	proveNow  chan struct{} // nudges the prover (quorum.go)
	watchIdle atomic.Bool   // the watchdog sleeps until nudged
	creating  atomic.Int32  // creates in flight (see createAndList)
	// stepRunners runs the acquires' steps (see step.go).
	stepRunners stepRunners
	noCount     atomic.Bool // a queue's data may not be written (see createCounted)

	mu        sync.Mutex
	sessionID int64
	ready     bool          // connected with a live session
	readyCh   chan struct{} // closed when ready becomes true
	downCh    chan struct{} // closed when ready becomes false
	suspended bool
	closed    bool
	closeCh   chan struct{}
	nodes     registry // our live lock nodes, by path
	// creates[id] is closed once the create of the node with protected
	// id has ended, registered in nodes or not (see ownNode).
	creates map[string]chan struct{}
	// covers[queue] are the covers armed by listings of queue (cover.go).
	covers map[string]*cover
	// deleting: lock nodes deleteNode is deleting (path → its session),
	// with the number of deletes of it under way (Deleting)
	deleting map[string]deletingNode
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
	tr := newTracker()
	c := &Client{
		cfg:      cfg,
		live:     tr.live,
		wire:     tr,
		log:      cfg.logger,
		owner:    owner,
		wake:     make(chan struct{}, 1),
		proveNow: make(chan struct{}, 1),
		readyCh:  make(chan struct{}),
		downCh:   make(chan struct{}),
		closeCh:  make(chan struct{}),
		nodes:    make(registry),
		creates:  make(map[string]chan struct{}),
	}
	c.bg, c.bgCancel = context.WithCancel(context.Background())
	var lastDialErr atomic.Pointer[error] // errors of several types: an atomic.Value would panic
	dial := func(network, addr string, timeout time.Duration) (net.Conn, error) {
		nc, err := cfg.dialer(network, addr, timeout)
		if err != nil {
			lastDialErr.Store(&err)
			return nil, err
		}
		return tr.dial(nc), nil
	}
	conn, _, err := zk.Connect(servers, cfg.sessionTimeout,
		zk.WithDialer(dial), zk.WithHostProvider(&hostList{}), zk.WithEventCallback(c.onEvent),
		zk.WithLogger(zkLogger{cfg.logger}), zk.WithLogInfo(false))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidOption, err)
	}
	c.conn = conn
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, 2*cfg.sessionTimeout)
		defer cancel()
	}
	if _, err := c.waitReady(ctx); err != nil {
		c.abort()
		if e := lastDialErr.Load(); e != nil {
			return nil, errorf("connect %v: %w (last dial error: %v)", servers, err, *e)
		}
		return nil, errorf("connect %v: %w", servers, err)
	}
	for _, a := range cfg.auth {
		if _, err := call(ctx, func() (struct{}, error) { return struct{}{}, conn.AddAuth(a.scheme, a.auth) }); err != nil {
			c.abort()
			if errors.Is(err, zk.ErrAuthFailed) || errors.Is(err, zk.ErrNoAuth) {
				return nil, fmt.Errorf("%w: %s authentication failed: %v", ErrNoAuth, a.scheme, err)
			}
			return nil, errorf("connect %v: adding %s auth: %w", servers, a.scheme, mapErr(err))
		}
	}
	c.wg.Add(2)
	go c.watchdog()
	go c.prover()
	return c, nil
}

// abort ends a Client whose Connect failed. go-zookeeper's Close waits up
// to a second after a failed handshake with a silent server: it runs in the
// background, so that Connect returns at its context's end.
func (c *Client) abort() {
	c.mu.Lock()
	c.closed = true
	close(c.closeCh)
	c.dropCoversLocked()
	c.mu.Unlock()
	c.bgCancel()
	go c.conn.Close()
}

// Close ends the session. Held leases are reported lost (LossClientClosed)
// before the session is closed; ZooKeeper then deletes their nodes. Waiting
// acquires return ErrClosed. Close is idempotent.
func (c *Client) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	close(c.closeCh)
	c.dropCoversLocked()
	var lost, releasing []*leaseState
	for _, e := range c.nodes.dropWhere(func(*nodeEntry) bool { return true }) {
		switch {
		case e.st != nil && !e.releasing:
			lost = append(lost, e.st)
		case e.st != nil:
			releasing = append(releasing, e.st)
		}
	}
	c.mu.Unlock()
	for _, st := range lost {
		st.lose(LossClientClosed)
	}
	for _, st := range releasing {
		// closing the session deletes the node: the release is complete
		st.finishRelease(context.Background())
	}
	c.bgCancel()
	c.conn.Close()
	c.wg.Wait()
	return nil
}

// SessionID returns the current ZooKeeper session id (0 before the first
// session).
func (c *Client) SessionID() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sessionID
}

// Root returns the znode under which resource queues live.
func (c *Client) Root() string { return c.cfg.root }

// Conn returns the underlying go-zookeeper connection, for operations this
// package does not offer. Creating or deleting lock nodes through it
// bypasses every guarantee of this package.
func (c *Client) Conn() *zk.Conn { return c.conn }

// waitReady waits until the client is connected with a live session and
// returns the session id.
func (c *Client) waitReady(ctx context.Context) (int64, error) {
	for {
		if err := ctx.Err(); err != nil {
			return 0, ctxErr(ctx)
		}
		c.mu.Lock()
		closed, ready, sid, ch := c.closed, c.ready, c.sessionID, c.readyCh
		c.mu.Unlock()
		switch {
		case closed:
			return 0, ErrClosed
		case ready:
			return sid, nil
		}
		select {
		case <-ch:
		case <-c.closeCh:
		case <-ctx.Done():
			if err := ctxErr(ctx); errors.Is(err, ErrUnavailable) {
				return 0, err // a try's bound: says so already
			}
			return 0, fmt.Errorf("%w: %w", ErrUnavailable, ctxErr(ctx))
		}
	}
}

// isClosed reports whether Close (or a failed Connect) ended the client.
func (c *Client) isClosed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closed
}

// session returns the current session id and whether it is usable.
func (c *Client) session() (int64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sessionID, c.ready && !c.closed
}

// onEvent is go-zookeeper's event callback. It runs on go-zookeeper's
// goroutines (sometimes under its locks): it must not block or call back
// into the connection.
func (c *Client) onEvent(ev zk.Event) {
	switch ev.Type {
	case zk.EventSession:
		c.onSessionEvent(ev.State)
	case zk.EventNodeDeleted:
		c.mu.Lock()
		e := c.nodes[ev.Path]
		var st *leaseState
		if c.nodes.drop(e) && e.st != nil && !e.releasing {
			st = e.st
		}
		c.mu.Unlock()
		if st != nil {
			st.lose(LossNodeDeleted)
		}
	case zk.EventNodeChildrenChanged:
		c.mu.Lock()
		c.coverEventLocked(ev.Path)
		c.mu.Unlock()
	case zk.EventNodeDataChanged:
		// Someone wrote our node: the data watch is spent, set it again.
		c.mu.Lock()
		e := c.nodes[ev.Path]
		c.mu.Unlock()
		if e != nil {
			c.goBackground(func(ctx context.Context) { c.rearm(ctx, e) })
		}
	}
}

func (c *Client) onSessionEvent(state zk.State) {
	var lost []*leaseState
	var notify EventKind
	c.mu.Lock()
	switch state {
	case zk.StateHasSession:
		sid := c.live.sessionID()
		if c.sessionID != 0 && sid != c.sessionID {
			lost = c.dropSessionLocked(c.sessionID)
		}
		if c.suspended && sid == c.sessionID {
			notify = EventResumed
		}
		c.sessionID = sid
		c.suspended = false
		if !c.ready {
			c.ready = true
			close(c.readyCh)
			c.downCh = make(chan struct{})
		}
	case zk.StateDisconnected, zk.StateConnecting:
		if c.ready {
			c.ready = false
			c.suspended = true
			c.readyCh = make(chan struct{})
			close(c.downCh)
			notify = EventSuspended
		}
	case zk.StateExpired:
		if c.ready {
			c.ready = false
			c.readyCh = make(chan struct{})
			close(c.downCh)
		}
		lost = c.dropSessionLocked(c.sessionID)
		c.log.Warn("zklock: session expired", "session", fmt.Sprintf("%#x", c.sessionID))
	case zk.StateAuthFailed:
		c.log.Error("zklock: authentication failed")
	}
	sid := c.sessionID
	c.mu.Unlock()
	for _, st := range lost {
		st.lose(LossSessionExpired)
	}
	if notify != 0 && len(c.cfg.observers) > 0 {
		go c.observe(context.Background(), Event{Kind: notify, SessionID: sid})
	}
	if notify == EventSuspended {
		c.log.Warn("zklock: connection to ZooKeeper lost; leases suspended", "session", fmt.Sprintf("%#x", sid))
	}
	c.kick()
}

// epoch returns the current connection epoch: a channel closed when the
// client next loses its connection (or now, if it has none).
func (c *Client) epoch() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.downCh
}

// dropSessionLocked forgets every node of session sid (gone with it) and
// returns the leases to report lost.
func (c *Client) dropSessionLocked(sid int64) []*leaseState {
	c.dropCoversLocked()
	var lost []*leaseState
	for _, e := range c.nodes.dropWhere(func(e *nodeEntry) bool { return e.sessionID == sid }) {
		if e.st != nil && !e.releasing {
			lost = append(lost, e.st)
		}
	}
	return lost
}

// goBackground runs f on a goroutine that Close waits for; f's context is
// cancelled by Close.
func (c *Client) goBackground(f func(ctx context.Context)) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.wg.Add(1)
	c.mu.Unlock()
	go func() {
		defer c.wg.Done()
		f(c.bg)
	}()
}

type zkLogger struct{ l *slog.Logger }

func (z zkLogger) Printf(format string, args ...any) {
	z.l.Debug("zookeeper: " + fmt.Sprintf(format, args...))
}
