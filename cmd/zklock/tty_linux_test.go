package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"github.com/zklockkit/zklockkit/internal/zkenv"
	"github.com/zklockkit/zklockkit/zktest"
)

// openPTY opens a pseudo-terminal pair.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("open /dev/ptmx: %v", err)
	}
	var n uint32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, m.Fd(), syscall.TIOCGPTN, uintptr(unsafe.Pointer(&n))); e != 0 {
		t.Fatalf("TIOCGPTN: %v", e)
	}
	var unlock int32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, m.Fd(), syscall.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); e != 0 {
		t.Fatalf("TIOCSPTLCK: %v", e)
	}
	s, err := os.OpenFile("/dev/pts/"+strconv.Itoa(int(n)), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close(); m.Close() })
	return m, s
}

// TestWatchTerminal: on a terminal, watch clears the screen and draws the
// show table.
func TestWatchTerminal(t *testing.T) {
	root := zktest.UniqueRoot(t)
	lease := holdWithWaiters(t, root, "tty/job", "on-screen")
	master, slave := openPTY(t)
	out := &syncBuffer{}
	go func() { _, _ = copyAll(out, master) }()
	cmd := exec.Command(bin, "watch", "--root", root, "--interval", "200ms", "--for", "2s", "tty/job")
	cmd.Env = append(os.Environ(), zkenv.EnvServers+"="+zkAddr)
	cmd.Stdin, cmd.Stdout = slave, slave
	errb := &syncBuffer{}
	cmd.Stderr = errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if code := exitOf(t, cmd); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	eventually(t, "the table on the terminal", func() bool {
		return strings.Contains(out.String(), "POS") && strings.Contains(out.String(), "on-screen")
	})
	s := out.String()
	if n := strings.Count(s, "\x1b[H\x1b[2J"); n < 2 {
		t.Errorf("screen cleared %d times in 2s at a 200ms interval; output %q", n, s)
	}
	if !strings.Contains(s, "zklock watch tty/job") || !strings.Contains(s, strconv.FormatInt(lease.Token(), 10)) {
		t.Errorf("output %q", s)
	}
}

// TestRunTerminal: with stdin on a terminal CMD stays in zklock's process
// group and still gets the signals sent to zklock (except those the
// terminal delivers itself).
func TestRunTerminal(t *testing.T) {
	root := zktest.UniqueRoot(t)
	_, slave := openPTY(t)
	f := filepath.Join(t.TempDir(), "signals")
	cmd := exec.Command(bin, "run", "--root", root, "--resource", "tty/run", "--", "sh", "-c", "echo pid $$ >> \"$1\"\n"+sleeper, "sh", f)
	cmd.Env = append(os.Environ(), zkenv.EnvServers+"="+zkAddr)
	cmd.Stdin = slave
	errb := &syncBuffer{}
	cmd.Stderr = errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	eventually(t, "CMD to start", func() bool { return fileHas(f, "ready") })
	if pid, pgrp := cmdGroup(t, f); pgrp != pgrpOf(t, cmd.Process.Pid) {
		t.Errorf("CMD (pid %d) is in process group %d, want zklock's (%d)", pid, pgrp, pgrpOf(t, cmd.Process.Pid))
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := exitOf(t, cmd); code != 7 {
		t.Errorf("exit %d, stderr %q; want CMD's 7", code, errb.String())
	}
	if !fileHas(f, "TERM") {
		t.Error("CMD did not get SIGTERM")
	}
}

func copyAll(dst *syncBuffer, src *os.File) (int64, error) {
	buf := make([]byte, 4096)
	var n int64
	for {
		k, err := src.Read(buf)
		if k > 0 {
			dst.Write(buf[:k])
			n += int64(k)
		}
		if err != nil {
			return n, err
		}
	}
}
