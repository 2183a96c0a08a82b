package bench

import (
	"net"
	"os"
	"testing"
	"time"
)

// serverPIDs finds the process listening on an address through /proc:
// here, this test's own listener.
func TestServerPIDsFindsTheListener(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	pids := serverPIDs([]string{ln.Addr().String()})
	if len(pids) != 1 || pids[0] != os.Getpid() {
		t.Fatalf("serverPIDs(%s) = %v, want [%d]", ln.Addr(), pids, os.Getpid())
	}
	// An address nobody listens on: no figures rather than wrong ones.
	free, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := free.Addr().String()
	free.Close()
	if got := serverPIDs([]string{ln.Addr().String(), addr}); got != nil {
		t.Fatalf("serverPIDs with %s not listening = %v, want nil", addr, got)
	}
}

// processCPUOf reads a process's CPU time, in the clock ticks of
// /proc/PID/stat, and agrees with getrusage on this process to a few ticks.
func TestProcessCPUOfAgreesWithRusage(t *testing.T) {
	for end := time.Now().Add(200 * time.Millisecond); time.Now().Before(end); {
	}
	got, want := processCPUOf(os.Getpid()), processCPU()
	if got <= 0 {
		t.Fatalf("processCPUOf(self) = %v", got)
	}
	if d := want - got; d < -50*time.Millisecond || d > 50*time.Millisecond {
		t.Fatalf("processCPUOf(self) = %v, getrusage %v: more than 5 ticks apart", got, want)
	}
	if got := processCPUOf(1 << 30); got != -1 {
		t.Fatalf("processCPUOf(no such process) = %v, want -1", got)
	}
}
