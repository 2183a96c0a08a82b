package zklock_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zklockkit/zklockkit/zklock"
)

// A dialer whose failures are errors of different types (a refused
// connection, then a failed lookup or handshake) gives Connect an error
// naming the last one. Before, Connect kept the last dial error in an
// atomic.Value, which panics when it is given a value of another type:
// the whole process crashed.
func TestConnectKeepsDialErrorsOfAnyType(t *testing.T) {
	var n atomic.Int32
	dial := func(network, addr string, timeout time.Duration) (net.Conn, error) {
		if n.Add(1)%2 == 1 {
			return nil, &net.OpError{Op: "dial", Net: network, Err: errors.New("connection refused")}
		}
		return nil, errors.New("handshake failed")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2500*time.Millisecond)
	defer cancel()
	_, err := zklock.Connect(ctx, []string{"127.0.0.1:1"}, zklock.WithDialer(dial))
	if !errors.Is(err, zklock.ErrUnavailable) || !strings.Contains(err.Error(), "last dial error") {
		t.Fatalf("Connect through a failing dialer: %v; want ErrUnavailable naming the last dial error", err)
	}
	if n.Load() < 2 {
		t.Fatalf("%d dials: the test did not set up its case", n.Load())
	}
}
