package chaos

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zklockkit/zklockkit/zktest"
)

// Run runs a campaign: it starts a 3-node ensemble and the workers,
// injects faults until the targets are reached (or MaxDuration passes),
// runs the load phase if the campaign has one, heals everything, lets the
// workers wind down, looks for orphan lock nodes, stops the workers and
// checks the history. The report is also
// written to Dir (report.json, report.txt). Run returns an error only when
// the campaign could not be run; violations and missed targets are in the
// report (Report.Pass).
//
// The workers are this very binary, re-executed: its main (or TestMain)
// must call RunWorkerIfChild first.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	cfg = cfg.withDefaults()
	if err := zktest.Installed(); err != nil {
		return nil, err
	}
	if err := CheckStore(cfg.Store); err != nil {
		return nil, err
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	dir := cfg.Dir
	if dir == "" {
		if dir, err = os.MkdirTemp("", "zklock-chaos-"); err != nil {
			return nil, err
		}
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	progress := func(format string, args ...any) {
		if cfg.Progress != nil {
			fmt.Fprintf(cfg.Progress, "%s chaos: %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
		}
	}
	started := time.Now()
	progress("starting a 3-node ensemble (tickTime %v) in %s", cfg.TickTime, dir)
	ens, err := zktest.StartEnsemble(3, zktest.WithTickTime(cfg.TickTime), zktest.WithDir(filepath.Join(dir, "zk")),
		zktest.WithForceSync(false), zktest.WithLinkProxies())
	if err != nil {
		return nil, err
	}
	defer ens.Close()
	h, err := newHub(filepath.Join(dir, "history.jsonl"))
	if err != nil {
		return nil, err
	}
	defer h.Close()
	var db *dbStore
	if cfg.Store != StoreMemory && cfg.Store != StoreZK {
		progress("starting the %s store", cfg.Store)
		if db, err = startDBStore(ctx, cfg.Store, dir); err != nil {
			return nil, err
		}
		defer db.Close()
		if db.workerDSN == "" {
			h.db = db.store
		}
	}
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x5eed))
	root := fmt.Sprintf("/zklock-chaos-%08x", rng.Uint32())
	base := workerSpec{
		Hub: h.Addr(), Root: root, SessionTimeout: cfg.SessionTimeout, AcquireTimeout: 3 * cfg.SessionTimeout,
		HangGrace: cfg.HangGrace, Steps: cfg.Steps, Work: cfg.Work, LongPercent: cfg.LongPercent, Seed: cfg.Seed,
		LocalPeriod: cfg.PhantomPeriod, Lanes: cfg.Lanes, Store: cfg.Store,
	}
	if db != nil && db.workerDSN != "" {
		base.StoreDSN, base.StoreConns = db.workerDSN, workerStoreConns
	}
	var rw, elections []string
	var sems []semSpec
	var multi [][]string
	base.Resources, rw, sems, elections, multi = resourceNames(cfg.Resources)
	var zs *zkStore
	if cfg.Store == StoreZK {
		names := slices.Concat(base.Resources, rw, elections, loadResources(cfg.Load.Resources))
		for _, s := range sems {
			names = append(names, s.Name)
		}
		for _, set := range multi {
			names = append(names, set...)
		}
		progress("installing the zookeeper store's registers under %s", root+"-store")
		if zs, err = startZKStore(ens.Addrs(), root+"-store", names); err != nil {
			return nil, err
		}
		base.StoreRoot = zs.root
	}
	if !cfg.NoRecipes {
		base.RW, base.Sems, base.Elections, base.Multi, base.Probe = rw, sems, elections, multi, true
	}
	fl, err := newFleet(exe, dir, base, h, ens.Addrs(), cfg.Workers)
	if err != nil {
		return nil, err
	}
	defer fl.closeProxies()
	rec := cfg
	rec.Progress = nil
	cfgJSON, _ := json.Marshal(rec)
	h.record(Event{Kind: EvNote, Detail: "campaign " + string(cfgJSON)})
	if err := fl.start(); err != nil {
		fl.stop(5 * time.Second)
		return nil, err
	}
	defer fl.stop(10 * time.Second)
	if err := waitStarted(h, cfg.Workers, time.Minute); err != nil {
		return nil, err
	}
	progress("%d workers up; injecting faults", cfg.Workers)

	// Fault phase. The queue snapshots, for the phantom-node check, run
	// alongside it.
	stopSnapshots := snapshotQueues(ens.Addrs(), root, h, cfg.PhantomPeriod)
	nem := &nemesis{session: cfg.SessionTimeout, fl: fl, ens: ens, hub: h, root: root, counts: map[FaultKind]int{},
		aimed: map[FaultKind]map[string]int{}}
	opConn, err := dialQuiet(ens.Addrs())
	if err != nil {
		return nil, err
	}
	defer opConn.Close()
	nem.conn = opConn
	var procKinds, serverKinds, opKinds []FaultKind
	for _, k := range cfg.Faults {
		switch {
		case k == FaultOpDelete:
			opKinds = append(opKinds, k)
		case k.Server():
			serverKinds = append(serverKinds, k)
		default:
			procKinds = append(procKinds, k)
		}
	}
	h.record(Event{Kind: EvPhase, Detail: "main"})
	stopStalls := watchStalls(func(e Event) { e.Detail = "campaign"; h.record(e) })
	defer stopStalls()
	stopLatency := watchServerLatency(ens.Servers, func(e Event) { h.record(e) })
	defer stopLatency()
	nctx, stopNemesis := context.WithCancel(ctx)
	var lanes sync.WaitGroup
	for i, ks := range [][]FaultKind{procKinds, serverKinds, opKinds} {
		if len(ks) == 0 {
			continue
		}
		lanes.Add(1)
		go func() {
			defer lanes.Done()
			nem.lane(nctx, ks, rand.New(rand.NewPCG(cfg.Seed, uint64(i+1))))
		}()
	}
	deadline := started.Add(cfg.MaxDuration)
	tick := time.NewTicker(time.Second)
	lastReport, lastQuiet := time.Now(), time.Now()
	for done := false; !done; {
		select {
		case <-ctx.Done():
			done = true
		case <-tick.C:
			met := h.acquisitions() >= cfg.Acquisitions
			for _, k := range cfg.Faults {
				met = met && nem.count(k) >= cfg.perKind(k)
			}
			if met || time.Now().After(deadline) {
				done = true
			}
			if time.Since(lastQuiet) >= cfg.QuietEvery {
				// Lanes finish the fault they are in, then rest.
				lastQuiet = time.Now()
				nem.quietUntil.Store(lastQuiet.Add(cfg.Quiet).UnixNano())
				h.record(Event{Kind: EvNote, Detail: fmt.Sprintf("quiet period: no new fault for %v", cfg.Quiet)})
			}
			if time.Since(lastReport) >= 10*time.Second {
				lastReport = time.Now()
				progress("%s: %d acquisitions, faults %v", time.Since(started).Round(time.Second), h.acquisitions(), nem.snapshot())
			}
		}
	}
	tick.Stop()
	if cfg.Load.Sessions > 0 && ctx.Err() == nil {
		runLoad(ctx, cfg, h, fl, nem, progress)
	}
	stopNemesis()
	lanes.Wait()
	stopSnapshots()
	h.record(Event{Kind: EvPhase, Detail: "wind-down"})

	// Wind down: heal, let every worker finish, look for leftovers.
	progress("healing and winding down")
	fl.heal()
	for _, s := range ens.Servers {
		if !s.Running() {
			_ = startWithRetry(s)
		}
	}
	if err := ens.WaitForQuorum(time.Minute); err != nil {
		h.record(Event{Kind: EvNote, Detail: "no quorum at wind-down: " + err.Error()})
	}
	for _, p := range fl.quiesce(base.AcquireTimeout + 2*cfg.SessionTimeout + 30*time.Second) {
		h.record(Event{Kind: EvNote, Proc: p, Outcome: VNotQuiesced, Detail: fmt.Sprintf("worker proc %d did not quiesce", p)})
	}
	for _, o := range findOrphans(ens.Addrs(), root, h.quiesced(), 2*cfg.SessionTimeout+5*time.Second) {
		h.record(o)
	}
	fl.stop(15 * time.Second)
	if db != nil {
		// Every worker has stopped: nothing writes any more.
		rctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		db.readBack(rctx, h)
		cancel()
	}
	if zs != nil {
		zs.readBack(ens.Addrs(), h)
	}
	stopLatency()
	recordServerStops(h, ens.Servers)
	h.record(Event{Kind: EvNote, Detail: "campaign end"})

	evs, err := h.readHistory()
	if err != nil {
		return nil, err
	}
	rep := Check(evs, Params{SessionTimeout: cfg.SessionTimeout, TickTime: cfg.TickTime, HangGrace: cfg.HangGrace, Store: cfg.Store})
	rep.Campaign, rep.Workers, rep.Resources, rep.Lanes = cfg.Name, cfg.Workers, cfg.Resources, cfg.Lanes
	rep.SessionTimeoutMS = cfg.SessionTimeout.Milliseconds()
	rep.StoreKind = cfg.Store
	rep.DurationSec = time.Since(started).Seconds()
	rep.Seed, rep.Dir = cfg.Seed, dir
	rep.setTargets(cfg)
	if err := writeReport(dir, rep); err != nil {
		return rep, err
	}
	progress("done in %s: pass=%t (the history file's slowest write took %v)", time.Since(started).Round(time.Second), rep.Pass,
		h.file.Slowest().Round(time.Millisecond))
	return rep, nil
}

// runLoad runs the load phase: it hands each worker its share (new
// workers get it at start), waits Duration, and records its start and end.
func runLoad(ctx context.Context, cfg Config, h *hub, fl *fleet, nem *nemesis, progress func(string, ...any)) {
	n := len(fl.slots)
	res := loadResources(cfg.Load.Resources)
	share := loadSpec{Sessions: (cfg.Load.Sessions + n - 1) / n, Waiters: (cfg.Load.Waiters + n - 1) / n, Resources: res,
		AcquireTimeout: cfg.Load.AcquireTimeout}
	h.setLoad(share)
	h.record(Event{Kind: EvPhase, Detail: "load", Target: fmt.Sprintf("%d sessions, %d waiters over %d workers, %d resources",
		share.Sessions*n, share.Waiters*n, n, len(res))})
	progress("load phase: %d sessions, %d waiters, for %v", share.Sessions*n, share.Waiters*n, cfg.Load.Duration)
	fl.startLoad()
	end := time.Now().Add(cfg.Load.Duration)
	for time.Now().Before(end) && ctx.Err() == nil {
		sleepCtx(ctx, min(cfg.QuietEvery, time.Until(end)))
		if time.Until(end) > cfg.Quiet {
			nem.quietUntil.Store(time.Now().Add(cfg.Quiet).UnixNano())
			h.record(Event{Kind: EvNote, Detail: fmt.Sprintf("quiet period: no new fault for %v", cfg.Quiet)})
		}
	}
	h.record(Event{Kind: EvPhase, Detail: "load-end"})
}

// loadResources names the load phase's n resources.
func loadResources(n int) []string {
	res := make([]string, n)
	for i := range res {
		res[i] = fmt.Sprintf("load-%d", i)
	}
	return res
}

func (n *nemesis) snapshot() map[FaultKind]int {
	n.mu.Lock()
	defer n.mu.Unlock()
	m := make(map[FaultKind]int, len(n.counts))
	for k, v := range n.counts {
		m[k] = v
	}
	return m
}

// waitStarted waits until n workers have reported start.
func waitStarted(h *hub, n int, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		started := h.startedCount()
		if started >= n {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("chaos: only %d of %d workers connected after %v (see worker-*.log)", started, n, timeout)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// findOrphans lists the lock nodes left under root once every worker has
// quiesced. A node may linger for a moment (a background delete, or the
// session of a killed worker not yet expired): it counts as an orphan only
// if it is still there after wait.
func findOrphans(addrs []string, root string, live map[int]int64, wait time.Duration) []Event {
	conn, err := dialQuiet(addrs)
	if err != nil {
		return []Event{{Kind: EvOrphan, Target: root, Detail: "cannot check: " + err.Error()}}
	}
	defer conn.Close()
	owner := map[int64]int{}
	for p, s := range live {
		owner[s] = p
	}
	deadline := time.Now().Add(wait)
	for {
		nodes, err := lockNodes(conn, root)
		if err == nil && len(nodes) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			if err != nil {
				return []Event{{Kind: EvOrphan, Target: root, Detail: "cannot list: " + err.Error()}}
			}
			var out []Event
			for _, p := range slices.Sorted(maps.Keys(nodes)) {
				s := nodes[p]
				detail := "owner session is no live worker's"
				if proc, ok := owner[s]; ok {
					detail = fmt.Sprintf("owner is live worker proc %d", proc)
				}
				out = append(out, Event{Kind: EvOrphan, Target: p, Session: s, Proc: owner[s], Detail: detail})
			}
			return out
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// lockNodes returns every child of every queue under root, with its
// ephemeral owner.
func lockNodes(conn *zk.Conn, root string) (map[string]int64, error) {
	queues, _, err := conn.Children(root)
	if errors.Is(err, zk.ErrNoNode) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	out := map[string]int64{}
	for _, q := range queues {
		kids, _, err := conn.Children(root + "/" + q)
		if errors.Is(err, zk.ErrNoNode) {
			continue
		}
		if err != nil {
			return nil, err
		}
		for _, k := range kids {
			p := root + "/" + q + "/" + k
			ok, st, err := conn.Exists(p)
			if err != nil {
				return nil, err
			}
			if ok {
				out[p] = st.EphemeralOwner
			}
		}
	}
	return out, nil
}

// dialQuiet connects to the ensemble at addrs, logging nothing.
func dialQuiet(addrs []string) (*zk.Conn, error) {
	conn, _, err := zk.Connect(addrs, 10*time.Second, zk.WithLogInfo(false), zk.WithLogger(quietLogger{}))
	return conn, err
}

type quietLogger struct{}

func (quietLogger) Printf(string, ...any) {}

// writeReport writes report.json and report.txt (tables and violations).
func writeReport(dir string, r *Report) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "report.json"), b, 0o644); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(dir, "report.txt"))
	if err != nil {
		return err
	}
	r.WriteTable(f)
	r.WriteViolations(f)
	return f.Close()
}
