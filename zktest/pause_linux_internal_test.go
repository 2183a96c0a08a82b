package zktest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// threadStates returns the state letter of every thread of pid (from
// /proc/PID/task/*/stat), by thread id.
func threadStates(t *testing.T, pid int) map[string]byte {
	t.Helper()
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/stat", pid))
	if err != nil || len(tasks) == 0 {
		t.Fatalf("no threads of pid %d in /proc: %v", pid, err)
	}
	states := map[string]byte{}
	for _, task := range tasks {
		b, err := os.ReadFile(task)
		if err != nil {
			continue // the thread ended
		}
		s := string(b)
		if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
			states[filepath.Base(filepath.Dir(task))] = s[i+2]
		}
	}
	return states
}

// Pause returns only once every thread of the JVM is stopped. SIGSTOP
// reaches running threads asynchronously, and a loaded CI machine let a
// paused server answer a request sent right after Pause returned
// (68a9ad6). Read from /proc the moment Pause returns, over several
// pauses: no thread may still be running or sleeping.
func TestPauseReturnsWithEveryThreadStopped(t *testing.T) {
	s, err := StartServer()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i := range 10 {
		if err := s.Pause(); err != nil {
			t.Fatal(err)
		}
		states := threadStates(t, s.running().cmd.Process.Pid)
		for tid, st := range states {
			if st != 'T' && st != 't' {
				t.Errorf("pause %d: Pause returned while thread %s of %d is in state %c", i, tid, len(states), st)
			}
		}
		if err := s.Resume(); err != nil {
			t.Fatal(err)
		}
		if t.Failed() {
			return
		}
	}
}
