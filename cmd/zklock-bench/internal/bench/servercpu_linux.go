package bench

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// clockTicks is the unit of utime and stime in /proc/PID/stat
// (sysconf(_SC_CLK_TCK)), 100 on every Linux the project runs on (USER_HZ
// is fixed at 100 on x86 and arm64).
const clockTicks = 100

// serverPIDs returns the processes listening on addrs, in their order: the
// ZooKeeper servers of a run on this machine. nil when any address is not
// a local TCP listener this process can see (a remote server): the report
// then has no server CPU figures.
func serverPIDs(addrs []string) []int {
	inodes := make(map[string]int, len(addrs)) // socket inode -> index in addrs
	for i, a := range addrs {
		ino := listenInode(a)
		if ino == "" {
			return nil
		}
		inodes[ino] = i
	}
	pids := make([]int, len(addrs))
	found := 0
	fds, _ := filepath.Glob("/proc/[0-9]*/fd/*")
	for _, fd := range fds {
		l, err := os.Readlink(fd)
		if err != nil || !strings.HasPrefix(l, "socket:[") {
			continue
		}
		i, ok := inodes[strings.TrimSuffix(strings.TrimPrefix(l, "socket:["), "]")]
		if !ok || pids[i] != 0 {
			continue
		}
		pid, err := strconv.Atoi(strings.Split(fd, "/")[2])
		if err != nil {
			continue
		}
		pids[i] = pid
		if found++; found == len(addrs) {
			return pids
		}
	}
	return nil
}

// listenInode returns the inode of the listening TCP socket on addr
// (host:port, a loopback or local address), "" if there is none.
func listenInode(addr string) string {
	_, p, err := net.SplitHostPort(addr)
	if err != nil {
		return ""
	}
	port, err := strconv.Atoi(p)
	if err != nil {
		return ""
	}
	want := fmt.Sprintf(":%04X", port)
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(bytes.NewReader(b))
		sc.Scan() // the header
		for sc.Scan() {
			// sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
			fs := strings.Fields(sc.Text())
			if len(fs) < 10 || fs[3] != "0A" || !strings.HasSuffix(fs[1], want) {
				continue // not LISTEN on the port
			}
			return fs[9]
		}
	}
	return ""
}

// processCPUOf returns the user and system time process pid has used so
// far, -1 when it cannot be read (the process is gone).
func processCPUOf(pid int) time.Duration {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return -1
	}
	// "pid (comm) state ppid ...": utime and stime are the 14th and 15th
	// fields, the 12th and 13th after the ')' that ends comm.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return -1
	}
	fs := strings.Fields(string(b[i+1:]))
	if len(fs) < 13 {
		return -1
	}
	u, err1 := strconv.ParseInt(fs[11], 10, 64)
	s, err2 := strconv.ParseInt(fs[12], 10, 64)
	if err1 != nil || err2 != nil {
		return -1
	}
	return time.Duration(u+s) * time.Second / clockTicks
}
