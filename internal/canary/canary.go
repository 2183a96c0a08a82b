package canary

import "slices"

// Name names one canary: one defect that a build with the tag zklock_canary
// can reintroduce.
type Name string

// The canaries. Each is a defect zklockkit once had, or one a lock recipe
// is known to be prone to.
const (
	// RequeueNoWatch: a waiter that queues again (its node deleted by an
	// operator, or its session expired) takes its new node for watched,
	// as if the old node's watch carried over: a lease on it is never
	// told of its node's deletion, and a direct hand-off is taken on
	// trust (issue #18 item 0; DESIGN's "Re-queue starts clean").
	RequeueNoWatch Name = "requeue-no-watch"
	// LostCreateNoSync: after a create's reply was lost, the queue is
	// listed without a sync first, so a create the leader commits late
	// is not found: the acquire creates again, and keeps the first node
	// it never found in the queue, ahead of its own (before 9ec7003).
	LostCreateNoSync Name = "lost-create-no-sync"
	// DowngradeLost: Lease.Downgrade returns a read lease that was lost
	// while the write node's delete waited for ZooKeeper (2d46c3b).
	DowngradeLost Name = "downgrade-lost"
	// NoLossMargin: leases are given up at the proven anchor plus the
	// session timeout, with no margin before the moment ZooKeeper could
	// expire the session.
	NoLossMargin Name = "no-loss-margin"
	// OldSessionGrant: a session change does not drop the nodes of the
	// session that ended: their leases are not told, and their waiters
	// go on with nodes of a session that is gone (the class of
	// CURATOR-206 and CURATOR-604).
	OldSessionGrant Name = "old-session-grant"
	// SemaphoreNAhead: a semaphore waiter watches only the node limit
	// places ahead of it, so a slot freed by another holder wakes nobody
	// (issue #18 item 1).
	SemaphoreNAhead Name = "semaphore-n-ahead"
	// TryUnbounded: a try waits on ZooKeeper as long as its caller's
	// context lets it, not min(session timeout/3, 1s) (issue #18 item 2).
	TryUnbounded Name = "try-unbounded"
	// StoreAcceptsAnyToken: the fenced store accepts every write, the
	// campaign's in memory and package fence's Guard alike (fencing off).
	StoreAcceptsAnyToken Name = "store-accepts-any-token"
	// DivergedListingTrusted: a waiter decides on a listing that proves
	// its server diverged (two live nodes of one queue with one sequence
	// number), as before issue 32 §3.
	DivergedListingTrusted Name = "diverged-listing-trusted"
	// SemaphorePastOtherKinds: a semaphore node holds when fewer nodes
	// than its limit are ahead, whatever their kind: past an exclusive,
	// write or read node (before 8fe99bf).
	SemaphorePastOtherKinds Name = "semaphore-past-other-kinds"
)

// All lists every canary, in the order of issue 32, then as defects were
// found.
var All = []Name{RequeueNoWatch, LostCreateNoSync, DowngradeLost, NoLossMargin, OldSessionGrant,
	SemaphoreNAhead, TryUnbounded, StoreAcceptsAnyToken, DivergedListingTrusted, SemaphorePastOtherKinds}

// Known reports whether n names a canary.
func Known(n Name) bool { return slices.Contains(All, n) }

// EnvVar is the environment variable that names the canary a build with
// the tag zklock_canary turns on.
const EnvVar = "ZKLOCK_CANARY"

// Tag is the build tag that compiles the canaries in.
const Tag = "zklock_canary"
