package zktest

import (
	"os/exec"
	"runtime"
	"sync"
	"syscall"
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
