package procspawn_test

import (
	"os/exec"
	"syscall"
	"testing"

	"github.com/zklockkit/zklockkit/internal/procspawn"
)

// A child started through Start runs in a process group of its own, with
// the signal it gets when its parent dies set.
func TestStart(t *testing.T) {
	cmd := exec.Command("sleep", "5")
	cmd.SysProcAttr = &syscall.SysProcAttr{Foreground: false, Pgid: 0}
	if err := procspawn.Start(cmd, syscall.SIGQUIT); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	pgid, err := syscall.Getpgid(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	if pgid != cmd.Process.Pid {
		t.Errorf("process group %d, want its own (%d)", pgid, cmd.Process.Pid)
	}
	if cmd.SysProcAttr.Pdeathsig != syscall.SIGQUIT {
		t.Errorf("Pdeathsig %v, want SIGQUIT", cmd.SysProcAttr.Pdeathsig)
	}
}
