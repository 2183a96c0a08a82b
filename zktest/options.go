package zktest

import (
	"io"
	"time"
)

// Option configures servers started by StartServer, StartEnsemble or Main.
type Option func(*config)

type config struct {
	tickTime   time.Duration
	minSession time.Duration // 0: ZooKeeper default (2×tickTime)
	maxSession time.Duration // 0: ZooKeeper default (20×tickTime)
	forceSync  *bool         // nil: ZooKeeper default (yes)
	logOutput  io.Writer     // nil: server.log in the server's directory
	dir        string        // "": a fresh temporary directory
	links      bool          // ensemble links through proxies (WithLinkProxies)
}

func newConfig(opts []Option) config {
	c := config{tickTime: 2 * time.Second}
	for _, o := range opts {
		o(&c)
	}
	return c
}

// WithTickTime sets ZooKeeper's tickTime (default 2s). The minimum session
// timeout is 2×tickTime, so tests of session expiry use about 200ms.
func WithTickTime(d time.Duration) Option {
	return func(c *config) { c.tickTime = d }
}

// WithSessionTimeoutBounds sets minSessionTimeout and maxSessionTimeout.
// A zero value keeps ZooKeeper's default for that bound.
func WithSessionTimeoutBounds(min, max time.Duration) Option {
	return func(c *config) { c.minSession, c.maxSession = min, max }
}

// WithForceSync sets the zookeeper.forceSync system property. Without this
// option ZooKeeper's default (fsync the transaction log) applies; false
// makes writes faster but not durable across a machine crash.
func WithForceSync(on bool) Option {
	return func(c *config) { c.forceSync = &on }
}

// WithLogOutput sends each server's stdout and stderr to w instead of the
// file server.log in the server's directory. Writes to w are serialized, so
// several servers may share it.
func WithLogOutput(w io.Writer) Option {
	sw := &syncWriter{w: w}
	return func(c *config) { c.logOutput = sw }
}

// WithDir sets the base directory for server data. A standalone server uses
// dir itself; ensemble member i uses dir/zk<i>. Directories given this way
// are kept by Close; by default a temporary directory is made and removed.
func WithDir(dir string) Option {
	return func(c *config) { c.dir = dir }
}
