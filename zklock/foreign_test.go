package zklock_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zklockkit/zklockkit/zklock"
	"github.com/zklockkit/zklockkit/zktest"
)

// Fail safe on nodes of other recipes: a queue child with a sequence
// number and a layout zklock does not know counts as an exclusive node in
// sequence order, for an acquire of every mode, a semaphore's too (ZooKeeper's own WriteLock recipe, "x-<sessionId>-<seq>",
// and any other); a child with no sequence number fails the acquire with
// ErrUnknownNode naming it. Never grant a lock past a node you do not
// understand.
func TestIntegration_ForeignNodesExclude(t *testing.T) {
	for _, prefix := range []string{"x-72057594037927936-", "member-", ""} {
		t.Run("prefix="+prefix, func(t *testing.T) {
			root := zktest.UniqueRoot(t)
			ctx := testCtx(t)
			c := newClient(t, root)
			raw := newClient(t, root).Conn()
			queue, err := c.QueuePath("r")
			if err != nil {
				t.Fatal(err)
			}
			mkdirs(t, raw, queue)
			// Another recipe's holder: an ephemeral sequential node.
			foreign, err := raw.Create(queue+"/"+prefix, nil, zk.FlagEphemeralSequential, zk.WorldACL(zk.PermAll))
			if err != nil {
				t.Fatal(err)
			}
			for _, mode := range [][]zklock.AcquireOption{nil, {zklock.Read}, {zklock.Write}, {zklock.Limit(2)}} {
				if _, err := c.TryAcquire(ctx, "r", mode...); !errors.Is(err, zklock.ErrLocked) {
					t.Fatalf("TryAcquire%v behind %s = %v; want ErrLocked", mode, foreign, err)
				}
			}
			got := make(chan error, 1)
			go func() {
				l, err := c.Acquire(ctx, "r")
				if err == nil {
					err = l.Release(ctx)
				}
				got <- err
			}()
			select {
			case err := <-got:
				t.Fatalf("Acquire behind %s returned %v while it was there", foreign, err)
			case <-time.After(300 * time.Millisecond):
			}
			if err := raw.Delete(foreign, -1); err != nil {
				t.Fatal(err)
			}
			if err := <-got; err != nil {
				t.Fatalf("Acquire once %s left: %v", foreign, err)
			}
		})
	}
}

func TestIntegration_UnorderableNodeFailsTheAcquire(t *testing.T) {
	root := zktest.UniqueRoot(t)
	ctx := testCtx(t)
	c := newClient(t, root)
	raw := newClient(t, root).Conn()
	queue, err := c.QueuePath("r")
	if err != nil {
		t.Fatal(err)
	}
	mkdirs(t, raw, queue)
	odd := queue + "/lease_holder"
	if _, err := raw.Create(odd, nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	for _, try := range []bool{true, false} {
		var err error
		if try {
			_, err = c.TryAcquire(ctx, "r")
		} else {
			_, err = c.Acquire(ctx, "r")
		}
		if !errors.Is(err, zklock.ErrUnknownNode) || !strings.Contains(err.Error(), odd) {
			t.Fatalf("acquire (try %v) next to %s = %v; want ErrUnknownNode naming it", try, odd, err)
		}
	}
	eventually(t, "the failed acquires' nodes deleted", func() bool {
		kids, _, err := raw.Children(queue)
		return err == nil && len(kids) == 1 && kids[0] == "lease_holder"
	})
}

// mkdirs creates path and its ancestors as persistent nodes.
func mkdirs(t *testing.T, conn *zk.Conn, path string) {
	t.Helper()
	p := ""
	for _, part := range strings.Split(path[1:], "/") {
		p += "/" + part
		if _, err := conn.Create(p, nil, 0, zk.WorldACL(zk.PermAll)); err != nil && !errors.Is(err, zk.ErrNodeExists) {
			t.Fatal(err)
		}
	}
}
