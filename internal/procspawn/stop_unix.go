//go:build unix

package procspawn

import (
	"os/exec"
	"syscall"
	"time"
)

// Stop asks a child started by Start to stop with sig and waits until done
// is closed (its reaper closes it once the child has exited). Past grace it
// kills the child's whole process group, waits for done, and reports that
// it had to. A child that has already exited is left alone.
func Stop(cmd *exec.Cmd, done <-chan struct{}, sig syscall.Signal, grace time.Duration) (killed bool, err error) {
	select {
	case <-done:
		return false, nil
	default:
	}
	if err := cmd.Process.Signal(sig); err != nil {
		return false, err
	}
	select {
	case <-done:
		return false, nil
	case <-time.After(grace):
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
		return true, nil
	}
}
