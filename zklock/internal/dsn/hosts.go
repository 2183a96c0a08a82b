package dsn

import (
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zklockkit/zklockkit/zklock/internal/errs"
)

var _ zk.HostProvider = (*Hosts)(nil)

// parseHosts takes the comma-separated host list of a connection string.
func (d *parser) parseHosts(list string) error {
	if strings.TrimSpace(list) == "" {
		return d.bad("no host (want host[:port],...)")
	}
	parts := strings.Split(list, ",")
	seen := map[string]int{}
	for i, part := range parts {
		part = strings.Trim(part, " \t")
		server, err := parseHost(part)
		switch {
		case err != nil && len(parts) == 1:
			return d.bad("%v", err)
		case err != nil && part == "":
			return d.bad("host %d of %d: %v", i+1, len(parts), err)
		case err != nil:
			return d.bad("host %d of %d (%q): %v", i+1, len(parts), part, err)
		}
		if j, dup := seen[strings.ToLower(server)]; dup {
			return d.bad("host %d of %d (%q): repeats host %d (%s)", i+1, len(parts), part, j+1, d.Servers[j])
		}
		seen[strings.ToLower(server)] = i
		d.Servers = append(d.Servers, server)
	}
	return nil
}

// parseHost checks one host of a list, name[:port], ipv4[:port] or
// [ipv6][:port], and returns it as host:port.
func parseHost(s string) (string, error) {
	if s == "" {
		return "", fmt.Errorf("empty host (two commas in a row, or a comma at an end)")
	}
	var host, port string
	hasPort := false
	if strings.ContainsAny(s, " \t") {
		return "", fmt.Errorf("blank inside a host (separate hosts with commas)")
	}
	if strings.HasPrefix(s, "[") {
		end := strings.IndexByte(s, ']')
		if end < 0 {
			return "", fmt.Errorf("missing \"]\" after the IPv6 address")
		}
		host = s[1:end]
		switch after := s[end+1:]; {
		case after == "":
		case after[0] == ':':
			port, hasPort = after[1:], true
		default:
			return "", fmt.Errorf("want [IPv6] or [IPv6]:port")
		}
		a, err := netip.ParseAddr(host)
		if err != nil || !a.Is6() {
			return "", fmt.Errorf("%q is not an IPv6 address (brackets are for IPv6 only)", host)
		}
		if z := a.Zone(); a.Zone() != "" && strings.Trim(z, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") != "" {
			return "", fmt.Errorf("bad zone %q (want an interface name, as in [fe80::1%%eth0])", z)
		}
	} else {
		switch strings.Count(s, ":") {
		case 0:
			host = s
		case 1:
			host, port, _ = strings.Cut(s, ":")
			hasPort = true
		default:
			return "", colons(s)
		}
		if err := checkHostName(host); err != nil {
			return "", err
		}
	}
	p := DefaultPort
	if hasPort {
		var err error
		if p, err = parsePort(port); err != nil {
			return "", err
		}
	}
	return net.JoinHostPort(host, strconv.Itoa(p)), nil
}

// colons explains a host with more than one colon: a bare IPv6 address,
// or a typo.
func colons(s string) error {
	a, err := netip.ParseAddr(s)
	if err != nil || !a.Is6() {
		return fmt.Errorf("too many colons (write host:port, with an IPv6 address in brackets: [::1]:%d)", DefaultPort)
	}
	also := ""
	if i := strings.LastIndexByte(s, ':'); i > 0 {
		if b, err := netip.ParseAddr(s[:i]); err == nil && b.Is6() && s[i+1:] != "" {
			also = fmt.Sprintf(", or [%s]:%s if %s is the port", s[:i], s[i+1:], s[i+1:])
		}
	}
	return fmt.Errorf("an IPv6 address must be in brackets, as [%s] or [%s]:%d%s (a bare one is ambiguous: its last group could be a port)", s, s, DefaultPort, also)
}

// checkHostName checks a host name or IPv4 address.
func checkHostName(h string) error {
	if h == "" {
		return fmt.Errorf("empty host name")
	}
	if len(h) > 253 {
		return fmt.Errorf("host name longer than 253 bytes")
	}
	digits := true
	for i := 0; i < len(h); i++ {
		c := h[i]
		switch {
		case '0' <= c && c <= '9' || c == '.':
		case 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '-' || c == '_':
			digits = false
		case c == '@':
			return fmt.Errorf("%q in a host name: user info is only taken in the zk:// form (zk://USER@HOSTS)", "@")
		default:
			return fmt.Errorf("invalid character %q in host name %q", c, h)
		}
	}
	if digits {
		if _, err := netip.ParseAddr(h); err != nil {
			return fmt.Errorf("%q is not an IPv4 address", h)
		}
		return nil
	}
	for _, label := range strings.Split(strings.TrimSuffix(h, "."), ".") {
		if label == "" {
			return fmt.Errorf("empty label in host name %q", h)
		}
	}
	return nil
}

// parsePort parses a decimal port number from 1 to 65535.
func parsePort(s string) (int, error) {
	if s == "" {
		return 0, fmt.Errorf("empty port (omit the colon for port %d)", DefaultPort)
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, fmt.Errorf("port %q is not a number", s)
		}
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > 65535 {
		return 0, fmt.Errorf("port %s is out of range (1 to 65535)", s)
	}
	return n, nil
}

// CheckServers checks the servers given to zklock.Connect as Parse checks
// the hosts of a connection string, and returns them as host:port, the
// default port filled in.
func CheckServers(servers []string) ([]string, error) {
	if len(servers) == 0 {
		return nil, fmt.Errorf("%w: no ZooKeeper servers given", errs.ErrInvalidOption)
	}
	out := make([]string, 0, len(servers))
	seen := map[string]bool{}
	for _, s := range servers {
		server, err := parseHost(strings.Trim(s, " \t"))
		if err == nil && seen[strings.ToLower(server)] {
			err = fmt.Errorf("given twice")
		}
		if err != nil {
			hint := ""
			if strings.ContainsAny(s, ",/?") {
				hint = " (a connection string goes to Open)"
			}
			return nil, fmt.Errorf("%w: server %q: %v%s", errs.ErrInvalidOption, s, err, hint)
		}
		seen[strings.ToLower(server)] = true
		out = append(out, server)
	}
	return out, nil
}

// Hosts is the go-zookeeper HostProvider of a Client. It hands the
// servers to the dialer as given, names unresolved, so that each dial
// resolves its name afresh. go-zookeeper's default, DNSHostProvider,
// resolves every name once, inside zk.Connect: a name that does not
// resolve yet (a pod that starts before its DNS record) failed Connect at
// once, and an address that changes later was never seen. Here a name
// that fails to resolve is a failed dial, retried as a refused connection
// is, until Connect's context ends (ErrUnavailable), and the same on every
// reconnection. go-zookeeper shuffles the servers before Init.
//
// go-zookeeper waits a second before it dials when Next says every server
// has been tried since the last connection (retryStart). With one server
// that is every redial, so any dropped connection cut a client of one
// server off for a second at least, which costs its leases when the
// session timeout is short (they are given up 30% to 40% of it after the
// last proof: with 2.5 s or less, at every drop). Hosts lets the first
// redial after a connection that lived QuickRedialAfter or more go at
// once; a failed one, or a redial after a shorter connection, waits the
// second. So each connection adds at most one dial, and a server that
// keeps dropping a client is dialled by it at most once a second more
// than before. With an ensemble the first redial goes to another server,
// at once, as it did.
type Hosts struct {
	mu      sync.Mutex
	servers []string
	curr    int // the server of the last Next
	last    int // the server of the last connection, -1 before one
	// connected is when the last connection was made, and quick whether
	// no Next has been asked since.
	connected time.Time
	quick     bool
	now       func() time.Time // time.Now; tests set it
}

// QuickRedialAfter is how long a connection must have lived for the first
// redial after it to go without go-zookeeper's one-second wait (Hosts).
const QuickRedialAfter = time.Second

// Init takes the servers, "host:port" each.
func (h *Hosts) Init(servers []string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(servers) == 0 {
		return fmt.Errorf("no ZooKeeper servers given")
	}
	h.servers = slices.Clone(servers)
	h.curr, h.last, h.quick = -1, -1, false
	return nil
}

// Len returns the number of servers.
func (h *Hosts) Len() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.servers)
}

// Next returns the server to dial next, and whether every server has been
// tried since the last connection (go-zookeeper then waits a second),
// except for the first redial after a connection that lived
// QuickRedialAfter or more (see Hosts).
func (h *Hosts) Next() (server string, retryStart bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.curr = (h.curr + 1) % len(h.servers)
	retryStart = h.curr == h.last
	if retryStart && h.quick && h.clock().Sub(h.connected) >= QuickRedialAfter {
		retryStart = false
	}
	h.quick = false
	if h.last == -1 {
		h.last = 0
	}
	return h.servers[h.curr], retryStart
}

// Connected records that the last server returned by Next was connected.
// go-zookeeper calls it once the session is established on it.
func (h *Hosts) Connected() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.last = h.curr
	h.connected, h.quick = h.clock(), true
}

func (h *Hosts) clock() time.Time {
	if h.now != nil {
		return h.now()
	}
	return time.Now()
}
