package zklock_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/zklockkit/zklockkit/zklock"
	"github.com/zklockkit/zklockkit/zktest"
)

// A name that starts with "/" is refused, by every call that takes a
// resource, with an ErrInvalidResource that names RawPath(); with
// RawPath the same string is the znode path itself. Before, "/locks/x"
// silently became the queue <root>/%2Flocks%2Fx, which a Curator service
// locking /locks/x never meets.
func TestIntegration_PathLikeNameNeedsRawPath(t *testing.T) {
	root := zktest.UniqueRoot(t)
	ctx := testCtx(t)
	c := newClient(t, root)
	const name = "/locks/x"
	refused := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, zklock.ErrInvalidResource) || !strings.Contains(err.Error(), "RawPath()") {
			t.Errorf("%s(%q): %v; want ErrInvalidResource naming RawPath()", what, name, err)
		}
	}
	_, err := c.Acquire(ctx, name)
	refused("Acquire", err)
	_, err = c.TryAcquire(ctx, name)
	refused("TryAcquire", err)
	_, err = c.AcquireAll(ctx, []string{"ok", name})
	refused("AcquireAll", err)
	_, err = c.Campaign(ctx, name, nil)
	refused("Campaign", err)
	_, err = c.QueuePath(name)
	refused("QueuePath", err)
	_, err = c.Inspect(ctx, name)
	refused("Inspect", err)
	_, err = zklock.NewMemoryLocker().Acquire(ctx, name)
	refused("MemoryLocker.Acquire", err)
	refused("ValidateResource", zklock.ValidateResource(name))

	l, err := c.Acquire(ctx, root+"/raw/x", zklock.RawPath())
	if err != nil {
		t.Fatalf("Acquire with RawPath: %v", err)
	}
	defer l.Release(ctx)
	if want := root + "/raw/x/"; !strings.HasPrefix(l.Path(), want) {
		t.Errorf("with RawPath the lease's node is %s; want one under %s", l.Path(), want)
	}
	if n := lockNodes(t, c.Conn(), root); len(n) != 1 {
		t.Errorf("lock nodes %v; want only the RawPath lease's", n)
	}
}
