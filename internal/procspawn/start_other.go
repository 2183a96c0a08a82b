//go:build !unix

package procspawn

import (
	"os/exec"
	"syscall"
)

// Start starts cmd. parentDeath is not available here: a child may outlive
// a crashed parent.
func Start(cmd *exec.Cmd, parentDeath syscall.Signal) error { return cmd.Start() }
