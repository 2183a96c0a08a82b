package zktest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"
)

// On Linux the JVM gets SIGKILL when the thread that started it dies, so a
// crashed or timed-out test binary leaves no server behind. Go may end
// threads, so all JVMs are started from one goroutine locked to its thread
// for the life of the process.

type spawnJob struct {
	cmd  *exec.Cmd
	errc chan error
}

var (
	spawnOnce sync.Once
	spawnJobs = make(chan spawnJob)
)

func startProcess(cmd *exec.Cmd) error {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	spawnOnce.Do(func() {
		go func() {
			runtime.LockOSThread() // never unlocked: the thread must live on
			for job := range spawnJobs {
				job.errc <- job.cmd.Start()
			}
		}()
	})
	job := spawnJob{cmd: cmd, errc: make(chan error, 1)}
	spawnJobs <- job
	return <-job.errc
}

// waitStopped waits until every thread of pid is stopped (state T in
// /proc), so that a paused server really answers nothing from the moment
// Pause returns: SIGSTOP reaches running threads asynchronously.
func waitStopped(pid int, timeout time.Duration) {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/stat", pid))
		if err != nil || len(tasks) == 0 {
			return
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
			return
		}
		time.Sleep(time.Millisecond)
	}
}
