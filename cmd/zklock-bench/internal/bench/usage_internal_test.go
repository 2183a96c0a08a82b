package bench

import (
	"os"
	"runtime"
	"testing"
	"time"
)

func TestProcField(t *testing.T) {
	io := []byte("rchar: 6976\nwchar: 0\nsyscr: 10\nsyscw: 42\nread_bytes: 0\n")
	meminfo := []byte("MemTotal:       24616812 kB\nMemFree:        1 kB\n")
	for _, tc := range []struct {
		text, name string
		want       int64
	}{
		{string(io), "syscw", 42},
		{string(io), "syscr", 10},
		{string(io), "wchar", 0},
		{string(io), "cancelled_write_bytes", -1},
		{string(meminfo), "MemTotal", 24616812},
		{"syscw: many\n", "syscw", -1},
		{"syscw:\n", "syscw", -1},
	} {
		if got := procField([]byte(tc.text), tc.name); got != tc.want {
			t.Errorf("procField(%q, %q) = %d, want %d", tc.text, tc.name, got, tc.want)
		}
	}
}

func TestCPUModel(t *testing.T) {
	info := "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC\nprocessor\t: 1\nmodel name\t: AMD EPYC\n"
	if got := cpuModel([]byte(info)); got != "AMD EPYC" {
		t.Errorf("cpuModel = %q", got)
	}
	if got := cpuModel([]byte("processor\t: 0\n")); got != "" {
		t.Errorf("cpuModel without a model name = %q", got)
	}
}

// The process's usage counts its own work: CPU time spent spinning, and
// on Linux the write system calls it makes.
func TestUsage(t *testing.T) {
	before := usageNow()
	deadline := time.Now().Add(5 * time.Second)
	for processCPU()-before.cpu < 20*time.Millisecond && time.Now().Before(deadline) {
	}
	const writes = 50
	for range writes {
		if _, err := devNull.Write([]byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	d := usageNow().sub(before)
	if d.cpu < 20*time.Millisecond {
		t.Errorf("CPU %v after spinning for 20ms of it", d.cpu)
	}
	if runtime.GOOS != "linux" {
		if d.writes != -1 {
			t.Errorf("writes %d where the system cannot count them", d.writes)
		}
		return
	}
	if d.writes < writes {
		t.Errorf("%d write system calls counted, want at least %d", d.writes, writes)
	}
	if (usage{writes: -1}).sub(before).writes != -1 || before.sub(usage{writes: -1}).writes != -1 {
		t.Error("an unknown count is not unknown in a difference")
	}
}

var devNull = func() *os.File {
	f, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		panic(err)
	}
	return f
}()
