package zklock

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"
)

// EnvServers is the environment variable that examples, the CLI and the
// demo read the connection string from.
const EnvServers = "ZKLOCK_SERVERS"

// DefaultServers is used when EnvServers is unset.
const DefaultServers = "127.0.0.1:2181"

// ServersFromEnv returns $ZKLOCK_SERVERS, or DefaultServers when unset.
func ServersFromEnv() string {
	if s := strings.TrimSpace(os.Getenv(EnvServers)); s != "" {
		return s
	}
	return DefaultServers
}

// Open connects using a connection string, the way sql.Open takes a DSN:
//
//	127.0.0.1:2181
//	h1:2181,h2:2181,h3:2181
//	zk://h1:2181,h2:2181/zklock?session_timeout=10s&label=worker
//
// The path, when given, is the root (WithRoot). Query parameters:
// session_timeout, loss_margin (durations), label, and user + password for
// digest authentication (WithDigestAuth). Options given to Open apply after
// the ones from the string.
func Open(ctx context.Context, dsn string, opts ...Option) (*Client, error) {
	servers, dsnOpts, err := ParseDSN(dsn)
	if err != nil {
		return nil, err
	}
	return Connect(ctx, servers, append(dsnOpts, opts...)...)
}

// ParseDSN splits a connection string (see Open) into servers and options.
func ParseDSN(dsn string) (servers []string, opts []Option, err error) {
	dsn = strings.TrimSpace(dsn)
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: connection string %q: %s", ErrInvalidOption, dsn, fmt.Sprintf(format, a...))
	}
	if dsn == "" {
		return nil, nil, bad("empty")
	}
	hosts := dsn
	var q url.Values
	if scheme, rest, ok := strings.Cut(dsn, "://"); ok {
		if scheme != "zk" {
			return nil, nil, bad("scheme must be zk://")
		}
		// url.Parse cannot take several host:port pairs: split by hand.
		rest, query, _ := strings.Cut(rest, "?")
		hosts = rest
		if i := strings.IndexByte(rest, '/'); i >= 0 {
			hosts = rest[:i]
			if path := strings.TrimSuffix(rest[i:], "/"); path != "" {
				opts = append(opts, WithRoot(path))
			}
		}
		var err error
		if q, err = url.ParseQuery(query); err != nil {
			return nil, nil, bad("%v", err)
		}
	}
	for _, h := range strings.Split(hosts, ",") {
		h = strings.TrimSpace(h)
		if h == "" {
			continue
		}
		if !strings.Contains(h, ":") {
			h += ":2181"
		}
		servers = append(servers, h)
	}
	if len(servers) == 0 {
		return nil, nil, bad("no servers")
	}
	for k, vs := range q {
		v := vs[len(vs)-1]
		switch k {
		case "session_timeout", "loss_margin":
			d, err := time.ParseDuration(v)
			if err != nil {
				return nil, nil, bad("%s: %v", k, err)
			}
			if k == "session_timeout" {
				opts = append(opts, WithSessionTimeout(d))
			} else {
				opts = append(opts, WithLossMargin(d))
			}
		case "label":
			opts = append(opts, WithLabel(v))
		case "user", "password":
			// handled below
		default:
			return nil, nil, bad("unknown parameter %q", k)
		}
	}
	if u, p := q.Get("user"), q.Get("password"); u != "" || p != "" {
		if u == "" || p == "" {
			return nil, nil, bad("user and password go together")
		}
		opts = append(opts, WithDigestAuth(u, p))
	}
	return servers, opts, nil
}
