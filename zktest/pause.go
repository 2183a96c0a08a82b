package zktest

import (
	"fmt"
	"os"
	"syscall"
	"time"
)

// PauseProcess stops p with SIGSTOP, as a long garbage-collection pause
// or a descheduled VM would, and returns once every thread of p is
// stopped (on Linux; elsewhere at once), so that p does nothing more
// from then on: SIGSTOP reaches running threads asynchronously. It is
// how a test pauses a lock holder it runs as a child process; Server.Pause
// pauses a server the same way. ResumeProcess lets it go on.
func PauseProcess(p *os.Process) error {
	if err := p.Signal(syscall.SIGSTOP); err != nil {
		return fmt.Errorf("zktest: pausing process %d: %w", p.Pid, err)
	}
	if !waitStopped(p.Pid, 10*time.Second) {
		return fmt.Errorf("zktest: process %d was sent SIGSTOP but not every thread stopped within 10s", p.Pid)
	}
	return nil
}

// ResumeProcess continues a process paused by PauseProcess (SIGCONT).
func ResumeProcess(p *os.Process) error {
	if err := p.Signal(syscall.SIGCONT); err != nil {
		return fmt.Errorf("zktest: resuming process %d: %w", p.Pid, err)
	}
	return nil
}
