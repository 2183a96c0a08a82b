package zktest_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zklockkit/zklockkit/zktest"
)

func connect(t *testing.T, addr string) *zk.Conn {
	t.Helper()
	conn, _, err := zk.Connect([]string{addr}, 10*time.Second, zk.WithLogInfo(false))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(conn.Close)
	return conn
}

// mkroot creates a unique root for t, and its parent.
func mkroot(t *testing.T, conn *zk.Conn) string {
	t.Helper()
	root := zktest.UniqueRoot(t)
	for _, p := range []string{root[:strings.LastIndexByte(root, '/')], root} {
		if _, err := conn.Create(p, nil, 0, zk.WorldACL(zk.PermAll)); err != nil && !errors.Is(err, zk.ErrNodeExists) {
			t.Fatalf("create %s: %v", p, err)
		}
	}
	return root
}

// reconnected runs f, again while it fails with zk.ErrNoServer, which
// go-zookeeper answers while it is still reconnecting after a lost reply
// closed the connection (seen under a loaded CI run), for up to 10 s. Any
// other answer is f's.
func reconnected(f func() error) error {
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := f()
		if !errors.Is(err, zk.ErrNoServer) || time.Now().After(deadline) {
			return err
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func fired(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: the reply was never lost", what)
	}
}

func notFired(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
		t.Fatalf("%s: a reply was lost too early", what)
	default:
	}
}

// A lost reply leaves the request carried out on the server and the
// client with a connection error.
func TestProxyLoseReplyCreate(t *testing.T) {
	p := newProxy(t)
	viaProxy, direct := connect(t, p.Addr()), connect(t, zktest.Shared().Addr())
	root := mkroot(t, direct)
	// A read first: a loss armed for creates leaves other requests alone.
	lost := p.LoseReply(zktest.OpCreate)
	if _, _, err := viaProxy.Children(root); err != nil {
		t.Fatalf("list before the create: %v", err)
	}
	notFired(t, lost, "create")
	_, err := viaProxy.Create(root+"/n", []byte("x"), 0, zk.WorldACL(zk.PermAll))
	if !errors.Is(err, zk.ErrConnectionClosed) {
		t.Fatalf("create whose reply is lost: err = %v, want %v", err, zk.ErrConnectionClosed)
	}
	fired(t, lost, "create")
	if ok, _, err := direct.Exists(root + "/n"); err != nil || !ok {
		t.Fatalf("node of the create whose reply was lost: exists = %v, %v; want true", ok, err)
	}
	// The client reconnects and works on.
	if err := reconnected(func() error {
		_, err := viaProxy.Create(root+"/m", nil, 0, zk.WorldACL(zk.PermAll))
		return err
	}); err != nil {
		t.Fatalf("create after the loss: %v", err)
	}
}

// Losses queue: the second is armed only once the first has fired, and
// each loses exactly one reply.
func TestProxyLoseReplyQueue(t *testing.T) {
	p := newProxy(t)
	conn := connect(t, p.Addr())
	root := mkroot(t, conn)
	first, second := p.LoseReply(zktest.OpExists), p.LoseReply(zktest.OpGetChildren2)
	if _, _, err := conn.Children(root); err != nil {
		t.Fatalf("list while only the exists loss is armed: %v", err)
	}
	if _, _, err := conn.Exists(root); !errors.Is(err, zk.ErrConnectionClosed) {
		t.Fatalf("exists: err = %v, want %v", err, zk.ErrConnectionClosed)
	}
	fired(t, first, "exists")
	notFired(t, second, "list")
	if err := reconnected(func() error { _, _, err := conn.Children(root); return err }); !errors.Is(err, zk.ErrConnectionClosed) {
		t.Fatalf("list: err = %v, want %v", err, zk.ErrConnectionClosed)
	}
	fired(t, second, "list")
	for i, f := range []func() error{
		func() error { _, _, err := conn.Exists(root); return err },
		func() error { _, _, err := conn.Children(root); return err },
	} {
		if err := reconnected(f); err != nil {
			t.Fatalf("request %d after both losses: %v", i, err)
		}
	}
}
