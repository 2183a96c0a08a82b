package pgtest

import (
	"os/exec"
	"runtime"
	"sync"
	"syscall"
)

// On Linux the server gets SIGQUIT (immediate shutdown: it stops its
// backends and exits) when the thread that started it dies, so a crashed
// or timed-out test binary leaves no server behind. Go may end threads, so
// every server is started from one goroutine locked to its thread for the
// life of the process.

type spawnJob struct {
	cmd  *exec.Cmd
	errc chan error
}

var (
	spawnOnce sync.Once
	spawnJobs = make(chan spawnJob)
)

func startServer(cmd *exec.Cmd) error {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	cmd.SysProcAttr.Pdeathsig = syscall.SIGQUIT
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
