package bench

import (
	"context"
	"runtime"
	"time"
)

// span is one measured stretch of a run (see Harness.begin): when it
// started, the process's usage then, and the packets the servers had
// received from clients.
type span struct {
	h       *Harness
	start   time.Time
	use     usage
	packets int64         // -1 when a server does not answer mntr
	servers time.Duration // the servers' CPU time so far, -1 when unknown
}

// serially runs op n times, one after another, in one span. Latencies are
// each op's.
func (h *Harness) serially(ctx context.Context, n int, op func() error) (Sample, error) {
	lat := make([]time.Duration, 0, n)
	sp, err := h.begin(ctx)
	if err != nil {
		return Sample{}, err
	}
	for range n {
		t := time.Now()
		if err := op(); err != nil {
			return Sample{}, err
		}
		lat = append(lat, time.Since(t))
	}
	return sp.end().sample(n, lat), nil
}

// measure is what a span measured.
type measure struct {
	elapsed time.Duration
	use     usage // CPU and write system calls of this process
	// requests is how many requests the servers received from clients,
	// pings included, -1 when a server does not answer mntr.
	requests int64
	// servers is the CPU time the server processes used, -1 when unknown
	// (Harness.serverCPU).
	servers time.Duration
}

// begin starts a span once the process is quiet (see quiet), so that
// neither the other side's leftovers nor their garbage are billed to this
// one. The servers' packet
// counts are read before the clock starts, so that the four-letter word
// and its system calls stay outside the span.
func (h *Harness) begin(ctx context.Context) (span, error) {
	if err := quiet(ctx); err != nil {
		return span{}, err
	}
	s := span{h: h, packets: h.packetsReceived(), servers: h.serverCPU()}
	h.startTimer()
	s.use = usageNow()
	s.start = time.Now()
	return s, nil
}

// end ends the span and returns what it measured. The clock and the usage
// are read before anything else.
func (s span) end() measure {
	elapsed := time.Since(s.start)
	use := usageNow().sub(s.use)
	s.h.stopTimer()
	m := measure{elapsed: elapsed, use: use, requests: -1, servers: -1}
	if s.servers >= 0 {
		if after := s.h.serverCPU(); after >= 0 {
			m.servers = after - s.servers
		}
	}
	if s.packets >= 0 {
		if after := s.h.packetsReceived(); after >= 0 {
			// mntr counts itself as a packet received, once per server.
			m.requests = after - s.packets - int64(len(s.h.servers))
		}
	}
	return m
}

// sample returns a Sample of ops operations over the span's measure, with
// latencies lat.
func (m measure) sample(ops int, lat []time.Duration) Sample {
	s := Sample{Ops: ops, Elapsed: m.elapsed, Latencies: lat, CPU: m.use.cpu}
	if m.use.writes >= 0 && m.requests > 0 {
		s.Writes, s.Requests = m.use.writes, m.requests
	}
	if m.servers >= 0 {
		s.ServerCPU = m.servers
	}
	return s
}

// add adds o's figures to m, for a run of several spans; an unknown
// count stays unknown.
func (m *measure) add(o measure) {
	m.elapsed += o.elapsed
	m.use.cpu += o.use.cpu
	m.use.writes = addKnown(m.use.writes, o.use.writes)
	m.requests = addKnown(m.requests, o.requests)
	m.servers = time.Duration(addKnown(int64(m.servers), int64(o.servers)))
}

// addKnown returns a+b, or -1 (unknown) when either is.
func addKnown(a, b int64) int64 {
	if a < 0 || b < 0 {
		return -1
	}
	return a + b
}

// quiet waits until this process is quiet before a measurement: its
// goroutine count has settled (the sessions of the run before, closed,
// have wound down), then runs a garbage collection.
func quiet(ctx context.Context) error {
	if err := quiesceGoroutines(ctx); err != nil {
		return err
	}
	runtime.GC()
	return nil
}

// serverCPU sums the CPU time (user and system) the server processes have
// used so far, -1 when they do not run on this machine or one is gone.
// /proc/PID/stat counts in clock ticks, 10 ms: a run's few seconds of
// server time are read to a fraction of a percent.
func (h *Harness) serverCPU() time.Duration {
	if len(h.pids) == 0 {
		return -1
	}
	var total time.Duration
	for _, pid := range h.pids {
		c := processCPUOf(pid)
		if c < 0 {
			return -1
		}
		total += c
	}
	return total
}

// packetsReceived sums the packets every server has received from clients
// (mntr's zk_packets_received), or -1 when one does not answer mntr.
func (h *Harness) packetsReceived() int64 {
	var n int64
	for _, s := range h.servers {
		m, err := mntr(s)
		if err != nil {
			return -1
		}
		k, ok := m["zk_packets_received"]
		if !ok {
			return -1
		}
		n += k
	}
	return n
}
