package procspawn

import (
	"os/exec"
	"runtime"
	"sync"
	"syscall"
)

type job struct {
	cmd  *exec.Cmd
	errc chan error
}

var (
	once sync.Once
	jobs = make(chan job)
)

// Start starts cmd in a process group of its own, from the one thread that
// lives as long as the process, with parentDeath as the signal it gets
// when that thread (so the process) dies. It keeps cmd's other process
// attributes.
func Start(cmd *exec.Cmd, parentDeath syscall.Signal) error {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	cmd.SysProcAttr.Pdeathsig = parentDeath
	once.Do(func() {
		go func() {
			runtime.LockOSThread() // never unlocked: the thread must live on
			for j := range jobs {
				j.errc <- j.cmd.Start()
			}
		}()
	})
	j := job{cmd: cmd, errc: make(chan error, 1)}
	jobs <- j
	return <-j.errc
}
