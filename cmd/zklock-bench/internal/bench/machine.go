package bench

import (
	"bufio"
	"bytes"
	"os"
	"runtime"
	"strconv"
	"strings"
)

// Machine describes the machine a report was measured on, as the system
// tells it (Linux's /proc; empty fields elsewhere).
type Machine struct {
	CPU       string  `json:"cpu,omitempty"` // the processor's model name
	Cores     int     `json:"cores"`         // logical CPUs (runtime.NumCPU)
	MemoryGiB float64 `json:"memory_gib,omitempty"`
	Kernel    string  `json:"kernel,omitempty"`
	// LoadMin and LoadMax are the least and greatest 1-minute load
	// averages read before each round and at the end of the run: the
	// other work on the machine, the run's own included (the servers, the
	// peers and this process make about 1 to 2 of it).
	LoadMin float64 `json:"load_min"`
	LoadMax float64 `json:"load_max"`
	// LoadStart and LoadEnd are the 1-, 5- and 15-minute load averages, as
	// uptime shows them, when the run started and when it ended; nil when
	// the system does not tell.
	LoadStart []float64 `json:"load_start,omitempty"`
	LoadEnd   []float64 `json:"load_end,omitempty"`
}

// thisMachine returns what the system says about this machine, with the
// load averages now as LoadStart; the others are left for the run to fill
// in.
func thisMachine() Machine {
	m := Machine{Cores: runtime.NumCPU(), LoadMin: -1, LoadMax: -1, LoadStart: loadAverages()}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		m.CPU = cpuModel(b)
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		if kib := procField(b, "MemTotal"); kib > 0 {
			m.MemoryGiB = float64(kib) / (1 << 20)
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(b))
	}
	return m
}

// cpuModel returns the first "model name" of a /proc/cpuinfo.
func cpuModel(cpuinfo []byte) string {
	sc := bufio.NewScanner(bytes.NewReader(cpuinfo))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// noteLoad widens the machine's load range by the 1-minute load average
// now, if the system tells it.
func (m *Machine) noteLoad() {
	l := loadAverages()
	if len(l) == 0 {
		return
	}
	if m.LoadMin < 0 || l[0] < m.LoadMin {
		m.LoadMin = l[0]
	}
	if l[0] > m.LoadMax {
		m.LoadMax = l[0]
	}
}

// loadAverages returns the 1-, 5- and 15-minute load averages of
// /proc/loadavg, or nil.
func loadAverages() []float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return nil
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return nil
	}
	out := make([]float64, 3)
	for i := range out {
		if out[i], err = strconv.ParseFloat(f[i], 64); err != nil {
			return nil
		}
	}
	return out
}
