package bench

import (
	"bytes"
	"os"
	"strconv"
	"time"
)

// usage is what this process has used so far: its CPU time and its write
// system calls. Differences of two usages measure a span of a run.
//
// CPU is user plus system time of every thread of the process
// (getrusage(RUSAGE_SELF)): the ZooKeeper servers and the peers are
// processes of their own and are not in it. Writes is the process's count
// of write system calls (syscw in /proc/self/io: write, writev, pwrite and
// their kind, on any file), -1 where the system does not say. The sockets
// of the sessions are most of it; the Go runtime's writes to the eventfd
// that wakes its network poller are the rest (the package documentation
// says how many).
type usage struct {
	cpu    time.Duration
	writes int64
}

// sub returns u - v.
func (u usage) sub(v usage) usage {
	d := usage{cpu: u.cpu - v.cpu, writes: -1}
	if u.writes >= 0 && v.writes >= 0 {
		d.writes = u.writes - v.writes
	}
	return d
}

// usageNow returns the process's usage so far.
func usageNow() usage {
	return usage{cpu: processCPU(), writes: writeCalls()}
}

// writeCalls returns the process's write system calls so far (syscw in
// /proc/self/io), or -1 where there is no such file. Reading it is three
// system calls, none of them a write.
func writeCalls() int64 {
	b, err := os.ReadFile("/proc/self/io")
	if err != nil {
		return -1
	}
	return procField(b, "syscw")
}

// procField returns the number that field name has in the text of a
// /proc file of "name: value [unit]" lines (/proc/PID/io,
// /proc/meminfo), or -1 when it is missing.
func procField(b []byte, name string) int64 {
	for line := range bytes.Lines(b) {
		k, v, ok := bytes.Cut(line, []byte(":"))
		if !ok || string(bytes.TrimSpace(k)) != name {
			continue
		}
		f := bytes.Fields(v)
		if len(f) == 0 {
			return -1
		}
		n, err := strconv.ParseInt(string(f[0]), 10, 64)
		if err != nil {
			return -1
		}
		return n
	}
	return -1
}
