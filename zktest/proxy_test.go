package zktest_test

import (
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/zklockkit/zklockkit/zktest"
)

// ask sends a four-letter word to addr and reads the answer, with a
// deadline of timeout for the whole exchange.
func ask(addr, cmd string, timeout time.Duration) (string, error) {
	c, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return "", err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(timeout))
	if _, err := io.WriteString(c, cmd); err != nil {
		return "", err
	}
	b, err := io.ReadAll(c)
	return string(b), err
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

func newProxy(t *testing.T) *zktest.Proxy {
	t.Helper()
	p, err := zktest.NewProxy(zktest.Shared().Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

func waitConns(t *testing.T, p *zktest.Proxy, n int) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); p.Conns() != n; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("Conns = %d, want %d", p.Conns(), n)
		}
	}
}

func TestProxyForwards(t *testing.T) {
	p := newProxy(t)
	if out, err := ask(p.Addr(), "ruok", 5*time.Second); err != nil || out != "imok" {
		t.Fatalf("ruok via proxy = %q, %v", out, err)
	}
	if out, err := ask(p.Addr(), "srvr", 5*time.Second); err != nil || !strings.Contains(out, "Mode: standalone") {
		t.Fatalf("srvr via proxy = %q, %v", out, err)
	}
	waitConns(t, p, 0)
}

func TestProxyBlackhole(t *testing.T) {
	p := newProxy(t)
	p.Blackhole(true)
	if out, err := ask(p.Addr(), "ruok", 300*time.Millisecond); !isTimeout(err) {
		t.Fatalf("ruok via blackholed proxy = %q, %v; want timeout", out, err)
	}

	// Bytes sent during the blackhole are held and delivered when it ends.
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "ruok")
	c.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
	if _, err := c.Read(make([]byte, 4)); !isTimeout(err) {
		t.Fatalf("read on blackholed conn: %v; want timeout", err)
	}
	p.Blackhole(false)
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if b, err := io.ReadAll(c); err != nil || string(b) != "imok" {
		t.Fatalf("after blackhole: %q, %v; want imok", b, err)
	}
	if out, err := ask(p.Addr(), "ruok", 5*time.Second); err != nil || out != "imok" {
		t.Fatalf("ruok after blackhole = %q, %v", out, err)
	}
}

func TestProxyDropAll(t *testing.T) {
	p := newProxy(t)
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	waitConns(t, p, 1)
	p.DropAll()
	if n := p.Conns(); n != 0 {
		t.Errorf("Conns after DropAll = %d", n)
	}
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Read(make([]byte, 1)); err == nil || isTimeout(err) {
		t.Fatalf("read after DropAll: %v; want EOF or reset", err)
	}
}

func TestProxyRejectNew(t *testing.T) {
	p := newProxy(t)
	p.RejectNew(true)
	if out, err := ask(p.Addr(), "ruok", 5*time.Second); err == nil && out != "" || isTimeout(err) {
		t.Fatalf("ruok via rejecting proxy = %q, %v; want closed connection", out, err)
	}
	p.RejectNew(false)
	if out, err := ask(p.Addr(), "ruok", 5*time.Second); err != nil || out != "imok" {
		t.Fatalf("ruok after RejectNew(false) = %q, %v", out, err)
	}
}

func TestProxyDelay(t *testing.T) {
	p := newProxy(t)
	const d = 150 * time.Millisecond
	p.SetDelay(d)
	start := time.Now()
	if out, err := ask(p.Addr(), "srvr", 5*time.Second); err != nil || !strings.Contains(out, "Mode:") {
		t.Fatalf("srvr via delaying proxy = %q, %v", out, err)
	}
	// The request and the answer are each delayed by d.
	if elapsed := time.Since(start); elapsed < 2*d-10*time.Millisecond {
		t.Fatalf("round trip took %v, want at least %v", elapsed, 2*d)
	}
}

func TestProxySetTargetAndClose(t *testing.T) {
	p := newProxy(t)
	other, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	p.SetTarget(other.Addr().String())
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	other.(*net.TCPListener).SetDeadline(time.Now().Add(5 * time.Second))
	sc, err := other.Accept()
	if err != nil {
		t.Fatalf("new target got no connection: %v", err)
	}
	defer sc.Close()
	io.WriteString(c, "ping")
	sc.SetReadDeadline(time.Now().Add(5 * time.Second))
	if b := make([]byte, 4); func() error { _, err := io.ReadFull(sc, b); return err }() != nil || string(b) != "ping" {
		t.Fatalf("new target did not receive ping: %q", b)
	}

	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if p.Conns() != 0 {
		t.Errorf("Conns after Close = %d", p.Conns())
	}
	if c2, err := net.DialTimeout("tcp", p.Addr(), time.Second); err == nil {
		c2.Close()
		t.Error("proxy still accepts after Close")
	}
}
