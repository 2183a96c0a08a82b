package chaos

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"
)

// Event kinds of a history. Workers report the first group, the fenced
// store records writes, and the campaign records faults and process deaths.
const (
	EvStart         = "start"          // a worker connected: Session
	EvAcquire       = "acquire"        // an acquire began: Op, Resource, Deadline, Detail "try" for a try-acquire
	EvAcquired      = "acquired"       // it returned a lease: Token, Session; T is when it returned
	EvAcquireFailed = "acquire-failed" // it returned an error: Outcome, Err
	EvHung          = "hung"           // it had not returned HangGrace after its deadline
	EvWrite         = "write"          // the store's verdict on a fenced write: Token, Sent, Called, Accepted, Max; in a database store, the writer's report: WriteID, Outcome
	EvCommitted     = "committed"      // a committed row of a database store, read back after the run: WriteID, Resource, Order, Token, Mode, Proc, Op, Sent
	EvLost          = "lost"           // the lease's Done fired without a release: T is when the worker saw it
	EvRelease       = "release"        // the holder stopped acting and called Release
	EvReleased      = "released"       // Release returned: Outcome, Err
	EvQuiesced      = "quiesced"       // the worker stopped acquiring: Session, Detail (local lock nodes)
	EvExit          = "exit"           // the worker closed its client and exits
	EvDied          = "died"           // the campaign saw a worker die: Detail "killed" or its exit status
	EvFault         = "fault"          // a fault began: Fault, FaultID, Target, Proc (0 for server faults), Mode (recipe aimed at), Nodes[0] (servers cut off), Detail
	EvHeal          = "heal"           // the fault with FaultID ended
	EvOrphan        = "orphan"         // a lock znode left behind after the run: Target is its path
	EvLocal         = "local"          // a worker's own lock nodes, as its client knows them (Client.Locks and Client.Deleting): Session, Nodes; T is when they were read
	EvQueues        = "queues"         // every lock znode under the root with its owner: Owners; T is when the listing began, End when it ended; Server the member it read
	EvNote          = "note"           // campaign progress: Detail
	EvPhase         = "phase"          // the campaign entered a phase: Detail ("main", "load", "wind-down")
	EvStall         = "stall"          // the worker's stall watch did not run from T to End (see stall.go): judged as a pause of the process
	EvServerStop    = "server-stop"    // a member's JVM stopped from T to End, a safepoint of its log (zktest.Server.Stops; see stall.go): Server (1-based), Detail (the cause)
	EvServerSlow    = "server-slow"    // a member's longest request from T to End took Latency ms (mntr; see serverlatency.go): Server, Latency, Outstanding
)

// Recipes, as Event.Mode of an acquire. A lane runs one recipe; the
// fenced store and the checker judge each by its own invariant.
const (
	ModeExclusive = "x"    // Acquire, exclusive
	ModeRead      = "r"    // Acquire WithMode(Read)
	ModeWrite     = "w"    // Acquire WithMode(Write)
	ModeSemaphore = "sem"  // Acquire WithLimit(Limit)
	ModeElection  = "el"   // Campaign
	ModeMulti     = "all"  // AcquireAll over an overlapping set; Resource lists the set, Parts the tokens
	ModeDowngrade = "down" // the read lease of a Downgrade (of the write lease op From)
)

// Event is one entry of a campaign's history. Times are Unix nanoseconds
// of the machine's wall clock, shared by every process of a campaign.
type Event struct {
	Seq      int64  `json:"seq"`
	Kind     string `json:"kind"`
	T        int64  `json:"t"`
	Proc     int    `json:"proc,omitempty"` // worker process incarnation, unique in a campaign
	Slot     int    `json:"slot,omitempty"` // worker slot (a respawned worker keeps its slot)
	PID      int    `json:"pid,omitempty"`
	Op       int64  `json:"op,omitempty"` // acquire attempt number within the process
	Resource string `json:"r,omitempty"`
	Token    int64  `json:"token,omitempty"`
	Session  int64  `json:"session,omitempty"`
	Deadline int64  `json:"deadline,omitempty"`
	Sent     int64  `json:"sent,omitempty"`
	Accepted bool   `json:"accepted,omitempty"`
	Max      int64  `json:"max,omitempty"` // largest token the store had seen before this write
	Outcome  string `json:"outcome,omitempty"`
	Err      string `json:"err,omitempty"`
	Fault    string `json:"fault,omitempty"`
	FaultID  int    `json:"fault_id,omitempty"`
	Target   string `json:"target,omitempty"`
	Detail   string `json:"detail,omitempty"`
	// Nodes (EvLocal) are the paths of the worker client's lock nodes
	// (zklock Client.Locks: waiting or held, not being released).
	Nodes []string `json:"nodes,omitempty"`
	// Owners (EvQueues) maps every lock znode to its ephemeral owner.
	Owners map[string]int64 `json:"owners,omitempty"`
	// End (EvQueues) is when the listing ended: each node listed existed
	// at some moment in [T, End]. End (EvStall, EvServerStop) is when the
	// stop ended.
	End int64 `json:"end,omitempty"`
	// Mode (acquire events, writes) is the mode of the acquire:
	// ModeExclusive (or ""), ModeRead, ... Limit is a semaphore's. For a
	// worker or operator fault (EvFault) it is the recipe aimed at
	// (RecipeExclusive, ...).
	Mode  string `json:"mode,omitempty"`
	Limit int    `json:"limit,omitempty"`
	// Began (EvAcquired, EvAcquireFailed) is when the acquire call began.
	Began int64 `json:"began,omitempty"`
	// Server is the ensemble member (1-based) the worker's session was
	// connected to when it sent the event (go-zookeeper's Conn.Server), 0
	// when unknown or between servers.
	Server int `json:"server,omitempty"`
	// Parts (EvAcquired of ModeMulti) maps each resource to its node's
	// token.
	Parts map[string]int64 `json:"parts,omitempty"`
	// From (EvAcquired of ModeDowngrade) is the op of the write lease it
	// came from.
	From int64 `json:"from,omitempty"`
	// Called (EvWrite) is when the store was called, T when it answered;
	// (EvReleased) when the lane called Release, after its EvRelease was
	// recorded (the hand-off starts there), T when Release returned.
	Called int64 `json:"called,omitempty"`
	// Requeued (EvAcquired) marks a lease whose acquire queued again with
	// a new node before it held (its first node deleted, or its session
	// expired): the case of issue #18's two holders.
	Requeued bool `json:"requeued,omitempty"`
	// WriteID (EvWrite, EvCommitted) names a write to a database store:
	// its writer's report and its committed row carry the same.
	WriteID int64 `json:"wid,omitempty"`
	// Order (EvCommitted) is the row's place in its resource's commit
	// order: 1, 2, ... (the version of the resource's register row that
	// its transaction wrote).
	Order int64 `json:"n,omitempty"`
	// Recv is when the hub recorded the event (T is when it happened,
	// stamped by its sender): a worker's reports wait for the hub, and
	// Recv-T shows how long.
	Recv int64 `json:"recv,omitempty"`
	// Sched (EvLocal) is the longest any of the worker's goroutines
	// waited to run, once runnable, since its last EvLocal: the lower
	// bound of the Go runtime's histogram bucket, in nanoseconds.
	Sched int64 `json:"sched,omitempty"`
	// Latency (EvServerSlow) is the longest any request spent in the
	// member from T to End, in milliseconds (mntr's zk_max_latency), and
	// Outstanding the requests waiting in it at End.
	Latency     int64 `json:"latency_ms,omitempty"`
	Outstanding int64 `json:"outstanding,omitempty"`
}

// Time returns T as a time.Time.
func (e Event) Time() time.Time { return time.Unix(0, e.T) }

// String formats the event as one line of a history slice.
func (e Event) String() string {
	s := fmt.Sprintf("#%d %s %-14s", e.Seq, e.Time().Format("15:04:05.000000"), e.Kind)
	if e.Proc != 0 {
		s += fmt.Sprintf(" proc=%d", e.Proc)
	}
	if e.Op != 0 {
		s += fmt.Sprintf(" op=%d", e.Op)
	}
	if e.Resource != "" {
		s += " r=" + e.Resource
	}
	if e.Mode != "" {
		s += " mode=" + e.Mode
		if e.Limit != 0 {
			s += fmt.Sprintf("/%d", e.Limit)
		}
	}
	if e.Server != 0 {
		s += fmt.Sprintf(" zk%d", e.Server)
	}
	if e.Token != 0 {
		s += fmt.Sprintf(" token=%#x", e.Token)
	}
	switch e.Kind {
	case EvWrite:
		s += fmt.Sprintf(" accepted=%t max=%#x sent=%s", e.Accepted, e.Max, time.Unix(0, e.Sent).Format("15:04:05.000000"))
	case EvCommitted:
		s += fmt.Sprintf(" n=%d sent=%s", e.Order, time.Unix(0, e.Sent).Format("15:04:05.000000"))
	}
	if e.WriteID != 0 {
		s += fmt.Sprintf(" wid=%#x", e.WriteID)
	}
	if e.Session != 0 {
		s += fmt.Sprintf(" session=%#x", e.Session)
	}
	switch e.Kind {
	case EvLocal:
		s += fmt.Sprintf(" nodes=%d", len(e.Nodes))
	case EvServerSlow:
		s += fmt.Sprintf(" latency=%dms outstanding=%d to=%s", e.Latency, e.Outstanding, time.Unix(0, e.End).Format("15:04:05.000"))
	case EvQueues:
		s += fmt.Sprintf(" owners=%d", len(e.Owners))
		if e.End != 0 {
			s += fmt.Sprintf(" took=%v", time.Duration(e.End-e.T).Round(time.Millisecond))
		}
	}
	if e.Fault != "" {
		s += fmt.Sprintf(" fault=%s#%d", e.Fault, e.FaultID)
	} else if e.FaultID != 0 {
		s += fmt.Sprintf(" fault=#%d", e.FaultID)
	}
	if e.Target != "" {
		s += " target=" + e.Target
	}
	if e.Outcome != "" {
		s += " outcome=" + e.Outcome
	}
	if e.Err != "" {
		s += fmt.Sprintf(" err=%q", e.Err)
	}
	if e.Requeued {
		s += " requeued"
	}
	if e.Detail != "" {
		s += " " + e.Detail
	}
	return s
}

// ReadHistory reads a history written by a campaign (history.jsonl: one
// JSON Event per line).
func ReadHistory(r io.Reader) ([]Event, error) {
	var evs []Event
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for line := 1; sc.Scan(); line++ {
		if len(sc.Bytes()) == 0 {
			continue
		}
		var e Event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return nil, fmt.Errorf("chaos: history line %d: %w", line, err)
		}
		evs = append(evs, e)
	}
	return evs, sc.Err()
}

// ReadHistoryFile reads a history file.
func ReadHistoryFile(path string) ([]Event, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadHistory(f)
}
