package pgtest_test

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zklockkit/zklockkit/internal/pgtest"
)

const childEnv = "PGTEST_ORPHAN_CHILD"

func TestMain(m *testing.M) {
	if _, ok := os.LookupEnv(childEnv); ok {
		c, err := pgtest.Start()
		if err != nil {
			fmt.Println("ERROR", err)
			os.Exit(1)
		}
		fmt.Println(c.PID(), c.Dir())
		select {} // until killed
	}
	os.Exit(m.Run())
}

// A process that started a cluster and dies without closing it (SIGKILL)
// leaves no server behind: the postmaster gets its parent-death signal
// and shuts down.
func TestNoServerOutlivesItsStarter(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self, "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var pid int
	var dir string
	if _, err := fmt.Fscan(bufio.NewReader(out), &pid, &dir); err != nil {
		cmd.Process.Kill()
		t.Fatalf("child: %v", err)
	}
	defer os.RemoveAll(dir)
	if err := syscall.Kill(pid, 0); err != nil {
		t.Fatalf("postmaster %d not running: %v", pid, err)
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	deadline := time.Now().Add(15 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			syscall.Kill(-pid, syscall.SIGKILL)
			t.Fatalf("postmaster %d still running 15s after its starter died", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// alive reports whether pid runs (a zombie does not).
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}
