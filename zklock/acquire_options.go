package zklock

import (
	"fmt"
	"time"
)

// Mode is the kind of lock an acquire asks for.
type Mode int

// Lock modes.
const (
	// Exclusive: one holder at a time (the default).
	Exclusive Mode = iota
	// Read: shared with other readers; excluded by writers and exclusive
	// holders ahead in the queue.
	Read
	// Write: excludes everyone; same as Exclusive but named with Curator's
	// read/write layout so Java readers and writers see it.
	Write
	// Semaphore: up to the limit given with WithLimit hold at once.
	Semaphore
	// Election: a candidate in a leader election (Client.Campaign); the
	// first candidate leads. Node names follow Curator's LeaderLatch.
	Election
)

func (m Mode) String() string {
	switch m {
	case Exclusive:
		return "exclusive"
	case Read:
		return "read"
	case Write:
		return "write"
	case Semaphore:
		return "semaphore"
	case Election:
		return "election"
	}
	return "unknown"
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
	case n < 1:
		// Refused here, whatever comes after it: c.limit 0 means no
		// Limit given.
		c.refuse("semaphore limit must be at least 1, not Limit(%d)", int(n))
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
