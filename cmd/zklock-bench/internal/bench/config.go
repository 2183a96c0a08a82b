package bench

import (
	"io"
	"time"
)

// Config says where and how long to measure.
type Config struct {
	// Servers is the ZooKeeper ensemble ("host:port"). Required.
	Servers []string
	// Rounds is how many times each scenario runs per side (default 5 for
	// a full run, 2 with Quick). The report gives the median.
	Rounds int
	// Quick selects QuickSizes (a smoke run of well under a minute) when
	// Sizes is zero.
	Quick bool
	// Sizes overrides the workload sizes; zero fields take the defaults of
	// FullSizes or QuickSizes.
	Sizes Sizes
	// Root is the znode under which every run makes its own root (default
	// "/zklock-bench").
	Root string
	// SessionTimeout is asked of ZooKeeper by every session (default 10s).
	SessionTimeout time.Duration
	// Only, when not empty, limits the run to the scenarios whose names it
	// lists (see Scenarios); "raw", "floor" and "waiters" name the raw
	// rates, the hand-off floor and the memory measurement.
	Only []string
	// Progress, when set, receives one line per finished run.
	Progress io.Writer
	// Peers says whether to measure Apache Curator and kazoo too, on the
	// scenarios they run (default PeersOff; zklock-bench defaults to
	// PeersAuto). See peer_suite.go.
	Peers PeerMode
	// peerList replaces Peers() (tests).
	peerList []Peer
	// PinSessions, when set, pins the sessions of every run to these
	// servers, one each in turn (see Harness.PinSessions); Servers are
	// still asked for the four-letter words. zklock-bench -ensemble pins
	// them to the followers.
	PinSessions []string
	// MemProfile, when set, makes the memory measurement of the last
	// round write heap profiles (every allocation sampled) of the moment
	// before the waiters start and of the moment they are all queued, to
	// MemProfile-<side>-before.pprof and MemProfile-<side>.pprof: compare
	// them with go tool pprof -diff_base.
	MemProfile string
	// CPUProfile, when set, makes the memory measurement of the last round
	// write a CPU profile of this process while the waiters enqueue (from
	// the first waiter's start until every waiter is queued with its watch
	// set) to CPUProfile-<side>-enqueue.pprof.
	CPUProfile string
}

// Sizes are the workload sizes of the scenarios.
type Sizes struct {
	Uncontended   int   `json:"uncontended"`    // acquire+release cycles per run
	PingPong      int   `json:"ping_pong"`      // hand-offs per run
	Contenders    []int `json:"contenders"`     // the numbers of contending sessions (one scenario each)
	ContenderOps  int   `json:"contender_ops"`  // acquisitions per run, shared among the contenders
	QueueDepth    int   `json:"queue_depth"`    // waiters in the draining queue
	DistinctLocks int   `json:"distinct_locks"` // distinct resources acquired at once on one session (distinct, fresh, acquire-all, release-all)
	DistinctRuns  int   `json:"distinct_runs"`  // batches of DistinctLocks per run
	RawPairs      int   `json:"raw_pairs"`      // create+delete pairs per raw run
	RawParallel   int   `json:"raw_parallel"`   // goroutines of the parallel raw run
	Floor         int   `json:"floor"`          // hand-offs per run of the hand-off floor
	LoneRequests  int   `json:"lone_requests"`  // requests per run of lone-request
	Waiters       int   `json:"waiters"`        // waiting locks for the memory measurement
}

// FullSizes are the sizes of a full run.
func FullSizes() Sizes {
	return Sizes{
		Uncontended:   500,
		PingPong:      400,
		Contenders:    []int{8, 32},
		ContenderOps:  640,
		QueueDepth:    1000,
		DistinctLocks: 1000,
		DistinctRuns:  5,
		RawPairs:      500,
		RawParallel:   32,
		Floor:         400,
		LoneRequests:  1000,
		Waiters:       10000,
	}
}

// QuickSizes are the sizes of a smoke run.
func QuickSizes() Sizes {
	return Sizes{
		Uncontended:   60,
		PingPong:      40,
		Contenders:    []int{8, 32},
		ContenderOps:  64,
		QueueDepth:    100,
		DistinctLocks: 100,
		DistinctRuns:  1,
		RawPairs:      60,
		RawParallel:   32,
		Floor:         40,
		LoneRequests:  100,
		Waiters:       1000,
	}
}

func (c Config) withDefaults() Config {
	def := FullSizes()
	if c.Quick {
		def = QuickSizes()
	}
	s := &c.Sizes
	fill := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	fill(&s.Uncontended, def.Uncontended)
	fill(&s.PingPong, def.PingPong)
	fill(&s.ContenderOps, def.ContenderOps)
	fill(&s.QueueDepth, def.QueueDepth)
	fill(&s.DistinctLocks, def.DistinctLocks)
	fill(&s.DistinctRuns, def.DistinctRuns)
	fill(&s.RawPairs, def.RawPairs)
	fill(&s.RawParallel, def.RawParallel)
	fill(&s.Floor, def.Floor)
	fill(&s.LoneRequests, def.LoneRequests)
	fill(&s.Waiters, def.Waiters)
	if len(s.Contenders) == 0 {
		s.Contenders = def.Contenders
	}
	if c.Rounds <= 0 {
		c.Rounds = 5
		if c.Quick {
			c.Rounds = 2
		}
	}
	if c.Root == "" {
		c.Root = "/zklock-bench"
	}
	if c.SessionTimeout <= 0 {
		c.SessionTimeout = 10 * time.Second
	}
	return c
}
