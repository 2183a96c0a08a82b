// Package chaos runs Jepsen-style fault campaigns against zklock and checks
// their histories. It backs the zklock-chaos command (make chaos) and the
// TestIntegration_ChaosSmoke test.
//
// # The campaign
//
// Run starts a 3-node ZooKeeper ensemble on loopback (zktest; tickTime
// 500ms, and zookeeper.forceSync=no for throughput: a killed server loses
// nothing the operating system already has, only a machine crash would),
// its server-to-server links behind zktest's link proxies so that the
// ensemble can be partitioned, and a fleet of worker processes: the
// campaign binary re-executes itself (see RunWorkerIfChild), and each
// worker has its own zklock Client that reaches each ensemble member
// through its own zktest.Proxy, so a fault on a worker's proxies cuts that
// worker, and only it, off from every server. Every event a worker sends
// names the member its session is on (go-zookeeper's Conn.Server).
//
// Each worker runs one acquire loop (lane) per recipe, all sharing the
// worker's Client: two exclusive lanes (so that waiters of one client
// queue behind each other and the lock passes between them without
// ZooKeeper; some acquires with Try, some with a short deadline that
// cancels the wait), a read/write lane (a third of its acquires write), a
// downgrade lane (write lease, then Downgrade to a read lease), a
// semaphore lane (limits 2 and 3, some holders staying a few hundred
// milliseconds), an election lane (Campaign; a leader's term is a fraction
// of a second), an AcquireAll lane over the overlapping sets {A,B}, {B,C},
// {C,A}, and a probe lane of try-acquires on the exclusive resources.
//
// A lease's critical section writes to the fenced store, by default in
// memory in the campaign process (Store). Per resource it keeps the
// largest token (Lease.Token, the lock node's czxid; for AcquireAll each
// part's) of any accepted write and of any accepted writer: a writer
// (exclusive, write, leader, AcquireAll part) is refused below the former,
// a reader at or below the latter; a semaphore holder is never refused
// (tokens cannot fence n holders). The section registers its token at
// once, then repeats "check the lease, work, write": the check and the
// write are not atomic, as in any real program, so a holder paused between
// them sends a stale write, which fencing must refuse. A few leases are
// held for about two session timeouts, and faults on workers aim at them.
//
// # The store in a database
//
// With Config.Store set to StorePostgres or StoreSQLite the writes go to a
// real database through package fence instead. Each write is one
// transaction: a writer's begins with fence.Guard of its token (as
// fence.NewToken(resource, token): each AcquireAll part with its own),
// then moves the resource's register row to its next version n and logs
// the write with that n; a reader's or a semaphore holder's does not guard
// (fence refuses their leases: several hold at once). PostgreSQL (a
// throwaway cluster from internal/pgtest) is written by the workers, each
// on connections of its own, so a paused worker is paused inside its
// transaction, holding the resource's rows: the server ends such a
// transaction after a second idle (idle_in_transaction_session_timeout),
// and a writer waiting for the rows gives up after two (lock_timeout).
// SQLite (a file in the campaign directory) is written by the hub for the
// workers, on one connection: its one write lock covers the whole file and
// nothing would end a stopped process's transaction. After the run the
// campaign reads every committed row back into the history (EvCommitted,
// in each resource's commit order), and the checker decides from those
// rows, not from anyone's verdicts, which writes were accepted and in
// which order (the register row's lock orders them whatever the fence
// does).
//
// # The store in ZooKeeper
//
// With Config.Store set to StoreZK the writes go to znodes on the
// campaign's own ensemble, through zklock.Client.Fenced, as a service
// keeping its state in ZooKeeper would write them (zkStore). Each write,
// every recipe's, is one multi on the writer's own Client, fenced by its
// live lease: a check of each of the lease's lock nodes, the create of a
// persistent-sequential log entry under the resource's register znode,
// and a setData of the register (whose version counts the writes). A
// lease whose node is gone is refused by ZooKeeper itself (WriteStale),
// whether or not its holder knows. After the run the campaign reads each
// register's log back into the history as it does a database's rows, and
// the checker judges them by zkFenceSpec: a refusal may come at any
// moment (no token decides it), and what is accepted is token-ordered,
// readers against writers too.
//
// The nemesis, in three lanes (worker faults, ensemble faults, the
// operator), one fault at a time per lane, always the kind injected least
// so far; a worker fault aims at a holder of the recipe it hit least so
// far (every other kill at the election's leader):
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
//   - isolate-leader: cut the leader off from both followers.
//   - isolate-follower: cut off the follower most workers are on; half the
//     time those workers also lose their links to the other servers, so
//     their sessions sit on the minority side.
//   - bridge: cut the link between two servers; the third sees both.
//   - op-delete: delete a lock node from the operator's own session: a
//     holder's, a waiter's, and, after a waiter's, the new node of that
//     waiter once it holds.
//
// Partitions reset the links or silence them (half the time each) for half
// to two session timeouts. Every 40 seconds no fault starts for three
// session timeouts, so that the liveness figures have quiet samples.
//
// When the targets are reached (acquisitions, faults of each kind) the
// long campaign runs a load phase under the same faults: 200 more sessions
// over the workers and 5,200 acquire loops on 40 exclusive resources. Then
// the campaign heals everything, asks the workers to stop acquiring with
// their sessions still open, lists the lock znodes left (waiting out the
// sessions of killed workers), stops the workers and checks the history.
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
//     per resource, the accepted writes of two leases interleave (for a
//     read/write lock, a writer's with anyone's; for a semaphore, more
//     than its limit of holders in good standing);
//   - a grant beside a holder the recipe excludes (a writer, or a
//     semaphore's limit reached) that was neither paused nor told of loss;
//   - a Downgrade that let another writer in between its write lease and
//     its read lease;
//   - a failed AcquireAll whose client still had a node on one of its
//     resources a session timeout later (not all-or-nothing);
//   - a holder whose node the operator deleted that went on holding for
//     more than DeleteNotice (1s), unless paused or cut off (a lease whose
//     grant reached it after the delete, on a listing sent before it, is
//     such a holder; the holders let in beside it are no double grant);
//   - a stale write committed: per resource in the store's order, a
//     writer's write accepted below the token of a writer accepted before
//     it (in memory a reader's too, at or below it);
//   - a store history that porcupine finds no sequential fenced register
//     for (the verdicts recorded must be the specification's);
//   - in a database, rows that contradict their writers (a write told it
//     committed with no row, a write the fence refused with one) or
//     themselves, rows not read back, and a write that failed with an
//     error neither the fence nor the database's timeouts explain;
//   - a liveness figure over its target (see FigHandOff, FigFreeSlot,
//     FigHeal, FigTry, FigLeaderless): release to next holder and a free
//     slot left unclaimed ≤ 1s outside faults, heal to the first answer
//     (a grant, or a try told locked) of each worker the fault cut off ≤
//     the session timeout, a try's answer ≤ Params.TryBound always, a new leader
//     ≤ zklock.LeaderGapBound after the old one's death;
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
// Three verdicts are ZooKeeper's, listed with the others but not failing
// the run (Report.ZooKeeperVerdicts; findDivergence, storeWrites):
//
//   - server divergence (VDivergence): a znode that a synced snapshot left
//     out although snapshots before and after it listed it (the snapshots
//     read every member in turn; a sequential node never comes back once
//     deleted), or one sequence number given to two nodes of one queue:
//     the members disagree on what was committed. Such a node is judged
//     apart from phantoms;
//   - a verdict on a lease that stood on such a node (VDivergedLease): a
//     double grant, late loss signal, fenced holder in good standing,
//     reader/writer or semaphore overlap, downgrade gap or unnoticed
//     delete holds only if ZooKeeper keeps one history. What the fence
//     answers for (stale writes committed, interleaved accepted writes,
//     the store's history) is never excused;
//   - store divergence (VStoreDiverged), with the ZooKeeper store: a
//     member whose read-back differs from the majority's (the campaign
//     reads every member; quorumLog), or a write told committed whose log
//     entry, named in ZooKeeper's answer, holds another write.
//
// It also counts stale writes refused by fencing, and measures for every
// lost lease the margin between the loss signal and the next holder's
// acquire, by the fault it is blamed on.
package chaos
