package chaos

import (
	"fmt"
	"sync"
	"time"

	"github.com/zklockkit/zklockkit/zktest"
)

// A worker process can stop running without any fault of the campaign's:
// under the load phase's thousands of waiters on two cores, the kernel's
// scheduler, the Go runtime (a garbage collection's stop of the world) or
// the machine can hold it off the CPU for a second or more. To everything
// the checker judges, that is a pause (FaultPause): a holder that does not
// run cannot be told of its loss, and its late write is fencing's to
// refuse. A worker's stall watch finds such stops and reports each as an
// EvStall, which the checker takes as a pause of that process.
//
// The campaign process runs one too (Proc 0). It holds every worker's
// proxies to the ensemble and the store in memory: when it stops, every
// session's traffic and every write stops with it, as on a blackhole of
// every link. The checker takes such a stall as a fault felt by everyone.
//
// The ensemble's members stop too: their JVMs' garbage collections stop
// ZooKeeper for up to 0.8 s on the load phase's saturated cores (the long
// run of 28 November). A member's stop holds its clients' requests, and a
// leader's every write. Each JVM logs its safepoints (zktest.Server.Stops);
// at the end, the campaign records every stop of stallMin or more as an
// EvServerStop, which the checker takes as a fault felt by everyone: from
// its start to a session timeout after its end. Not less: the requests a
// stop held are served from the ensemble's spare capacity, and in the
// load phase there is little (the long run of 28 November on e42f682:
// after stops of zk1 for 202 ms and zk2 for 252 ms within two seconds,
// hand-offs on 40 queues that began 0.3 to 2.4 s after the second took
// 1.0 to 2.2 s, against a p99 of 0.5 s).
// The log sees the JVM's own stops only, not the kernel's: a member held
// off the CPU without a safepoint is not found.

const (
	// stallTick is how often the stall watch wakes.
	stallTick = 10 * time.Millisecond
	// stallMin is the shortest stop reported: a wake that came this much
	// later than asked for.
	stallMin = 200 * time.Millisecond
)

// watchStalls runs the stall watch until the returned func is called;
// that func returns once every stop found is reported. Each report is
// made from a goroutine of its own: the watch never waits on the hub.
func watchStalls(report func(Event)) (stop func()) {
	quit, done := make(chan struct{}), make(chan struct{})
	var sends sync.WaitGroup
	go func() {
		defer close(done)
		t := time.NewTicker(stallTick)
		defer t.Stop()
		last := time.Now()
		for {
			select {
			case <-quit:
				return
			case <-t.C:
			}
			now := time.Now()
			if now.Sub(last) >= stallTick+stallMin {
				e := stallEvent(last, now)
				sends.Go(func() { report(e) })
			}
			last = now
		}
	}()
	return func() {
		close(quit)
		<-done
		sends.Wait()
	}
}

// stallEvent is the EvStall of a stop from last (the watch's previous
// wake) to now.
func stallEvent(last, now time.Time) Event {
	return Event{Kind: EvStall, T: last.UnixNano(), End: last.UnixNano() + int64(now.Sub(last))}
}

// recordServerStops records the stops of stallMin or more of each
// member's JVMs (servers[i] is zk<i+1>) as EvServerStop.
func recordServerStops[S stopLog](h *hub, servers []S) {
	for i, s := range servers {
		stops, err := s.Stops(stallMin)
		if err != nil {
			h.record(Event{Kind: EvNote, Detail: fmt.Sprintf("zk%d's JVM stops unread: %v", i+1, err)})
			continue
		}
		for _, st := range stops {
			h.record(Event{Kind: EvServerStop, T: st.Start.UnixNano(), End: st.End.UnixNano(), Server: i + 1, Detail: st.Cause})
		}
	}
}

// stopLog is a member's log of its JVM's stops: a *zktest.Server.
type stopLog interface {
	Stops(min time.Duration) ([]zktest.Stop, error)
}
