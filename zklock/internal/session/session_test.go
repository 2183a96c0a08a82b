package session

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zklockkit/zklockkit/zklock/internal/errs"
)

// noNodes is a session's nodes when it has none.
type noNodes struct{}

func (noNodes) Event(zk.Event)       {}
func (noNodes) Session(int64) func() { return nil }
func (noNodes) Closing()             {}
func (noNodes) Unverified()          {}
func (noNodes) Busy() bool           { return false }

// Dial errors of different types, one after another (a refused
// connection, then a TLS or proxy error): Connect remembers the last one
// for its message. It kept it in an atomic.Value, which panics when a
// value of another type is stored.
func TestConnectKeepsDialErrorsOfAnyType(t *testing.T) {
	var n atomic.Int32
	dial := func(network, addr string, timeout time.Duration) (net.Conn, error) {
		if n.Add(1)%2 == 0 {
			return nil, errors.New("handshake refused")
		}
		return nil, &net.OpError{Op: "dial", Net: network, Err: errors.New("connection refused")}
	}
	s := New(Config{Servers: []string{"127.0.0.1:1", "127.0.0.1:2"}, SessionTimeout: time.Second, Dialer: dial,
		Logger: discard()})
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	err := s.Connect(ctx, noNodes{})
	if !errors.Is(err, errs.ErrUnavailable) {
		t.Fatalf("Connect = %v; want ErrUnavailable", err)
	}
	if n.Load() < 2 {
		t.Fatalf("%d dials; want both kinds of error", n.Load())
	}
	if st, _ := s.State(); st != Closed {
		t.Fatalf("state after a failed Connect = %v; want Closed", st)
	}
}

func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }
