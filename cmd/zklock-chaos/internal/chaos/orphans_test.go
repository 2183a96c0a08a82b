package chaos

import (
	"testing"
	"time"
)

// The orphan check finds a lock node that outlives the run while its
// session lives, names the worker that owns it, and finds nothing once the
// node is gone or when the root was never made.
func TestIntegration_FindOrphans(t *testing.T) {
	s := startServer(t)
	conn, node := makeLockNode(t, s.Addr())
	got := findOrphans([]string{s.Addr()}, "/root", map[int]int64{7: conn.SessionID()}, 500*time.Millisecond)
	if len(got) != 1 || got[0].Target != node || got[0].Proc != 7 || got[0].Kind != EvOrphan {
		t.Fatalf("orphans: %+v, want %s of proc 7", got, node)
	}
	if err := conn.Delete(node, -1); err != nil {
		t.Fatal(err)
	}
	if got := findOrphans([]string{s.Addr()}, "/root", nil, time.Second); len(got) != 0 {
		t.Fatalf("orphans after delete: %+v", got)
	}
	if got := findOrphans([]string{s.Addr()}, "/never-made", nil, time.Second); len(got) != 0 {
		t.Fatalf("orphans of a missing root: %+v", got)
	}
}
