//go:build !linux

package main

import "syscall"

// sysProcAttr puts CMD in its own process group when group is set.
func sysProcAttr(group bool) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: group}
}
