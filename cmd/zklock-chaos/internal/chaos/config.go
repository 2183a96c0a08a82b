package chaos

import (
	"fmt"
	"io"
	"time"
)

// Config describes a campaign. The zero value of a field takes the
// default of the preset Short.
type Config struct {
	// Name labels the report ("short", "long", ...).
	Name string
	// Workers is the number of worker processes (default 6).
	Workers int
	// Resources is the number of resources they contend for (default 3).
	Resources int
	// Lanes is the number of acquire loops in each worker process (default
	// 2): lanes of one process that pick the same resource queue behind
	// each other on one session, where the lock passes between them with no
	// request to ZooKeeper.
	Lanes int
	// Acquisitions is the minimum number of leases granted (default 1,000).
	Acquisitions int
	// FaultsPerKind is the minimum number of faults of each process and
	// operator kind (default 6: every process fault aims at each of the six
	// recipes at least once).
	FaultsPerKind int
	// ServerFaultsPerKind is the minimum number of faults of each server
	// and partition kind (default 3). They take longest: each waits for the
	// ensemble to heal.
	ServerFaultsPerKind int
	// Quiet and QuietEvery: every QuietEvery (default 40s) no fault starts
	// for Quiet (default three session timeouts), so that the liveness
	// figures have samples outside fault windows (a fault is felt until a
	// session timeout after it ends).
	Quiet, QuietEvery time.Duration
	// NoRecipes runs the exclusive lanes only, as campaigns did before the
	// recipe lanes (read/write, downgrade, semaphore, election,
	// AcquireAll, try probe).
	NoRecipes bool
	// Load, when its Sessions is set, adds a load phase once the targets
	// are reached: that many more sessions over the worker processes,
	// with Waiters acquire loops on Resources exclusive locks, for
	// Duration, under the same faults.
	Load LoadConfig
	// Store is where the critical sections write: StoreMemory (the
	// default: the hub's memStore), StoreSQLite (a file in Dir, written
	// by the hub through package fence) or StorePostgres (a throwaway
	// cluster started with internal/pgtest, written by the workers
	// through package fence, each on connections of its own) or StoreZK
	// (znodes on the campaign's ensemble, written by the workers through
	// zklock.Client.Fenced, each through its own Client). With a
	// database or ZooKeeper the checker decides what was accepted, and in
	// which order, from the writes the store committed.
	Store string
	// MaxDuration bounds the fault phase: a campaign still short of its
	// targets then stops and fails (default 4 minutes).
	MaxDuration time.Duration
	// TickTime is ZooKeeper's tickTime (default 500ms).
	TickTime time.Duration
	// SessionTimeout is the session timeout workers ask for (default 3s,
	// within the ensemble's bounds of 2 to 20 ticks).
	SessionTimeout time.Duration
	// HangGrace is how long past its deadline an acquire may return before
	// it counts as hung (default 2s: the machine may be loaded).
	HangGrace time.Duration
	// Steps and Work shape a critical section: after its first write, Steps
	// times "check the lease, work for about Work, write" (default 3, 15ms).
	Steps int
	Work  time.Duration
	// LongPercent is the share of leases held for about two session
	// timeouts instead (default 3); process faults aim at those.
	LongPercent int
	// PhantomPeriod is how often, for the phantom-node check, each worker
	// reports its client's lock nodes and the campaign lists every lock
	// znode with its owner (default 1s; keep it well under the session
	// timeout: the checker counts no time across longer gaps).
	PhantomPeriod time.Duration
	// Faults are the kinds injected (default AllFaults).
	Faults []FaultKind
	// Seed seeds the nemesis and the workers (default: from the clock).
	Seed uint64
	// Dir receives history.jsonl, report.json, report.txt, worker logs and
	// the servers' data (default: a new temporary directory, kept).
	Dir string
	// Progress, if set, receives a line of progress every few seconds.
	Progress io.Writer `json:"-"`
}

// LoadConfig shapes a campaign's load phase.
type LoadConfig struct {
	Sessions       int           // sessions added over the worker processes
	Waiters        int           // acquire loops over those sessions
	Resources      int           // exclusive resources they contend for
	Duration       time.Duration // how long the phase lasts
	AcquireTimeout time.Duration // each acquire's deadline (default 60s)
}

// Short is the CI campaign: at least 1,000 acquisitions, every process and
// operator fault at least 6 times, every server fault and partition at
// least 3 times, in under four minutes.
func Short() Config {
	return Config{Name: "short", Workers: 6, Resources: 3, Lanes: 2, Acquisitions: 1000, FaultsPerKind: 6, ServerFaultsPerKind: 3,
		MaxDuration: 4 * time.Minute}
}

// Long is the release campaign: at least 20,000 acquisitions and 50
// faults of each kind, then a load phase of 200 more sessions and 5,200
// waiters for 8 minutes.
func Long() Config {
	return Config{Name: "long", Workers: 8, Resources: 4, Lanes: 2, Acquisitions: 20000, FaultsPerKind: 50, ServerFaultsPerKind: 50,
		MaxDuration: 3 * time.Hour,
		Load:        LoadConfig{Sessions: 200, Waiters: 5200, Resources: 40, Duration: 8 * time.Minute}}
}

// Smoke is a small campaign for go test: every process and operator fault
// three times, every server fault and partition twice, at least 200
// acquisitions, in about three minutes.
func Smoke() Config {
	return Config{Name: "smoke", Workers: 4, Resources: 2, Lanes: 2, Acquisitions: 200, FaultsPerKind: 3, ServerFaultsPerKind: 2,
		MaxDuration: 4 * time.Minute}
}

// Preset returns the named configuration: "short", "long" or "smoke".
func Preset(name string) (Config, error) {
	switch name {
	case "short":
		return Short(), nil
	case "long":
		return Long(), nil
	case "smoke":
		return Smoke(), nil
	}
	return Config{}, fmt.Errorf("chaos: unknown campaign %q (want short, long or smoke)", name)
}

func (c Config) withDefaults() Config {
	d := Short()
	if c.Name == "" {
		c.Name = "custom"
	}
	if c.Workers <= 0 {
		c.Workers = d.Workers
	}
	if c.Resources <= 0 {
		c.Resources = d.Resources
	}
	if c.Lanes <= 0 {
		c.Lanes = d.Lanes
	}
	if c.Acquisitions <= 0 {
		c.Acquisitions = d.Acquisitions
	}
	if c.FaultsPerKind <= 0 {
		c.FaultsPerKind = d.FaultsPerKind
	}
	if c.ServerFaultsPerKind <= 0 {
		c.ServerFaultsPerKind = c.FaultsPerKind
	}
	if c.Load.Sessions > 0 {
		c.Load.Waiters = max(c.Load.Waiters, c.Load.Sessions)
		c.Load.Resources = max(c.Load.Resources, 1)
		if c.Load.Duration <= 0 {
			c.Load.Duration = 5 * time.Minute
		}
		if c.Load.AcquireTimeout <= 0 {
			c.Load.AcquireTimeout = time.Minute
		}
	}
	if c.MaxDuration <= 0 {
		c.MaxDuration = d.MaxDuration
	}
	if c.Store == "" {
		c.Store = StoreMemory
	}
	if c.TickTime <= 0 {
		c.TickTime = 500 * time.Millisecond
	}
	if c.SessionTimeout <= 0 {
		c.SessionTimeout = 3 * time.Second
	}
	if c.HangGrace <= 0 {
		c.HangGrace = 2 * time.Second
	}
	if c.Steps <= 0 {
		c.Steps = 3
	}
	if c.Work <= 0 {
		c.Work = 15 * time.Millisecond
	}
	if c.LongPercent <= 0 {
		c.LongPercent = 3
	}
	if c.Quiet <= 0 {
		c.Quiet = 3 * c.SessionTimeout
	}
	if c.QuietEvery <= 0 {
		c.QuietEvery = 40 * time.Second
	}
	if c.PhantomPeriod <= 0 {
		c.PhantomPeriod = time.Second
	}
	if len(c.Faults) == 0 {
		c.Faults = AllFaults
	}
	if c.Seed == 0 {
		c.Seed = uint64(time.Now().UnixNano())
	}
	return c
}

// perKind returns the minimum number of faults of kind k.
func (c Config) perKind(k FaultKind) int {
	if k.Server() {
		return c.ServerFaultsPerKind
	}
	return c.FaultsPerKind
}
