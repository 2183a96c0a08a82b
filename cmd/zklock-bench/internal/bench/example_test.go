package bench_test

import (
	"os"
	"time"

	"github.com/zklockkit/zklockkit/cmd/zklock-bench/internal/bench"
)

func ms(f float64) bench.Duration { return bench.Duration(f * float64(time.Millisecond)) }

// A report, built by hand here, printed as the zklock-bench command prints
// it.
func ExampleReport_WriteTable() {
	rep := &bench.Report{
		Servers: []string{"127.0.0.1:2181"}, ZooKeeper: "3.8.0", Settings: "forceSync=yes",
		GoVersion: "go1.26", GOMAXPROCS: 2, Rounds: 5, Elapsed: bench.Duration(3 * time.Minute),
		Scenarios: []bench.ScenarioResult{
			{Name: "uncontended", Unit: "cycles/s", Target: 0.95, RawTarget: 0.9,
				ZKLock: bench.SideResult{Rate: 900, P50: ms(1.1), P99: ms(2.5)},
				ZKLib:  bench.SideResult{Rate: 1000, P50: ms(1), P99: ms(2)},
				Ratio:  0.9, RoundRatios: []float64{0.95, 0.85, 0.9}, RawRatio: 0.75, RawRoundRatios: []float64{0.7, 0.8, 0.74}, ZKLibRawRatio: 0.83},
			{Name: "ping-pong", Unit: "hand-offs/s", Target: 1.3,
				ZKLock: bench.SideResult{Rate: 2000, P50: ms(0.5), P99: ms(0.9), WallRate: 300},
				ZKLib:  bench.SideResult{Rate: 1250, P50: ms(0.8), P99: ms(1.5), WallRate: 290},
				Ratio:  1.6, RoundRatios: []float64{1.5, 1.7, 1.6, 1.4}, RawRatio: 1.67, ZKLibRawRatio: 1.04, Pass: true},
		},
		Raw: []bench.RawResult{
			{Name: "serial", Width: 1, Side: bench.SideResult{Rate: 1200, P50: ms(0.8), P99: ms(1.6)}},
			{Name: "32-way", Width: 32, Side: bench.SideResult{Rate: 7000, P50: ms(4.4), P99: ms(5.1)}},
		},
		Memory: []bench.MemoryResult{
			{WaiterMemory: bench.WaiterMemory{Side: "zklock", Waiters: 10000, HeapPerWaiter: 2560,
				StackPerWaiter: 2048, TotalPerWaiter: 4608, GoroutinesPerWaiter: 1, Enqueue: ms(1500)},
				Ratio: 0.93, EnqueueRatio: 1.07, EnqueueRoundRatios: []float64{1.02, 1.1, 1.07},
				Target: bench.MemoryTarget, EnqueueTarget: bench.EnqueueTarget},
			{WaiterMemory: bench.WaiterMemory{Side: "zk.Lock", Waiters: 10000, HeapPerWaiter: 820,
				StackPerWaiter: 4096, TotalPerWaiter: 4916, GoroutinesPerWaiter: 1, Enqueue: ms(1400)}, Pass: true},
		},
	}
	_ = rep.WriteTable(os.Stdout)
	// Output:
	// ZooKeeper 3.8.0 at 127.0.0.1:2181 (forceSync=yes)
	// go1.26, GOMAXPROCS 2; 5 rounds (zklock and zk.Lock alternate who goes first); medians across rounds
	//
	// scenario                    unit         zklock ops/s  zk.Lock ops/s  ratio  per round (min-max)  zklock p50/p99   zk.Lock p50/p99  target                result
	// uncontended                 cycles/s     900           1000           0.90x  0.90x (0.85-0.95)    1.10ms / 2.50ms  1.00ms / 2.00ms  >=0.95x, >=0.90x raw  FAIL
	// ping-pong                   hand-offs/s  2000          1250           1.60x  1.55x (1.40-1.70)    0.50ms / 0.90ms  0.80ms / 1.50ms  >=1.30x               pass
	//   (wall clock, with holds)  hand-offs/s  300           290            1.03x                                                         -
	//
	// raw Create(EPHEMERAL_SEQUENTIAL)+Delete pairs on one session (the server's ceiling)
	//   goroutines  pairs/s  p50/p99
	//   1           1200     0.80ms / 1.60ms
	//   32          7000     4.40ms / 5.10ms
	//
	// rate / raw serial pair rate
	//   scenario     zklock  per round (min-max)  zk.Lock  target          result
	//   uncontended  0.75x   0.74x (0.70-0.80)    0.83x    zklock >=0.90x  FAIL
	//   ping-pong    1.67x   -                    1.04x    -
	//
	// memory per waiting lock: 10000 goroutines on one session, each queued behind another session (live heap after GC, goroutine stacks)
	//   side     heap/waiter  stack/waiter  total    ratio  goroutines/waiter  enqueue all  ratio  per round (min-max)  target                          result
	//   zklock   2.5 KiB      2.0 KiB       4.5 KiB  0.93x  1.00               1500ms       1.07x  1.07x (1.02-1.10)    total <=1.00x, enqueue <=1.00x  FAIL
	//   zk.Lock  0.8 KiB      4.0 KiB       4.8 KiB  -      1.00               1400ms       -      -                    -
	//
	// some targets missed; took 3m0s
}
