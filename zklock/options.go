package zklock

import (
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/go-zookeeper/zk"
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
			c.setErr(errorf("%w: root: %w", ErrInvalidOption, err))
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
// the leader (a sync every tenth of the timeout; see docs/protocol.md): with
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

// lossMarginFor returns the loss margin for a negotiated session timeout:
// WithLossMargin's, or a quarter of the timeout when none was given or the
// one given is not below the timeout.
func (c *clientConfig) lossMarginFor(timeout time.Duration) time.Duration {
	if c.lossMargin == 0 || c.lossMargin >= timeout {
		return timeout / 4
	}
	return c.lossMargin
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

// AcquireOption configures one acquire: Try, MaxWait, a Mode (Read,
// Write, Exclusive), Limit, RawPath, LeaseLabel. Client options start with
// With; acquire options read as the request they make:
//
//	c.Acquire(ctx, "reports", zklock.Read, zklock.MaxWait(5*time.Second))
//
// Options that ask for different things are refused with ErrInvalidOption,
// whatever their order: two different modes, Read or Write with Limit
// (a semaphore has no read or write side), two different limits, Try with
// MaxWait. Exclusive with Limit is the semaphore. A MaxWait or LeaseLabel
// given again replaces the earlier one (front ends put a rule's own
// options after the user's).
type AcquireOption interface{ applyAcquire(*acquireConfig) }

// QueueOption configures a look at a resource's queue (QueuePath, Inspect,
// Leader, Observe, RequestRelease): RawPath, and Limit for Inspect to
// tell a semaphore's holders from its waiters.
type QueueOption interface{ applyQueue(*queueConfig) }

// PathOption is an option that applies to acquires, looks at a queue and
// Lead alike: RawPath.
type PathOption interface {
	AcquireOption
	QueueOption
	LeadOption
}

// LimitOption is an option that applies to acquires and looks at a queue:
// Limit.
type LimitOption interface {
	AcquireOption
	QueueOption
}

type acquireConfig struct {
	mode    Mode
	limit   int
	try     bool
	maxWait time.Duration
	raw     bool
	label   string
	data    []byte // node data instead of the owner record (elections)
	layout  string // node name marker instead of the mode's (Lead's MutexLayout)
	// given is the Mode option given, if hasGiven (a Limit sets mode
	// alone), so that a second, different one is refused.
	given    Mode
	hasGiven bool
	err      error // the first pair of options that exclude each other
}

// refuse records the first conflict between options.
func (c *acquireConfig) refuse(format string, a ...any) {
	if c.err == nil {
		c.err = fmt.Errorf("%w: "+format, append([]any{ErrInvalidOption}, a...)...)
	}
}

// newAcquireConfig applies opts, skipping nil ones.
func newAcquireConfig(opts []AcquireOption) acquireConfig {
	var c acquireConfig
	for _, o := range opts {
		if o != nil {
			o.applyAcquire(&c)
		}
	}
	return c
}

type queueConfig struct {
	raw   bool
	limit int
}

func newQueueConfig(opts []QueueOption) queueConfig {
	var c queueConfig
	for _, o := range opts {
		if o != nil {
			o.applyQueue(&c)
		}
	}
	return c
}

type acquireFunc func(*acquireConfig)

func (f acquireFunc) applyAcquire(c *acquireConfig) { f(c) }

// Try makes the acquire return ErrLocked at once instead of waiting for
// the holders ahead of it. A try never waits on ZooKeeper either: if it
// gets no answer within a third of the session timeout, at most a second
// (while disconnected, say), it returns an error matching ErrUnavailable.
// Try and MaxWait exclude each other: together they are ErrInvalidOption.
func Try() AcquireOption { return acquireFunc(func(c *acquireConfig) { c.try = true }) }

// MaxWait bounds the wait; when it passes the acquire fails with
// ErrWaitTimeout. The caller's context deadline still applies. Without it
// (and without a context deadline) an acquire waits as long as it takes,
// through a ZooKeeper outage too. Try and MaxWait exclude each other.
func MaxWait(d time.Duration) AcquireOption {
	return acquireFunc(func(c *acquireConfig) { c.maxWait = d })
}

// applyAcquire makes a Mode an AcquireOption: Exclusive (the default),
// Read or Write. A semaphore is asked for with Limit, an election with
// Campaign or Lead. Two different modes exclude each other, and so do
// Read or Write and a Limit, in either order (ErrInvalidOption); Exclusive
// with a Limit is the semaphore.
func (m Mode) applyAcquire(c *acquireConfig) {
	switch {
	case c.hasGiven && c.given != m:
		c.refuse("modes %v and %v exclude each other: give one", c.given, m)
	case c.limit != 0 && sided(m):
		c.refuse("%v and Limit exclude each other: a semaphore has no read or write side", m)
	}
	c.given, c.hasGiven = m, true
	if c.limit == 0 {
		c.mode = m
	}
}

// sided reports whether m is a side of a read/write lock, which a
// semaphore does not have.
func sided(m Mode) bool { return m == Read || m == Write }

type limitOption int

func (n limitOption) applyAcquire(c *acquireConfig) {
	switch {
	case c.limit != 0 && c.limit != int(n):
		c.refuse("Limit(%d) and Limit(%d) exclude each other: give one", c.limit, int(n))
	case c.hasGiven && sided(c.given):
		c.refuse("%v and Limit exclude each other: a semaphore has no read or write side", c.given)
	}
	c.mode, c.limit = Semaphore, int(n)
}

func (n limitOption) applyQueue(c *queueConfig) { c.limit = int(n) }

// Limit makes the acquire a semaphore of n holders (n >= 1). The limit is
// stored with the resource by its first user; an acquire with another one
// fails with ErrLimitMismatch. Given to Inspect, it tells holders from
// waiters.
func Limit(n int) LimitOption { return limitOption(n) }

type rawPathOption struct{}

func (rawPathOption) applyAcquire(c *acquireConfig) { c.raw = true }
func (rawPathOption) applyQueue(c *queueConfig)     { c.raw = true }
func (rawPathOption) applyLead(c *leadConfig)       { c.acquire = append(c.acquire, rawPathOption{}) }

// RawPath treats the resource as an absolute znode path (e.g. "/locks/foo"
// used by a Curator or kazoo service) instead of a name under the root.
// A connection string's path is its chroot (see Open).
func RawPath() PathOption { return rawPathOption{} }

// LeaseLabel overrides the client's label (WithLabel) in this lease's
// owner data, shown by Inspect and the zklock CLI.
func LeaseLabel(s string) AcquireOption {
	return acquireFunc(func(c *acquireConfig) { c.label = s })
}

// check reports options that cannot go together.
func (c *acquireConfig) check() error {
	switch {
	case c.err != nil:
		return c.err
	case c.try && c.maxWait != 0:
		return fmt.Errorf("%w: Try and MaxWait exclude each other: a try never waits", ErrInvalidOption)
	case c.maxWait < 0:
		return fmt.Errorf("%w: negative MaxWait %v", ErrInvalidOption, c.maxWait)
	}
	return nil
}
