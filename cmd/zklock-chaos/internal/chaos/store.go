package chaos

import (
	"sync"

	"github.com/zklockkit/zklockkit/internal/canary"
)

// Stores a campaign can write to (Config.Store).
const (
	StoreMemory   = "memory"    // memStore, in the campaign process (the default)
	StoreSQLite   = "sqlite"    // a SQLite file in the campaign directory, written by the hub
	StorePostgres = "postgres"  // a throwaway PostgreSQL cluster (internal/pgtest), written by the workers
	StoreZK       = "zookeeper" // znodes on the campaign's own ensemble, written by the workers through zklock.Client.Fenced (zkStore)
)

// Outcomes of a write to a store outside the campaign process (a database,
// or ZooKeeper), as the writer saw them (EvWrite's Outcome). What was
// accepted is decided by the writes the store committed, read back after
// the run, not by these.
const (
	WriteCommitted   = "committed"    // the transaction committed
	WriteStale       = "stale"        // the fence refused it: fence.Guard a token below its own (fence.ErrStaleToken), or ZooKeeper a lease whose node was gone (zklock.FencedError, ErrLeaseLost); nothing written
	WriteLockTimeout = "lock-timeout" // PostgreSQL's lock_timeout: another transaction held the resource's rows
	WriteAborted     = "aborted"      // the store ended the transaction or its connection (PostgreSQL: idle in transaction past its timeout, a paused writer; ZooKeeper: the connection lost before the answer, or the session expired): it may have committed, the read-back says
	WriteBusy        = "busy"         // SQLite's busy timeout ran out
	WriteTimeout     = "timeout"      // the writer's own deadline passed
	WriteError       = "error"        // anything else (a violation: VStoreError)
	WriteUnreported  = "unreported"   // a committed row whose writer never reported (killed after the commit); set by the checker
)

// Store is the fenced store in the campaign process, which the hub calls
// under its lock on each worker's write, so that the history's order is
// the store's. The campaign's is in memory (memStore); the checker
// verifies, with porcupine, that the verdicts recorded in the history are
// those of a sequential fenced register taken in an order consistent with
// real time (see checkStoreHistory), so a store that reorders or loses
// writes fails the campaign instead of fooling it.
//
// A store in a real database or in ZooKeeper (Config.Store) is not a
// Store: its writes are transactions through package fence (sqlStore) or
// zklock.Client.Fenced (zkStore), and the checker takes what was accepted,
// and in which order, from the writes the store committed, not from
// anyone's verdicts.
type Store interface {
	// Write judges a write of a lease with token tok on resource, in mode:
	// ModeExclusive (writers of exclusive, write, election and
	// multi-resource leases), ModeRead (readers) or ModeSemaphore. It
	// returns whether the write is accepted and the largest token the
	// store had seen on resource before it.
	Write(resource, mode string, tok int64) (accepted bool, prev int64)
}

// memStore is the campaign's fenced store. Per resource it keeps the
// largest token of any accepted write (all) and of any accepted writer
// (writers):
//
//   - a writer is accepted if its token is at least all: nobody queued
//     behind it has written yet;
//   - a reader is accepted if its token is above writers: no writer
//     queued behind it has written yet (readers may interleave);
//   - a semaphore holder is always accepted: tokens cannot fence n
//     holders at once (a lost holder and a live one are told apart only by
//     which nodes still exist), so the checker judges semaphore writes by
//     who held when, and reports those of holders paused or told of loss.
type memStore struct {
	mu    sync.Mutex
	state map[string]fenceState
}

// fenceState is a resource's state in the fenced register.
type fenceState struct {
	All, Writers int64
}

func newMemStore() *memStore { return &memStore{state: map[string]fenceState{}} }

func (s *memStore) Write(resource, mode string, tok int64) (bool, int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.state[resource]
	next, ok := memFenceSpec(st, mode, tok)
	if canary.On(canary.StoreAcceptsAnyToken) {
		ok = true // the canary: fencing off
	}
	s.state[resource] = next
	return ok, st.All
}

// memFenceSpec is the in-memory fenced register's sequential
// specification: the verdict on a write and the state after it.
func memFenceSpec(st fenceState, mode string, tok int64) (fenceState, bool) {
	var ok bool
	switch mode {
	case ModeRead:
		ok = tok > st.Writers
	case ModeSemaphore:
		ok = true
	default:
		ok = tok >= st.All
		if ok {
			st.Writers = max(st.Writers, tok)
		}
	}
	if ok {
		st.All = max(st.All, tok)
	}
	return st, ok
}

// dbFenceSpec is the specification of the store in a database: package
// fence's table keeps, per resource, the largest token of an accepted
// writer and refuses a writer below it (fence.Guard); readers and
// semaphore holders are not fenced (fence refuses their leases as
// unfenceable: several hold at once), so their writes are always
// accepted and move nothing.
func dbFenceSpec(st fenceState, mode string, tok int64) (fenceState, bool) {
	if mode == ModeRead || mode == ModeSemaphore {
		return st, true
	}
	if tok < st.Writers {
		return st, false
	}
	st.Writers = tok
	st.All = max(st.All, tok)
	return st, true
}

// zkFenceSpec is the specification of the register in ZooKeeper (StoreZK):
// whether a write's verdict (accepted) fits the register in state st, and
// the state after it. The fence there compares no tokens: a write is one
// multi that commits only while each of its lease's lock nodes exists
// (zklock.Client.Fenced), so
//
//   - a refusal always fits: a lease's node may be gone at any moment (an
//     expired session, an operator's delete), before anyone with a larger
//     token has written. dbFenceSpec, which refuses only below a stored
//     token, would call such a refusal wrong; whether the writer had been
//     told (or paused, or its node deleted) is classifyStale's to judge;
//   - an acceptance must still fit memFenceSpec's token order, readers
//     included, which is stronger than dbFenceSpec's.
//
// Why the commits of a resource are token-ordered though the fence only
// asks "does my node exist": tokens are czxids, so within one queue a
// smaller token is an earlier node, ahead in the queue (a queue's parent
// is removed only when empty, so a node of an earlier parent is gone
// before any node of a later one exists). Let a write of lease A commit
// at zxid zA, and then one of lease B at zB > zA, with tokens tB < tA,
// where B's node is ahead of A's in a way that kept A waiting: B is a
// writer, or A is (an exclusive lock, a write lock or a leader holds only
// when first; a reader holds only when no writer is ahead of it). A held
// before it wrote, so its client had seen B's node deleted: that delete
// was committed before A's multi was sent, and the leader numbers
// transactions in the order it proposes them, so its zxid is below zA.
// Node names are never reused (each create has its own protected UUID),
// so B's node did not exist at zB, and B's check failed: a contradiction. Hence, per resource in commit order, a
// writer's token is at least every token accepted before it, and a
// reader's is above every writer's: memFenceSpec's rule. Two readers are
// not ordered (neither waits for the other), and neither are semaphore
// holders: for those the fence gives what tokens cannot, that every
// accepted write came from a holder whose node still existed, so it
// still held; the checker counts such writes as holders whatever their
// writer's standing (checkSharedWrites).
func zkFenceSpec(st fenceState, mode string, tok int64, accepted bool) (fenceState, bool) {
	if !accepted {
		return st, true
	}
	return memFenceSpec(st, mode, tok)
}
