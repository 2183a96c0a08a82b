package chaos

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/zklockkit/zklockkit/zktest"
)

// stopsOf is a member's stop log as a test writes it.
type stopsOf []zktest.Stop

func (s stopsOf) Stops(min time.Duration) ([]zktest.Stop, error) {
	var out []zktest.Stop
	for _, st := range s {
		if st.End.Sub(st.Start) >= min {
			out = append(out, st)
		}
	}
	return out, nil
}

// The campaign records each member's JVM stops of stallMin or more, named
// by member, with their cause.
func TestRecordServerStops(t *testing.T) {
	h := startHub(t)
	t0 := time.Now()
	gc := func(from, ms int) zktest.Stop {
		return zktest.Stop{Start: t0.Add(time.Duration(from) * time.Millisecond), End: t0.Add(time.Duration(from+ms) * time.Millisecond), Cause: "GenCollectForAllocation"}
	}
	recordServerStops(h, []stopsOf{{gc(0, 150), gc(1000, 480)}, nil, {gc(2000, 200)}})
	var got []string
	for _, e := range h.history() {
		if e.Kind == EvServerStop {
			got = append(got, fmt.Sprintf("zk%d %d+%d %s", e.Server, (e.T-t0.UnixNano())/1e6, (e.End-e.T)/1e6, e.Detail))
		}
	}
	want := []string{"zk1 1000+480 GenCollectForAllocation", "zk3 2000+200 GenCollectForAllocation"}
	if !slices.Equal(got, want) {
		t.Fatalf("recorded %q, want %q", got, want)
	}
}
