package zktest

import (
	"runtime"
	"testing"
)

func TestFreePortsBelowEphemeralRange(t *testing.T) {
	lo, hi := fixedPortRange()
	if hi == 0 {
		if runtime.GOOS == "linux" {
			t.Fatal("cannot read /proc/sys/net/ipv4/ip_local_port_range")
		}
		t.Skipf("no ephemeral port range known on %s: freePorts uses port 0", runtime.GOOS)
	}
	ports, err := freePorts(6)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for _, p := range ports {
		if p < lo || p >= hi {
			t.Errorf("port %d outside [%d, %d), below the ephemeral range", p, lo, hi)
		}
		if seen[p] {
			t.Errorf("port %d returned twice", p)
		}
		seen[p] = true
	}
}
