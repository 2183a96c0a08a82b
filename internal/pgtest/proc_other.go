//go:build unix && !linux

package pgtest

import (
	"os/exec"
	"syscall"
)

func startServer(cmd *exec.Cmd) error {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	return cmd.Start()
}
