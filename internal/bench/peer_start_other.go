//go:build !linux

package bench

import "os/exec"

func startPeerProcess(cmd *exec.Cmd) error { return cmd.Start() }
