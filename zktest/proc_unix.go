//go:build unix && !linux

package zktest

import (
	"os/exec"
	"syscall"
	"time"
)

func startProcess(cmd *exec.Cmd) error {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return cmd.Start()
}

// waitStopped is a no-op where /proc is not available.
func waitStopped(pid int, timeout time.Duration) {}
