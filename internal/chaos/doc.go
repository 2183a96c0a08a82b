// Package chaos runs Jepsen-style fault campaigns against zklock and checks
// their histories. It backs the zklock-chaos command (make chaos) and the
// TestIntegration_ChaosSmoke test.
//
// # The campaign
//
// Run starts a 3-node ZooKeeper ensemble on loopback (zktest; tickTime
// 500ms, and zookeeper.forceSync=no for throughput: a killed server loses
// nothing the operating system already has, only a machine crash would)
// and a fleet
// of worker processes: the campaign binary re-executes itself (see
// RunWorkerIfChild), and each worker has its own zklock Client that reaches
// each ensemble member through its own zktest.Proxy, so a fault on a
// worker's proxies cuts that worker, and only it, off from every server.
//
// Workers loop over a few resources, in two acquire loops (lanes) sharing
// the worker's Client, so that waiters of one client queue behind each
// other and the lock passes between them without ZooKeeper: acquire (some
// with Try, some with a short deadline that cancels the wait), then a
// critical section of fenced writes, then release. A write goes to the fenced store, which lives in
// the campaign process and keeps, per resource, the largest fencing token
// (Lease.Token, the lock node's czxid) it has seen, refusing any lower one.
// The critical section registers its token at once, then repeats "check
// the lease, work, write": the check and the write are not atomic, as in
// any real program, so a holder paused between them sends a stale write,
// which fencing must refuse. A few leases are held for about two session
// timeouts, and faults on workers aim at them.
//
// The nemesis, in two lanes (worker faults, server faults), one fault at a
// time per lane, always the kind injected least so far:
//
//   - kill: SIGKILL a holder; a new worker takes its slot.
//   - pause: SIGSTOP a holder for 1.5–2 session timeouts, then SIGCONT.
//   - blackhole: hold every byte between a holder and all servers for half,
//     or one and a half, session timeouts.
//   - drop: close a holder's connections and refuse new ones for a while.
//   - slow: delay a holder's traffic (up to 40% of the session timeout
//     each way) for one and a half session timeouts.
//   - leader-kill: SIGKILL the ensemble's leader, start it again.
//   - server-restart: restart a follower.
//
// When the targets are reached (acquisitions, faults of each kind) the
// campaign heals everything, asks the workers to stop acquiring with their
// sessions still open, lists the lock znodes left (waiting out the sessions
// of killed workers), stops the workers and checks the history.
//
// # The history
//
// Every event, from workers (acquire, acquired, lost, release, ...), the
// store (each write and its verdict) and the nemesis (fault, heal, died),
// is numbered by the store under one lock and written to history.jsonl.
// Each worker also reports, about once a second, the lock nodes its client
// knows it has (local), and while the nemesis runs the campaign lists every
// lock znode with its owner session, from its own connection, about once a
// second (queues).
// Times are the machine's wall clock, shared by every process.
//
// # The checker
//
// Check is a pure function of a history. It fails the campaign on:
//
//   - overlapping critical sections whose fenced writes were both accepted:
//     per resource, the accepted writes of two leases interleave;
//   - double grants: a lease granted while the previous holder had neither
//     started its release, nor been told of its loss, nor died;
//   - late loss signals: a holder told of its loss only after the next
//     holder acquired, for any fault but a pause (a stopped process cannot
//     be told; fencing must refuse its late writes, and does);
//   - writes refused from a holder in good standing (neither paused nor
//     told of loss): someone else held the lock;
//   - phantom lock znodes during the run: a znode owned by a live
//     session, shown by the queue snapshots, that the session's own client
//     left out of its reports of its lock nodes for PhantomGrace (three
//     session timeouts) or longer — a node the client lost track of, which
//     blocks the queue until the session ends (time when the worker was
//     stopped or the ensemble could not be read does not count);
//   - orphan lock znodes after the run, acquires that returned more than
//     HangGrace after their deadline, worker crashes.
//
// It also counts stale writes refused by fencing, and measures for every
// lost lease the margin between the loss signal and the next holder's
// acquire, by the fault it is blamed on.
package chaos
