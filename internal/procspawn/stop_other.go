//go:build !unix

package procspawn

import (
	"os/exec"
	"syscall"
	"time"
)

// Stop kills the child at once (no signals here) and waits until done is
// closed.
func Stop(cmd *exec.Cmd, done <-chan struct{}, sig syscall.Signal, grace time.Duration) (killed bool, err error) {
	select {
	case <-done:
		return false, nil
	default:
	}
	err = cmd.Process.Kill()
	<-done
	return true, err
}
