package bench_test

import (
	"os"
	"time"

	"github.com/zklockkit/zklockkit/cmd/zklock-bench/internal/bench"
)

// A report with the peers, built by hand here: the table compares zklock
// with Curator and kazoo after its own rows; kazoo failed one run of the
// queue.
func ExampleReport_WriteTable_peers() {
	peer := func(name string, rate, ratio float64, rounds ...float64) bench.PeerResult {
		return bench.PeerResult{Peer: name, Result: bench.SideResult{Rate: rate, P50: ms(1), P99: ms(4)},
			Ratio: ratio, RoundRatios: rounds}
	}
	queue := peer(bench.NameKazoo, 700, 2.5, 2.4, 2.6)
	queue.Result.Errors = []string{"bench: peer failed: kazoo: exited"}
	rep := &bench.Report{
		Servers: []string{"127.0.0.1:2181"}, ZooKeeper: "3.8.0", GoVersion: "go1.26", GOMAXPROCS: 2, Rounds: 2,
		Elapsed: bench.Duration(time.Minute),
		Peers: []bench.PeerInfo{
			{Name: bench.NameCurator, Recipe: "InterProcessMutex", Version: "5.4.0", Runtime: "OpenJDK 64-Bit Server VM 17.0.15"},
			{Name: bench.NameKazoo, Recipe: "Lock", Version: "2.8.0", Runtime: "CPython 3.11.2"},
		},
		Scenarios: []bench.ScenarioResult{
			{Name: "uncontended", Unit: "cycles/s", Target: 0.95, Pass: true,
				ZKLock: bench.SideResult{Rate: 1500, P50: ms(0.6), P99: ms(1)}, ZKLib: bench.SideResult{Rate: 1200, P50: ms(0.8), P99: ms(1.2)},
				Ratio: 1.25, RoundRatios: []float64{1.2, 1.3},
				Peers: []bench.PeerResult{peer(bench.NameCurator, 1000, 1.5, 1.4, 1.6), peer(bench.NameKazoo, 750, 2, 1.9, 2.1)}},
			{Name: "queue-1000", Unit: "acquires/s", Target: 1, Pass: true,
				ZKLock: bench.SideResult{Rate: 1750, P50: ms(0.3), P99: ms(4)}, ZKLib: bench.SideResult{Rate: 1400, P50: ms(0.5), P99: ms(4)},
				Ratio: 1.25, RoundRatios: []float64{1.2, 1.3},
				Peers: []bench.PeerResult{peer(bench.NameCurator, 700, 2.5, 2.4, 2.6), queue}},
			{Name: "distinct-1000", Unit: "locks/s", Target: 1, Pass: true,
				ZKLock: bench.SideResult{Rate: 3000, P50: ms(300), P99: ms(330)}, ZKLib: bench.SideResult{Rate: 2000, P50: ms(450), P99: ms(490)},
				Ratio: 1.5, RoundRatios: []float64{1.5, 1.5}},
		},
	}
	_ = rep.WriteTable(os.Stdout)
	// Output:
	// ZooKeeper 3.8.0 at 127.0.0.1:2181
	// go1.26, GOMAXPROCS 2; 2 rounds (zklock and zk.Lock alternate who goes first); medians across rounds
	//
	// scenario       unit        zklock ops/s  zk.Lock ops/s  ratio  per round (min-max)  zklock p50/p99   zk.Lock p50/p99  target   result
	// uncontended    cycles/s    1500          1200           1.25x  1.25x (1.20-1.30)    0.60ms / 1.00ms  0.80ms / 1.20ms  >=0.95x  pass
	// queue-1000     acquires/s  1750          1400           1.25x  1.25x (1.20-1.30)    0.30ms / 4.00ms  0.50ms / 4.00ms  >=1.00x  pass
	// distinct-1000  locks/s     3000          2000           1.50x  1.50x (1.50-1.50)    300ms / 330ms    450ms / 490ms    >=1.00x  pass
	//
	// against Apache Curator and kazoo: Curator 5.4.0 InterProcessMutex on OpenJDK 64-Bit Server VM 17.0.15; kazoo 2.8.0 Lock on CPython 3.11.2
	// each a process of its own with as many sessions as zklock, on the same server with the same session timeout, warmed up,
	// in the same rounds (zklock, zk.Lock, Curator, kazoo; the reverse every other round); ratio = zklock's rate / the peer's
	//   scenario     unit        zklock ops/s  Curator ops/s  zklock/Curator  per round (min-max)  kazoo ops/s  zklock/kazoo  per round (min-max)  Curator p50/p99  kazoo p50/p99
	//   uncontended  cycles/s    1500          1000           1.50x           1.50x (1.40-1.60)    750          2.00x         2.00x (1.90-2.10)    1.00ms / 4.00ms  1.00ms / 4.00ms
	//   queue-1000   acquires/s  1750          700            2.50x           2.50x (2.40-2.60)    700          2.50x         2.50x (2.40-2.60)    1.00ms / 4.00ms  1.00ms / 4.00ms (1 failed runs)
	//   no peer side: distinct-1000
	//
	// every target met; took 1m0s
}
