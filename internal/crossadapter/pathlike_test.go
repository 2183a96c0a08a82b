package crossadapter_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/zklockkit/zklockkit/internal/crossadapter"
	"github.com/zklockkit/zklockkit/zklock"
	"github.com/zklockkit/zklockkit/zktest"
)

// A resource name that starts with "/" looks like a znode path; it is not
// one (a Curator service locking /locks/x would never meet it), so the
// core refuses it with an error that names RawPath, and every front end
// answers with that reason instead of locking /zklock/%2Flocks%2Fx (a
// front end's error names its template, not the value, which may be a
// secret).
func TestIntegration_PathLikeNameRefusedEverywhere(t *testing.T) {
	c := connect(t, zktest.UniqueRoot(t))
	want := zklock.ValidateResource("/locks/x")
	if want == nil || !strings.Contains(want.Error(), "RawPath()") {
		t.Fatalf("the core's error for /locks/x is %v; want one that names RawPath()", want)
	}
	for _, fe := range frontEnds(t, c, "/locks/{id}", crossadapter.LockedTouchPath) {
		reason := want.(*zklock.ResourceError).Reason
		if got := fe.lock(t, "x"); !strings.Contains(got.err, "invalid resource") || !strings.Contains(got.err, reason) || got.queue != "" {
			t.Errorf("%s: %+v; want the core's reason %q", fe.name, got, reason)
		}
	}
	if ls := c.Locks(); len(ls) != 0 {
		t.Errorf("lock nodes left: %v", ls)
	}
}

// connect connects a client to the shared server under root, closed at
// the end of the test.
func connect(t *testing.T, root string) *zklock.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := zklock.Connect(ctx, []string{zktest.Shared().Addr()}, zklock.WithRoot(root))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}
