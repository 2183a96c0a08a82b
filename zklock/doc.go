// Package zklock provides distributed locks on Apache ZooKeeper: one
// session per process (Client), any number of locks over it, each acquire
// returning a Lease with a fencing token and a loss signal.
//
// # Quick start
//
//	c, err := zklock.Connect(ctx, []string{"127.0.0.1:2181"})
//	if err != nil { ... }
//	defer c.Close()
//
//	lease, err := c.Acquire(ctx, "accounts/42")   // waits; honours ctx
//	if err != nil { ... }
//	defer lease.Release(context.WithoutCancel(ctx))
//	work(lease.Context(ctx), lease.Token())        // ctx ends if the lease is lost
//
// # Protocol
//
// Resource r's queue is the znode <root>/<EscapeResource(r)>, a CONTAINER
// node that ZooKeeper removes once empty. An acquire creates an
// EPHEMERAL_SEQUENTIAL child with Curator's protected name
// "_c_<uuid>-lock-<seq>", lists the queue once (the list request follows
// the create on the wire without waiting for its reply: the server answers
// a session in order, so the listing includes the new node at no extra
// round trip), and, unless first, sets a data watch on the nearest node
// ahead of it only, so each release wakes one waiter (no herd). When that
// node goes and it was the only one ahead in the waiter's snapshot, the
// waiter holds the lock with no further round trip; for that it also
// watches its own node while it waits, so that a deletion of its node by
// someone else cannot go unseen. Waiters further back learn of such a
// deletion at their next listing.
//
// Waiters of one Client in one queue hand the lock on among themselves. A
// waiter whose nearest node ahead is one of its own client's waits for it
// with no watch on it: the client learns by itself when its own node goes.
// If that node had held an exclusive, write or election lock, nothing was
// ahead of it and nothing can come ahead of it (sequence numbers only
// grow), so its going hands the lock on with no request at all: n
// goroutines of one process queued on one resource cost the server the
// releases' deletes and nothing more. Such a waiter watches its own node
// while it waits, and holds only once the lease ahead has ended, so that
// holder is told first. Queue order across clients is unchanged.
//
// Many acquires at once on one client (a server locking one account per
// request) list the queue after the create rather than pipelined with it.
// Where the queue's data is ours and empty (not a raw path, not a
// semaphore), such a create is one transaction with a rewrite of that
// empty data, whose reply carries the queue's child count as of the
// create: a queue holding our node alone is ours with no listing. Its
// data stays empty; its data version counts these acquires. A queue of two
// is listed with a child watch, and the waiter waits on that alone (no
// watch on the node ahead or on its own) until the queue's first change,
// then lists it again: two requests to queue (the transaction, the
// listing) where zk.Lock makes three, and one listing to take the lock.
// Other waiters whose node ahead is the last obstacle take the lock with
// no round trip when it goes, trusting a watch on their own node; the
// order of events that trusts holds within one connection: a waiter that
// lost its connection since its watch was set lists its queue instead.
// Read/write locks use Curator's "__READ__"/"__WRIT__" names and kazoo's
// "__lock__"/"__rlock__" names are understood, so Java and Python services
// can share locks.
//
// # Fencing tokens and lost nodes
//
// A lease's token is its node's czxid, taken from the create reply itself
// (go-zookeeper drops it; the client reads it off the wire), so an
// uncontended acquire costs the same three requests as go-zookeeper's
// zk.Lock (create, list, delete) in the time of two round trips, since the
// list is pipelined, and two (the counted create and the delete) when other
// creates are in flight on the session. A held lease watches its own node and is lost at once
// if someone else deletes it; a lease whose node has no watch yet when it
// is granted sets it only once it has been held for WithNodeWatchDelay
// (10ms by default), which keeps the watch's read and notification off
// short critical sections.
//
// # Safety
//
// A lease is lost (Done closed, Err a *LostError, Lease.Context cancelled)
// when its session expires, when its node is deleted by someone else, and
// also when the client cannot prove that ZooKeeper's leader has heard from
// it recently enough: the client sends a sync through the leader every
// tenth of the session timeout while it has lock nodes (an answered ping
// proves only that its server heard it, and a follower cut off from the
// leader goes on answering), and gives leases up at the proven moment plus
// the negotiated session timeout minus a margin (WithLossMargin), before
// ZooKeeper can hand the lock to anyone else. A process paused for longer
// than that (GC, SIGSTOP) cannot be warned in time: guard the protected
// resource with the fencing token (Lease.Token), which grows with every
// lease the ensemble grants.
//
// # Liveness
//
// Every wait makes progress or ends with a typed error within a stated
// bound:
//
//   - A try (Try, TryAcquire) never waits for the queue, nor on ZooKeeper
//     past min(session timeout/3, 1s): while ZooKeeper is away it answers
//     an error matching ErrUnavailable within that bound. Try and MaxWait
//     exclude each other (ErrInvalidOption).
//   - A waiter that the recipe lets hold holds within one hand-off,
//     whichever holder left and in whatever order. A semaphore is
//     work-conserving: its first waiter watches every holder, the others
//     their predecessor, and a node that starts holding with nodes behind
//     it rewrites its data once so that its successor looks again.
//   - A plain acquire waits through a ZooKeeper outage: only its context
//     and MaxWait bound it (the error then also matches ErrUnavailable).
//     A failed or cancelled acquire deletes its node on the spot for at
//     most min(session timeout/3, 1s), then in the background.
//   - A waiter whose node vanishes (deleted by someone else, or gone with
//     an expired session) queues again with a new node, which starts clean
//     (its own watch, its own token). A multi-resource acquire that loses
//     a part it holds while waiting for another gives every part back and
//     queues again for all of them, within the same context and MaxWait.
//
// # Other recipes' nodes
//
// A queue child with a sequence number and a layout zklock does not know
// (ZooKeeper's own WriteLock recipe, "x-<sessionId>-<seq>", or any other)
// counts as an exclusive node in sequence order; a child with no sequence
// number fails the acquire with ErrUnknownNode. No lock is granted past a
// node zklock does not understand.
//
// # Waits and losses, seen from outside
//
// Each lock node carries its owner (host, pid, label) and, for a waiter,
// its acquire's deadline and its client's recent hold-time median of the
// resource (Owner). Inspect turns them into estimates anyone can read:
// QueueNode.Turns, Queue.HoldMedian, QueueNode.EstimatedWait and
// QueueNode.GivesUpFirst. A FlightRecorder (WithFlightRecorder) writes
// the last seconds of the execution trace and each client's wire history
// to a directory when a lease is lost. docs/operations.md says more.
//
// # Errors
//
// Errors match the package's sentinel values with errors.Is: ErrLocked,
// ErrWaitTimeout, ErrInvalidResource, ErrReleased, ErrLeaseLost,
// ErrSessionExpired, ErrClosed, ErrUnavailable, ErrUpgrade, ErrNoAuth,
// ErrInvalidOption, ErrLimitMismatch, ErrValueTooLarge,
// ErrDowngradeBlocked, ErrNoLeader, ErrUnknownNode, ErrFlightRecorderBusy,
// and the context's errors.
package zklock
