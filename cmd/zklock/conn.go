package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/zklockkit/zklockkit/internal/duration"
	"github.com/zklockkit/zklockkit/internal/zkenv"
	"github.com/zklockkit/zklockkit/zklock"
)

// EnvPassword is read for the digest password when --user is given without
// --password, so the password need not appear in the process list. It is
// zklock's: a connection string with a user and no password reads it too.
const EnvPassword = zklock.EnvPassword

// DefaultConnectTimeout is how long a subcommand waits for a ZooKeeper
// session before it exits with ExitUnreachable.
const DefaultConnectTimeout = 10 * time.Second

// connFlags are the connection flags every subcommand takes. They mirror
// zklock's options.
type connFlags struct {
	fs             *flag.FlagSet
	servers        string
	root           string
	sessionTimeout time.Duration
	connectTimeout time.Duration
	user           string
	password       string
	label          string
	tls            tlsFlags
	// timeoutName names what set connectTimeout in messages (default
	// "--connect-timeout").
	timeoutName string
}

func (c *connFlags) register(fs *flag.FlagSet) {
	c.fs = fs
	fs.StringVar(&c.servers, "servers", "", "ZooKeeper `servers`: ZooKeeper's connect string \"h1:2181,h2:2181/root\" or \"zk://h1,h2/root?session_timeout=10s\" (default $"+zkenv.EnvServers+", else "+zkenv.DefaultServers+")")
	fs.StringVar(&c.root, "root", "", "znode under which resource queues live (default: the path (chroot) of --servers, else "+zklock.DefaultRoot+")")
	duration.Var(fs, &c.sessionTimeout, "session-timeout", 0, "ZooKeeper session timeout (`duration`) to ask for (default: from --servers, else "+zklock.DefaultSessionTimeout.String()+")")
	duration.Var(fs, &c.connectTimeout, "connect-timeout", DefaultConnectTimeout, "give up (exit 113) when no session is established within this `duration`")
	fs.StringVar(&c.user, "user", "", "digest authentication `user` (zklock.WithDigestAuth): nodes created are writable only by this identity")
	fs.StringVar(&c.password, "password", "", "digest authentication `password` (default $"+EnvPassword+")")
	fs.StringVar(&c.label, "label", "", "`label` stored in lock nodes' owner data, shown by show/ls/watch (run: default CMD's name)")
	c.tls.register(fs)
}

// dsn returns the connection string to use.
func (c *connFlags) dsn() string {
	if s := strings.TrimSpace(c.servers); s != "" {
		return s
	}
	return zkenv.Servers()
}

// validate checks every connection flag without touching the network.
// The connection string is checked by zklock.ParseDSN, whose message
// names the bad part.
func (c *connFlags) validate(cmd string) ([]string, error) {
	if err := c.validateServers(cmd); err != nil {
		return nil, err
	}
	servers, _, err := zklock.ParseDSN(c.dsn())
	if err != nil {
		from := "--servers"
		if strings.TrimSpace(c.servers) == "" {
			from = "--servers (from $" + zkenv.EnvServers + ")"
		}
		msg := strings.TrimPrefix(err.Error(), zklock.ErrInvalidOption.Error()+": ")
		return nil, usageErrorf(cmd, "bad %s: %s", from, msg)
	}
	if c.root != "" && (!strings.HasPrefix(c.root, "/") || c.root == "/" || strings.HasSuffix(c.root, "/")) {
		return nil, usageErrorf(cmd, "bad --root %q: must be an absolute znode path such as /zklock", c.root)
	}
	if isSet(c.fs, "session-timeout") && c.sessionTimeout < 100*time.Millisecond {
		return nil, usageErrorf(cmd, "bad --session-timeout %v: must be at least 100ms", c.sessionTimeout)
	}
	if c.connectTimeout <= 0 {
		return nil, usageErrorf(cmd, "bad --connect-timeout %v: must be positive", c.connectTimeout)
	}
	if c.password != "" && c.user == "" {
		return nil, usageErrorf(cmd, "--password needs --user")
	}
	if c.user != "" && c.password == "" && os.Getenv(EnvPassword) == "" {
		return nil, usageErrorf(cmd, "--user needs --password (or $%s)", EnvPassword)
	}
	if strings.Contains(c.user, ":") {
		return nil, usageErrorf(cmd, "bad --user %q: must not contain ':'", c.user)
	}
	if _, err := c.tls.config(cmd); err != nil {
		return nil, err
	}
	return servers, nil
}

// validateServers refuses an empty --servers, and a $ZKLOCK_SERVERS that
// is set but empty when --servers is not given: most often a variable
// meant to hold the ensemble did not ("--servers $ZK" with ZK unset), and
// falling back to the default would silently read or lock on whatever
// ZooKeeper runs there.
func (c *connFlags) validateServers(cmd string) error {
	if isSet(c.fs, "servers") {
		if strings.TrimSpace(c.servers) == "" {
			return usageErrorf(cmd, "bad --servers %q: empty; name ZooKeeper's servers (e.g. zk1:2181,zk2:2181), or leave --servers out to use $%s, else %s",
				c.servers, zkenv.EnvServers, zkenv.DefaultServers)
		}
		return nil
	}
	if s, ok := os.LookupEnv(zkenv.EnvServers); ok && strings.TrimSpace(s) == "" {
		return usageErrorf(cmd, "$%s is set but empty: set it to ZooKeeper's servers, or unset it to use %s",
			zkenv.EnvServers, zkenv.DefaultServers)
	}
	return nil
}

// options returns the zklock options the flags ask for (after validate).
func (c *connFlags) options(cmd string) ([]zklock.Option, error) {
	var opts []zklock.Option
	if c.root != "" {
		opts = append(opts, zklock.WithRoot(c.root))
	}
	if isSet(c.fs, "session-timeout") {
		opts = append(opts, zklock.WithSessionTimeout(c.sessionTimeout))
	}
	if c.user != "" {
		pw := c.password
		if pw == "" {
			pw = os.Getenv(EnvPassword)
		}
		opts = append(opts, zklock.WithDigestAuth(c.user, pw))
	}
	if c.label != "" {
		opts = append(opts, zklock.WithLabel(c.label))
	}
	cfg, err := c.tls.config(cmd)
	if err != nil {
		return nil, err
	}
	if cfg != nil {
		opts = append(opts, zklock.WithDialer(tlsDialer(cfg)))
	}
	return opts, nil
}

// open validates the flags and connects. Errors carry their exit code:
// ExitUsage for bad flags, ExitUnreachable when no session could be had.
func (c *connFlags) open(ctx context.Context, cmd string) (*zklock.Client, error) {
	servers, err := c.validate(cmd)
	if err != nil {
		return nil, err
	}
	opts, err := c.options(cmd)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, c.connectTimeout)
	defer cancel()
	client, err := openBounded(ctx, c.dsn(), opts)
	switch {
	case err == nil:
		return client, nil
	case errors.Is(err, zklock.ErrUnavailable) || errors.Is(err, context.DeadlineExceeded):
		name := c.timeoutName
		if name == "" {
			name = "--connect-timeout"
		}
		return nil, withCode(ExitUnreachable, fmt.Errorf("cannot reach ZooKeeper at %s within %v (%s): %s",
			strings.Join(servers, ","), c.connectTimeout, name, errText(err)))
	case errors.Is(err, zklock.ErrInvalidOption):
		return nil, usageErrorf(cmd, "%s", errText(err))
	}
	return nil, err
}

// openBounded is zklock.Open, returning when ctx ends even if Open does
// not: after a failed handshake go-zookeeper's Close waits up to a second
// for a reply that a silent server never sends, which would stretch the
// try bound of "run --try". A client that connects after all is closed.
func openBounded(ctx context.Context, dsn string, opts []zklock.Option) (*zklock.Client, error) {
	type result struct {
		c   *zklock.Client
		err error
	}
	done := make(chan result, 1)
	go func() {
		c, err := zklock.Open(ctx, dsn, opts...)
		done <- result{c, err}
	}()
	select {
	case r := <-done:
		return r.c, r.err
	case <-ctx.Done():
		go func() {
			if r := <-done; r.c != nil {
				r.c.Close()
			}
		}()
		return nil, fmt.Errorf("%w: %w", zklock.ErrUnavailable, ctx.Err())
	}
}
