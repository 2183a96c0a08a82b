package zktest

import (
	"syscall"
	"testing"
	"time"
)

func TestParseStop(t *testing.T) {
	st, ok, err := parseStop(`[2026-11-28T04:21:14.243+0000] Safepoint "GenCollectForAllocation", Time since last: 28990050 ns, Reaching safepoint: 5281 ns, Cleanup: 24807 ns, At safepoint: 28774621 ns, Total: 28804709 ns`)
	if err != nil || !ok {
		t.Fatalf("parseStop: %v, %v", ok, err)
	}
	want := time.Date(2026, 11, 28, 4, 21, 14, 243e6, time.UTC)
	if !st.End.Equal(want) || st.End.Sub(st.Start) != 28804709*time.Nanosecond || st.Cause != "GenCollectForAllocation" {
		t.Fatalf("parseStop = %+v", st)
	}
	for _, line := range []string{"", "[2026-11-28T04:21:14.243+0000] Safepoint \"Cleanup\", Time since last: 1 ns, Reach", "garbage"} {
		if _, ok, err := parseStop(line); ok || err != nil {
			t.Errorf("parseStop(%q) = %v, %v; want not a stop, no error", line, ok, err)
		}
	}
	if _, _, err := parseStop(`[yesterday] Safepoint "X", Total: 5 ns`); err == nil {
		t.Error("a bad time parsed")
	}
}

// A JVM stopped by a thread dump (SIGQUIT: a safepoint) shows in Stops,
// with its cause and a start and end inside the test.
func TestServerStops(t *testing.T) {
	s, err := StartServer()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	before := time.Now().Add(-time.Millisecond) // the log's clock has milliseconds
	if err := s.running().cmd.Process.Signal(syscall.SIGQUIT); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		stops, err := s.Stops(0)
		if err != nil {
			t.Fatal(err)
		}
		for _, st := range stops {
			if st.Cause == "PrintThreads" && !st.End.Before(before) && !st.End.After(time.Now()) && st.Start.Before(st.End) {
				t.Logf("%d stops; the thread dump's: %+v", len(stops), st)
				if long, _ := s.Stops(time.Hour); len(long) != 0 {
					t.Fatalf("stops of an hour or more: %+v", long)
				}
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no thread dump's stop after SIGQUIT in %+v", stops)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
