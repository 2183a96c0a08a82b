package zklock

import (
	"context"
	"errors"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zklockkit/zklockkit/zklock/internal/dsn"
)

// Connect checks its servers as ParseDSN checks the hosts of a string: a
// host ParseDSN accepts alone, Connect accepts and normalizes the same
// way, and one it refuses, Connect refuses with ErrInvalidOption before
// dialing.
func TestConnectChecksServersLikeParseDSN(t *testing.T) {
	for _, h := range []string{
		"127.0.0.1:2181", "h1", "h1:02181", "[::1]", "[::1]:2182", "zk-1.example.com.:1", "my_host:65535",
		"h1:", "h1:0", "h1:65536", "h1:x", ":2181", "::1", "[::1", "[::1]x", "[1.2.3.4]", "h 1", "a..b", "1.2.3.256",
	} {
		servers, _, perr := ParseDSN(h)
		got, cerr := dsn.CheckServers([]string{h})
		if (perr == nil) != (cerr == nil) {
			t.Errorf("%q: ParseDSN error %v, Connect's check %v", h, perr, cerr)
			continue
		}
		if cerr == nil {
			if !slices.Equal(got, servers) {
				t.Errorf("%q: Connect uses %v, ParseDSN returns %v", h, got, servers)
			}
			if _, _, err := net.SplitHostPort(got[0]); err != nil {
				t.Errorf("%q: checked server %q does not split: %v", h, got[0], err)
			}
			continue
		}
	}
	// Connect refuses a bad host before dialing (the hosts resolve: the
	// refusal is not go-zookeeper's failed lookup), and a connection
	// string, naming the part.
	for h, want := range map[string]string{
		"":                          "empty host",
		"127.0.0.1:0":               "port 0 is out of range",
		"localhost:65536":           "port 65536 is out of range",
		"127.0.0.1:x":               `port "x" is not a number`,
		"localhost:":                "empty port",
		"::1":                       "an IPv6 address must be in brackets",
		"[127.0.0.1]:2181":          "is not an IPv6 address",
		"user@localhost":            "user info is only taken in the zk:// form",
		"127.0.0.1:2181,localhost":  "(a connection string goes to Open)",
		"127.0.0.1/app":             "invalid character '/'",
		"127.0.0.1?session_timeout": "invalid character '?'",
	} {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_, err := Connect(ctx, []string{h})
		cancel()
		if !errors.Is(err, ErrInvalidOption) || errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), want) {
			t.Errorf("Connect(%q) = %v, want ErrInvalidOption saying %q", h, err, want)
		}
	}
	_, err := dsn.CheckServers([]string{"h1:2181,h2:2181/app"})
	if err == nil || !strings.Contains(err.Error(), "(a connection string goes to Open)") {
		t.Errorf("a connection string given to Connect: %v", err)
	}
	_, err = dsn.CheckServers([]string{"h1", "h1:2181"})
	if err == nil || !strings.Contains(err.Error(), `server "h1:2181": given twice`) {
		t.Errorf("a server given twice to Connect: %v", err)
	}
	if _, err := dsn.CheckServers(nil); !errors.Is(err, ErrInvalidOption) {
		t.Errorf("no servers: %v", err)
	}
}
