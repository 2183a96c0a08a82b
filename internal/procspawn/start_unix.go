//go:build unix && !linux

package procspawn

import (
	"os/exec"
	"syscall"
)

// Start starts cmd in a process group of its own. parentDeath is not
// available outside Linux: a child may outlive a crashed parent.
func Start(cmd *exec.Cmd, parentDeath syscall.Signal) error {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	return cmd.Start()
}
