package main

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/go-zookeeper/zk"
	"github.com/zklockkit/zklockkit/zklock"
	"github.com/zklockkit/zklockkit/zktest"
)

// TestErrText: the command names itself once, whether the core's errors
// carry their "zklock: " prefix at the start, inside a wrapped error, or
// not at all; a quoted resource name is printed as it is.
func TestErrText(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{fmt.Errorf("zklock: acquire %q: %w", "accounts/43", zklock.ErrLocked), `acquire "accounts/43": resource is locked`},
		{fmt.Errorf("acquire %q: %w", "accounts/43", errors.New("resource is locked")), `acquire "accounts/43": resource is locked`},
		{fmt.Errorf("zklock: acquire %q: %w", `a: zklock: b "c"`, zklock.ErrNoAuth), `acquire "a: zklock: b \"c\"": not authorized`},
		{fmt.Errorf("%w: %w", zklock.ErrUnavailable, errors.New("zk: could not connect to a server")), "zookeeper unavailable: zk: could not connect to a server"},
		{errors.New("zklock: zklock: twice"), "twice"},
		{errors.New("a zklock: in the middle of words stays"), "a zklock: in the middle of words stays"},
		{errors.New("first line\nzklock: second line"), "first line; zklock: second line"},
		{&zklock.LostError{Resource: "r", Reason: zklock.LossNodeDeleted}, `lease on "r" lost: node_deleted`},
	} {
		if got := errText(tc.err); got != tc.want {
			t.Errorf("errText(%q) = %q, want %q", tc.err, got, tc.want)
		}
	}
}

// TestErrorNamesTheProgramOnce: an error of the core that wraps another
// of the core (here: acquire, not authorized) reaches stderr with the
// program named once.
func TestErrorNamesTheProgramOnce(t *testing.T) {
	root := zktest.UniqueRoot(t)
	// The root (and /zktest above it) made first, open to all: only the
	// queue below is billing's, not what other tests share.
	conn := client(t, root).Conn()
	for _, p := range []string{"/zktest", root} {
		if _, err := conn.Create(p, nil, 0, zk.WorldACL(zk.PermAll)); err != nil && !errors.Is(err, zk.ErrNodeExists) {
			t.Fatal(err)
		}
	}
	owner := client(t, root, zklock.WithDigestAuth("billing", "s3cret"))
	lease, err := owner.Acquire(context.Background(), "acl/job") // its queue: only billing may create in it
	if err != nil {
		t.Fatal(err)
	}
	defer lease.Release(context.Background())
	r := zkl(t, nil, "run", "--root", root, "--try", "acl/job", "--", "true")
	const want = "zklock run: acquire \"acl/job\": not authorized: zk: not authenticated\n"
	if r.code != ExitError || r.stderr != want {
		t.Errorf("exit %d, stderr %q; want exit %d and %q", r.code, r.stderr, ExitError, want)
	}
}
