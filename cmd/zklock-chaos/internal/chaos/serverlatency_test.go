package chaos

import (
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zklockkit/zklockkit/zktest"
)

// A mntr answer's integer lines, as ZooKeeper 3.8 writes them.
const mntrAnswer = "zk_version\t3.8.0-1 built on 2023-03-16\nzk_server_state\tleader\nzk_avg_latency\t1.2494\nzk_outstanding_requests\t12\nzk_max_latency\t842\nzk_min_latency\t0\n"

func TestSlowSample(t *testing.T) {
	t0 := time.Now()
	e, ok := slowSample(mntrAnswer, 2, t0, t0.Add(latencyTick))
	if !ok || e.Kind != EvServerSlow || e.Server != 2 || e.Latency != 842 || e.Outstanding != 12 ||
		e.T != t0.UnixNano() || e.End != t0.Add(latencyTick).UnixNano() {
		t.Fatalf("slowSample: %+v, %v", e, ok)
	}
	for _, out := range []string{"zk_max_latency\t99\n", "zk_avg_latency\t0.0\n", "", "This ZooKeeper instance is not currently serving requests\n"} {
		if e, ok := slowSample(out, 1, t0, t0); ok {
			t.Errorf("slowSample(%q) = %+v, want none", out, e)
		}
	}
}

// Against a real server: while clients write, the JVM is stopped for
// 600 ms; the requests it held are answered after it, and the sample
// that covers the stop reports one that took most of it.
func TestWatchServerLatencySeesAStop(t *testing.T) {
	if err := zktest.Installed(); err != nil {
		t.Fatal(err)
	}
	s, err := zktest.StartServer()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var mu sync.Mutex
	var got []Event
	stop := watchServerLatency([]*zktest.Server{s}, func(e Event) {
		mu.Lock()
		got = append(got, e)
		mu.Unlock()
	})
	defer stop()

	conn, _, err := zk.Connect([]string{s.Addr()}, 10*time.Second, zk.WithLogInfo(false))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	quit := make(chan struct{})
	var writers sync.WaitGroup
	for range 4 {
		writers.Go(func() {
			for {
				select {
				case <-quit:
					return
				default:
				}
				if p, err := conn.Create("/n", nil, zk.FlagEphemeral|zk.FlagSequence, zk.WorldACL(zk.PermAll)); err == nil {
					_ = conn.Delete(p, -1)
				}
			}
		})
	}
	time.Sleep(time.Second)
	stopped := time.Now()
	if err := s.Pause(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(600 * time.Millisecond)
	if err := s.Resume(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	close(quit)
	writers.Wait()
	stop()

	var worst Event
	for _, e := range got {
		if e.Latency > worst.Latency {
			worst = e
		}
	}
	if worst.Latency < 400 || worst.Server != 1 || worst.End < stopped.UnixNano() {
		t.Fatalf("the slowest sample: %v (all: %v); want one of 400 ms or more after %s", worst, got, stopped.Format("15:04:05.000"))
	}
	t.Logf("slowest: %v (%d slow samples)", worst, len(got))
}
