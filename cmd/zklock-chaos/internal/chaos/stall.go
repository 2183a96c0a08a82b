package chaos

import (
	"sync"
	"time"
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
