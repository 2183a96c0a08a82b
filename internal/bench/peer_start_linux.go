package bench

import (
	"os/exec"
	"runtime"
	"sync"
	"syscall"
)

// On Linux a peer process gets SIGKILL when the thread that started it
// dies, so a bench killed or timed out leaves no JVM or Python behind. Go
// may end threads, so every peer is started from one goroutine locked to
// its thread for the life of the process.

type peerSpawn struct {
	cmd  *exec.Cmd
	errc chan error
}

var (
	peerSpawnOnce sync.Once
	peerSpawns    = make(chan peerSpawn)
)

func startPeerProcess(cmd *exec.Cmd) error {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	peerSpawnOnce.Do(func() {
		go func() {
			runtime.LockOSThread() // never unlocked: the thread must live on
			for job := range peerSpawns {
				job.errc <- job.cmd.Start()
			}
		}()
	})
	job := peerSpawn{cmd: cmd, errc: make(chan error, 1)}
	peerSpawns <- job
	return <-job.errc
}
