package zklock_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zklockkit/zklockkit/zklock"
)

// A host name that does not resolve is not a bad option: Open keeps
// trying, as for a refused connection, and fails with ErrUnavailable when
// its context ends, naming the lookup. Names under .invalid never resolve
// (RFC 6761). Before, go-zookeeper resolved every name once inside
// zk.Connect and Open failed at once with ErrInvalidOption.
func TestUnresolvableHostIsUnavailable(t *testing.T) {
	const host = "zk1.zklock-test.invalid"
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	start := time.Now()
	c, err := zklock.Open(ctx, host+":2181/app")
	took := time.Since(start)
	if err == nil {
		c.Close()
		t.Fatal("Open of an unresolvable host succeeded")
	}
	if errors.Is(err, zklock.ErrInvalidOption) || !errors.Is(err, zklock.ErrUnavailable) {
		t.Fatalf("Open of an unresolvable host: %v; want ErrUnavailable, not ErrInvalidOption", err)
	}
	if !strings.Contains(err.Error(), host) {
		t.Errorf("Open's error %q does not name the host", err)
	}
	if took < time.Second {
		t.Errorf("Open gave up after %v, before its context ended: it did not keep trying", took)
	}
	t.Logf("after %v: %v", took.Round(time.Millisecond), err)
}

// laterDNS is a name that resolves only while up is set, to the address
// of the server behind it: what a pod sees that starts before its
// ZooKeeper's DNS record exists, or while DNS is down. It dials as
// net.DialTimeout does, and a name it does not know fails as net.Dial
// fails a lookup.
type laterDNS struct {
	name, addr string
	up         atomic.Bool
	mu         sync.Mutex
	dialed     []string // the addresses the client asked to dial
	failed     int      // dials of name while down
}

func (d *laterDNS) dial(network, addr string, timeout time.Duration) (net.Conn, error) {
	d.mu.Lock()
	d.dialed = append(d.dialed, addr)
	host, port, _ := net.SplitHostPort(addr)
	if host == d.name && !d.up.Load() {
		d.failed++
		d.mu.Unlock()
		return nil, &net.OpError{Op: "dial", Net: network, Err: &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}}
	}
	d.mu.Unlock()
	if host == d.name {
		_, realPort, _ := net.SplitHostPort(d.addr)
		if port != realPort {
			return nil, errors.New("laterDNS: unexpected port " + port)
		}
		addr = d.addr
	}
	return net.DialTimeout(network, addr, timeout)
}

func (d *laterDNS) failures() (dialed []string, failed int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.dialed...), d.failed
}

// A name that starts to resolve while Open waits is connected to, and the
// client resolves it again on each reconnection: a lookup that fails then
// is retried like a refused connection, and the session survives when the
// name comes back within its timeout.
func TestIntegration_HostResolvedOnEveryDial(t *testing.T) {
	p := newProxy(t)
	_, port, _ := net.SplitHostPort(p.Addr())
	dns := &laterDNS{name: "zk.later.invalid", addr: p.Addr()}
	ctx := testCtx(t)
	go func() {
		time.Sleep(1500 * time.Millisecond)
		dns.up.Store(true)
	}()
	c, err := zklock.Open(ctx, dns.name+":"+port+"/app?session_timeout=4s", zklock.WithDialer(dns.dial))
	if err != nil {
		t.Fatalf("Open while the name did not resolve yet: %v; want it to wait for the name", err)
	}
	defer c.Close()
	dialed, failed := dns.failures()
	if failed == 0 {
		t.Fatalf("no dial failed to resolve before the name came up (dialed %v): the test did not set up its case", dialed)
	}
	for _, a := range dialed {
		if a != dns.name+":"+port {
			t.Errorf("the client dialed %q; want the name as given, %q, resolved on each dial", a, dns.name+":"+port)
		}
	}
	sid := c.SessionID()

	// The name stops resolving and the connection drops: the client
	// redials the name until it resolves again, on the same session.
	dns.up.Store(false)
	p.DropAll()
	eventually(t, "a failed lookup on reconnection", func() bool {
		_, f := dns.failures()
		return f > failed
	})
	dns.up.Store(true)
	l, err := c.Acquire(ctx, "after-dns")
	if err != nil {
		t.Fatalf("Acquire after the name came back: %v", err)
	}
	defer l.Release(ctx)
	if got := c.SessionID(); got != sid {
		t.Errorf("session %#x after the reconnection; want the same session %#x", got, sid)
	}
}
