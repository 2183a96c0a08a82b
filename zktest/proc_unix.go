//go:build unix && !linux

package zktest

import (
	"os/exec"
	"syscall"
)

func startProcess(cmd *exec.Cmd) error {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return cmd.Start()
}
