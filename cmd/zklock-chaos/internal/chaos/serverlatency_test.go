package chaos

import (
	"slices"
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
	e, ok := slowSample(mntrAnswer, time.Millisecond, "mntr", 2, t0, t0.Add(latencyTick))
	if !ok || e.Kind != EvServerSlow || e.Server != 2 || e.Latency != 842 || e.Outstanding != 12 || e.Detail != "" ||
		e.T != t0.UnixNano() || e.End != t0.Add(latencyTick).UnixNano() {
		t.Fatalf("slowSample: %+v, %v", e, ok)
	}
	// the mntr itself waited longer than any request the member counted
	if e, ok := slowSample("zk_max_latency\t3\n", 420*time.Millisecond, "mntr", 1, t0, t0); !ok || e.Latency != 420 || e.Detail != "mntr" {
		t.Fatalf("slowSample of a slow mntr: %+v, %v", e, ok)
	}
	for _, out := range []string{"zk_max_latency\t99\n", "zk_avg_latency\t0.0\n", "", "This ZooKeeper instance is not currently serving requests\n"} {
		if e, ok := slowSample(out, 99*time.Millisecond, "srst", 1, t0, t0); ok {
			t.Errorf("slowSample(%q) = %+v, want none", out, e)
		}
	}
}

// Against a real server: while clients write, the JVM is stopped four
// times for 800 ms; the sample that covers each stop reports a request
// (a write, or the mntr) that waited for most of it.
func TestWatchServerLatencySeesAStop(t *testing.T) {
	if err := zktest.Installed(); err != nil {
		t.Fatal(err)
	}
	s, err := zktest.StartServer()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var rec samples
	stop := watchServerLatency([]*zktest.Server{s}, rec.add)
	defer stop()

	conn, _, err := zk.Connect([]string{s.Addr()}, 10*time.Second, zk.WithLogInfo(false))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	quit := make(chan struct{})
	var writers sync.WaitGroup
	for range 16 {
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
	var resumed []time.Time
	for range 4 {
		if err := s.Pause(); err != nil {
			t.Fatal(err)
		}
		// 800 ms: the sampler ticks every 250 ms, but under -race on
		// two loaded cores its goroutine was seen 575 ms late, and a
		// 400 ms stop then had no sample of its own.
		time.Sleep(800 * time.Millisecond)
		if err := s.Resume(); err != nil {
			t.Fatal(err)
		}
		resumed = append(resumed, time.Now())
		time.Sleep(300 * time.Millisecond)
	}
	time.Sleep(time.Second)
	close(quit)
	writers.Wait()
	stop()
	got := rec.all()

	// A tick comes within 250 ms of each stop's start: its mntr waits
	// 150 ms or more, as may requests the member holds.
	longest := int64(0)
	for _, r := range resumed {
		i := slices.IndexFunc(got, func(e Event) bool {
			return e.Server == 1 && e.Latency >= 150 && e.T < r.UnixNano() && e.End >= r.UnixNano()
		})
		if i < 0 {
			t.Fatalf("no sample of 150 ms or more covers the stop that ended at %s: %v", r.Format("15:04:05.000"), got)
		}
		longest = max(longest, got[i].Latency)
	}
	if longest < 300 {
		t.Errorf("the stops' samples took at most %d ms, want one of 300 ms or more: %v", longest, got)
	}
	t.Logf("%d slow samples: %v", len(got), got)
}

// samples records the samples a sampler reports.
type samples struct {
	mu  sync.Mutex
	got []Event
}

func (s *samples) add(e Event) {
	s.mu.Lock()
	s.got = append(s.got, e)
	s.mu.Unlock()
}

func (s *samples) all() []Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.got)
}

// stopsBeforeReset is a real server that the test stops for 800 ms
// just before the sampler's third srst reaches it: right after a mntr
// answered at once, the worst moment for the sampler.
type stopsBeforeReset struct {
	*zktest.Server
	t       *testing.T
	resets  int
	stopped chan time.Time // when the stop began, then when it ended
}

func (s *stopsBeforeReset) FourLetter(cmd string) (string, error) {
	if cmd == "srst" {
		if s.resets++; s.resets == 3 {
			if err := s.Pause(); err != nil {
				s.t.Error(err)
			}
			s.stopped <- time.Now()
			go func() {
				time.Sleep(800 * time.Millisecond)
				if err := s.Resume(); err != nil {
					s.t.Error(err)
				}
				s.stopped <- time.Now()
			}()
		}
	}
	return s.Server.FourLetter(cmd)
}

// A stop that begins between a mntr's answer and the srst after it, with
// no request in the member: the srst waits it out, and the sample after
// it reports that wait (without it, no sample saw this stop at all: the
// mntr before was answered at once, the reset wiped what the member
// held, and the mntr after found nothing slow; one CI run lost a stop
// that way).
func TestWatchServerLatencySeesAStopBeforeItsReset(t *testing.T) {
	if err := zktest.Installed(); err != nil {
		t.Fatal(err)
	}
	srv, err := zktest.StartServer()
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	s := &stopsBeforeReset{Server: srv, t: t, stopped: make(chan time.Time, 2)}
	var rec samples
	stop := watchServerLatency([]*stopsBeforeReset{s}, rec.add)
	defer stop()
	began, ended := <-s.stopped, <-s.stopped
	time.Sleep(3 * latencyTick)
	stop()
	got := rec.all()

	i := slices.IndexFunc(got, func(e Event) bool {
		return e.T <= began.UnixNano() && e.End >= ended.UnixNano()
	})
	if i < 0 {
		t.Fatalf("no sample covers the stop from %s to %s: %v", began.Format("15:04:05.000"), ended.Format("15:04:05.000"), got)
	}
	if e := got[i]; e.Detail != "srst" || e.Latency < 700 {
		t.Fatalf("the stop's sample is %v, want the srst's wait of about 800 ms", e)
	}
	t.Logf("samples: %v", got)
}
