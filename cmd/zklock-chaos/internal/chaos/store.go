package chaos

import (
	"sync"

	"github.com/zklockkit/zklockkit/internal/canary"
)

// Store is the fenced store in the campaign process, which the hub calls
// under its lock on each worker's write, so that the history's order is
// the store's. The campaign's is in memory (memStore); the checker
// verifies, with porcupine, that the verdicts recorded in the history are
// those of a sequential fenced register taken in an order consistent with
// real time (see checkStoreHistory), so a store that reorders or loses
// writes fails the campaign instead of fooling it.
//
// A store in a real database (Config.Store) is not a Store: its writes are
// transactions through package fence (sqlStore), and the checker takes
// what was accepted, and in which order, from the rows the database
// committed, not from anyone's verdicts.
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
