package main

import "syscall"

// sysProcAttr puts CMD in its own process group when group is set, and
// has the kernel kill it if zklock dies (so it cannot outlive the session
// that holds its lock by more than the session timeout).
func sysProcAttr(group bool) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: group, Pdeathsig: syscall.SIGKILL}
}
