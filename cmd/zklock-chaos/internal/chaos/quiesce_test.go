package chaos

import (
	"os/exec"
	"slices"
	"testing"
	"time"
)

// quiesce signals a worker (SIGUSR1) only once it has reported start: a
// worker respawned a moment before has no handler yet, and SIGUSR1's
// default action kills it, which the campaign then reported as a crash
// (5f9d0d3, a CI smoke run). A sleep stands in for a worker that has not
// reported start: SIGUSR1 would kill it too.
func TestQuiesceSignalsOnlyStartedWorkers(t *testing.T) {
	h := startHub(t)
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &proc{id: 7, slot: 1, cmd: cmd, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(p.done) }()
	defer func() { _ = cmd.Process.Kill(); <-p.done }()
	f := &fleet{hub: h, slots: []*slot{{idx: 1, cur: p}}}

	if missing := f.quiesce(300 * time.Millisecond); !slices.Equal(missing, []int{7}) {
		t.Fatalf("quiesce of a worker that has not started: missing %v, want [7]", missing)
	}
	if !p.alive() {
		t.Fatal("quiesce signalled a worker that had not reported start, and killed it")
	}

	// Once it has reported start, it is asked to stop (and the sleep, with
	// no handler, dies of it).
	h.record(Event{Kind: EvStart, Proc: 7, Slot: 1})
	f.quiesce(300 * time.Millisecond)
	select {
	case <-p.done:
	case <-time.After(5 * time.Second):
		t.Fatal("quiesce did not signal a worker that had reported start")
	}
}
