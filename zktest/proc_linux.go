package zktest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// waitStopped waits until every thread of pid is stopped (state T in
// /proc), so that a paused server really answers nothing from the moment
// Pause returns: SIGSTOP reaches running threads asynchronously. It
// reports false if they were not all stopped within timeout.
func waitStopped(pid int, timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/stat", pid))
		if err != nil || len(tasks) == 0 {
			return true // the process is gone
		}
		all := true
		for _, t := range tasks {
			b, err := os.ReadFile(t)
			if err != nil {
				continue // thread gone
			}
			// "pid (comm) S ...": the state follows the last ')'.
			s := string(b)
			if i := strings.LastIndexByte(s, ')'); i < 0 || i+2 >= len(s) || (s[i+2] != 'T' && s[i+2] != 't') {
				all = false
				break
			}
		}
		if all {
			return true
		}
		time.Sleep(time.Millisecond)
	}
	return false
}
