package chaos

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/zklockkit/zklockkit/zklock"
)

// workerEnv carries a worker's spec (JSON) to a re-executed campaign binary.
const workerEnv = "ZKLOCK_CHAOS_WORKER"

// workerSpec is everything a worker process needs.
type workerSpec struct {
	Hub            string        `json:"hub"`
	Servers        []string      `json:"servers"` // its own proxies, one per ensemble member
	Proc           int           `json:"proc"`
	Slot           int           `json:"slot"`
	Root           string        `json:"root"`
	Resources      []string      `json:"resources"`
	SessionTimeout time.Duration `json:"session_timeout"`
	AcquireTimeout time.Duration `json:"acquire_timeout"`
	HangGrace      time.Duration `json:"hang_grace"`
	Steps          int           `json:"steps"`
	Work           time.Duration `json:"work"`
	LongPercent    int           `json:"long_percent"`
	LocalPeriod    time.Duration `json:"local_period"` // between EvLocal reports
	Lanes          int           `json:"lanes"`        // exclusive acquire loops (default 1)
	Seed           uint64        `json:"seed"`
	// Recipes, each run by one lane of every worker (none when empty).
	RW        []string   `json:"rw,omitempty"`        // read/write resources (and downgrades)
	Sems      []semSpec  `json:"sems,omitempty"`      // semaphores
	Elections []string   `json:"elections,omitempty"` // elections
	Multi     [][]string `json:"multi,omitempty"`     // overlapping sets for AcquireAll
	Probe     bool       `json:"probe,omitempty"`     // a lane of try-acquires on the exclusive resources
	Load      *loadSpec  `json:"load,omitempty"`      // the load phase, when on from the start
	// Store is the campaign's store (StoreMemory when empty). With
	// StoreDSN the worker writes to it itself, with at most StoreConns
	// connections; with StoreZK too, under StoreRoot, through the Client
	// of each lease; otherwise through the hub.
	Store      string `json:"store,omitempty"`
	StoreDSN   string `json:"store_dsn,omitempty"`
	StoreConns int    `json:"store_conns,omitempty"`
	StoreRoot  string `json:"store_root,omitempty"`
}

// semSpec is a semaphore resource and its limit.
type semSpec struct {
	Name  string `json:"name"`
	Limit int    `json:"limit"`
}

// RunWorkerIfChild turns the process into a campaign worker, and exits when
// done, if it was started as one by Run; otherwise it returns at once. Call
// it first thing in main, and in TestMain of a test binary that calls Run:
// the campaign re-executes its own binary for its workers.
func RunWorkerIfChild() {
	raw, ok := os.LookupEnv(workerEnv)
	if !ok {
		return
	}
	os.Exit(runWorker(raw))
}

type worker struct {
	spec workerSpec
	c    *zklock.Client
	hc   *http.Client
	// hubGone, when set, is told instead of the process exiting when the
	// hub cannot be reached: a test's worker runs in the test's own
	// process, whose hub closes when the test ends while a loss watcher
	// of the worker may still be posting.
	hubGone func(err error)
	op      atomic.Int64 // last op number, shared by the lanes
	pid     int

	mu   sync.Mutex
	held map[string]map[*heldLease]bool // leases of the lanes, by resource

	requeues *requeues // acquires of the worker's Client that queued again

	db   *sqlStore    // the store in a database, when the worker writes to it itself
	wids atomic.Int64 // writes to a database store so far (writeID)
}

// heldLease is a lease of one lane; its loss is reported once, after its
// EvAcquired (announced is closed once that is sent).
type heldLease struct {
	l         *zklock.Lease
	op, tok   int64
	resource  string
	seenOnce  sync.Once
	seen      int64 // when a lane first saw the lease ended (its Done closed)
	once      sync.Once
	announced chan struct{}
}

// ended stamps, once, when a lane first saw h's lease ended: the time its
// loss is reported at, however long the report then takes to send.
func (h *heldLease) ended() {
	h.seenOnce.Do(func() { h.seen = time.Now().UnixNano() })
}

// lane is one acquire loop of a worker, running one recipe.
type lane struct {
	w      *worker
	rng    *rand.Rand
	recipe string // ModeExclusive, "rw", ModeSemaphore, ModeElection, ModeMulti, ModeDowngrade, "probe"
}

// runWorker is a worker's main. It connects its own zklock Client through
// its proxies and loops: acquire a random resource, perform fenced writes in
// the critical section, release. SIGUSR1 (or SIGTERM) stops the loop; the
// worker then reports quiesced with its session still open, and closes its
// client and exits on SIGTERM.
func runWorker(raw string) int {
	var spec workerSpec
	if err := json.Unmarshal([]byte(raw), &spec); err != nil {
		fmt.Fprintln(os.Stderr, "chaos worker: bad spec:", err)
		return 2
	}
	w := &worker{
		spec: spec,
		hc:   &http.Client{Timeout: time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: 64, MaxConnsPerHost: 64}},
		pid:  os.Getpid(),
		held: map[string]map[*heldLease]bool{},

		requeues: newRequeues(),
	}
	// Die with the campaign: a worker whose parent is gone is reparented.
	ppid := os.Getppid()
	go func() {
		for range time.Tick(200 * time.Millisecond) {
			if os.Getppid() != ppid {
				os.Exit(3)
			}
		}
	}()
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGUSR1, syscall.SIGTERM)
	loadSignal := make(chan os.Signal, 1)
	signal.Notify(loadSignal, syscall.SIGUSR2)
	term := make(chan struct{})
	go func() {
		for s := range sigs {
			stop()
			if s == syscall.SIGTERM {
				close(term)
				return
			}
		}
	}()

	if spec.StoreDSN != "" {
		db, err := openSQLStore(spec.Store, spec.StoreDSN, max(spec.StoreConns, 1))
		if err != nil {
			w.send(Event{Kind: EvExit, Outcome: "store-failed", Err: err.Error()})
			fmt.Fprintln(os.Stderr, "chaos worker:", err)
			return 1
		}
		defer db.Close()
		w.db = db
	}
	if err := w.connect(ctx); err != nil {
		w.send(Event{Kind: EvExit, Outcome: "connect-failed", Err: err.Error()})
		fmt.Fprintln(os.Stderr, "chaos worker:", err)
		return 1
	}
	w.send(Event{Kind: EvStart, Session: w.c.SessionID()})
	stopReports := w.reportLocal(spec.LocalPeriod)
	stopStalls := watchStalls(w.send)
	var lanes sync.WaitGroup
	for i, recipe := range w.recipes() {
		ln := &lane{w: w, recipe: recipe, rng: rand.New(rand.NewPCG(spec.Seed, uint64(spec.Proc)<<8|uint64(i)))}
		lanes.Go(func() {
			for ctx.Err() == nil {
				ln.iteration(ctx)
			}
		})
	}
	load := newLoad(w)
	if spec.Load != nil {
		load.start(ctx, *spec.Load)
	}
	go func() {
		for range loadSignal {
			if spec.Load != nil || ctx.Err() != nil {
				continue
			}
			if ls, ok := w.fetchLoad(); ok {
				load.start(ctx, ls)
			}
		}
	}()
	lanes.Wait()
	load.wait()
	// Quiesced: every lease released or lost, every cancelled wait cleaned
	// up. Local bookkeeping may lag a background delete by a moment.
	deadline := time.Now().Add(2 * spec.SessionTimeout)
	for len(w.c.Locks()) > 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	stopReports()
	stopStalls()
	w.send(Event{Kind: EvQuiesced, Session: w.c.SessionID(), Detail: fmt.Sprintf("local_nodes=%d", len(w.c.Locks()))})
	<-term
	_ = w.c.Close()
	w.send(Event{Kind: EvExit, Outcome: "ok"})
	return 0
}

func (w *worker) connect(ctx context.Context) error {
	start := time.Now()
	for {
		cctx, cancel := context.WithTimeout(ctx, 4*w.spec.SessionTimeout)
		fates := &sessionFates{w: w}
		c, err := zklock.Connect(cctx, w.spec.Servers,
			zklock.WithRoot(w.spec.Root),
			zklock.WithSessionTimeout(w.spec.SessionTimeout),
			zklock.WithLabel(fmt.Sprintf("chaos-proc-%d", w.spec.Proc)),
			zklock.WithObserver(w.requeues),
			zklock.WithObserver(fates))
		cancel()
		if err == nil {
			w.c = c
			fates.started(c.SessionID())
			return nil
		}
		if ctx.Err() != nil || time.Since(start) > 2*time.Minute {
			return err
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// reportLocal sends an EvLocal about every period (1s if unset) from a
// goroutine of its own, so a slow hub never holds up the acquire loop,
// until the returned func is called; that func returns once the last
// report is sent.
func (w *worker) reportLocal(period time.Duration) (stop func()) {
	if period <= 0 {
		period = time.Second
	}
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(period)
		defer t.Stop()
		sched := newSchedWatch()
		for {
			select {
			case <-quit:
				return
			case <-t.C:
			}
			if e, ok := w.localNodes(); ok {
				e.Sched = int64(sched.longest())
				w.send(e)
			}
		}
	}()
	return func() {
		close(quit)
		<-done
	}
}

// localNodes returns an EvLocal: the client's lock nodes (those it is
// still deleting too) and its session, T being when they were read. It
// reports false if the session changed meanwhile: the nodes would be
// labelled with the wrong one.
func (w *worker) localNodes() (Event, bool) {
	sid := w.c.SessionID()
	t := time.Now().UnixNano()
	ls, deleting := w.c.Locks(), w.c.Deleting()
	if w.c.SessionID() != sid || sid == 0 {
		return Event{}, false
	}
	nodes := make([]string, 0, len(ls)+len(deleting))
	for _, l := range ls {
		nodes = append(nodes, l.Path)
	}
	// A node the client is still deleting is not lost track of: its
	// delete waits for ZooKeeper (a release, a lease given up while
	// ZooKeeper was out of reach).
	nodes = append(nodes, deleting...)
	return Event{Kind: EvLocal, T: t, Session: sid, Nodes: nodes}, true
}

// track records a lane's lease until untrack.
func (w *worker) track(l *zklock.Lease, op, tok int64, r string) *heldLease {
	h := &heldLease{l: l, op: op, tok: tok, resource: r, announced: make(chan struct{})}
	w.mu.Lock()
	if w.held[r] == nil {
		w.held[r] = map[*heldLease]bool{}
	}
	w.held[r][h] = true
	w.mu.Unlock()
	return h
}

func (w *worker) untrack(h *heldLease) {
	w.mu.Lock()
	delete(w.held[h.resource], h)
	w.mu.Unlock()
}

// endedOn returns the lanes' leases on the resources rs whose Done is
// closed, each stamped as seen ended now (unless seen before).
func (w *worker) endedOn(rs []string) []*heldLease {
	w.mu.Lock()
	var ended []*heldLease
	for _, r := range rs {
		for h := range w.held[r] {
			select {
			case <-h.l.Done():
				ended = append(ended, h)
			default:
			}
		}
	}
	w.mu.Unlock()
	for _, h := range ended {
		h.ended()
	}
	return ended
}

// reportLoss sends EvLost for h, once, if its lease was lost; T is when a
// lane first saw it ended (heldLease.ended), not when the report goes out:
// sending waits for the hub, which may be slow. It is sent after h's
// EvAcquired, which the checker must have read first.
func (w *worker) reportLoss(h *heldLease) {
	h.ended()
	h.once.Do(func() {
		<-h.announced
		if err := h.l.Err(); errors.Is(err, zklock.ErrLeaseLost) {
			w.send(Event{Kind: EvLost, T: h.seen, Op: h.op, Resource: h.resource, Token: h.tok, Err: err.Error()})
		}
	})
}

// outcome classifies an acquire error.
func outcome(err error) string {
	switch {
	case errors.Is(err, zklock.ErrLocked):
		return "locked"
	case errors.Is(err, context.DeadlineExceeded) && errors.Is(err, zklock.ErrUnavailable):
		return "timeout-unavailable"
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, context.Canceled):
		return "canceled"
	case errors.Is(err, zklock.ErrClosed):
		return "closed"
	case errors.Is(err, zklock.ErrUnavailable):
		return "unavailable"
	case errors.Is(err, zklock.ErrLeaseLost):
		return "part-lost" // a multi-resource acquire lost a part it held while waiting for the rest
	}
	return "error" // a violation (VUnexpectedError)
}

// write sends a fenced write of hd on resource r, with token tok, to the
// store and returns its verdict: to the hub; or, when the worker writes
// to the store itself, as a transaction of its own in the database, or
// through hd's Client fenced by hd's lease in ZooKeeper, which it then
// reports.
func (w *worker) write(hd *held, r string, tok int64) bool {
	req := writeRequest{Proc: w.spec.Proc, Slot: w.spec.Slot, Op: hd.op, Resource: r, Token: tok, Mode: storeMode(hd.mode), Sent: time.Now().UnixNano()}
	if w.spec.Store != "" && w.spec.Store != StoreMemory {
		req.ID = writeID(w.spec.Proc, w.wids.Add(1))
	}
	report := func(e Event) bool {
		w.send(e)
		return e.Accepted
	}
	switch {
	case w.db != nil:
		return report(dbWrite(context.Background(), w.db, req))
	case w.spec.Store == StoreZK:
		return report(zkWrite(context.Background(), zkStore{root: w.spec.StoreRoot}, hd.c, hd.l, req))
	}
	var resp writeResponse
	w.post("/write", req, &resp)
	return resp.Accepted
}

// send reports an event to the campaign, stamping it with this process's
// identity and, if unset, the current time.
func (w *worker) send(e Event) {
	if e.T == 0 {
		e.T = time.Now().UnixNano()
	}
	e.Proc, e.Slot, e.PID = w.spec.Proc, w.spec.Slot, w.pid
	if e.Server == 0 && w.c != nil {
		e.Server = w.serverIndex(w.c.Conn().Server())
	}
	w.post("/event", e, nil)
}

// serverIndex maps the address go-zookeeper is connected to (one of the
// worker's proxies, in ensemble order) to the member's 1-based index.
func (w *worker) serverIndex(addr string) int {
	for i, s := range w.spec.Servers {
		if s == addr {
			return i + 1
		}
	}
	return 0
}

// post sends v as JSON to the hub. A worker that cannot reach the hub has
// lost its campaign: it exits.
func (w *worker) post(path string, v, out any) {
	b, _ := json.Marshal(v)
	for attempt := 0; ; attempt++ {
		resp, err := w.hc.Post("http://"+w.spec.Hub+path, "application/json", bytes.NewReader(b))
		if err == nil {
			if out != nil {
				err = json.NewDecoder(resp.Body).Decode(out)
			}
			resp.Body.Close()
			if err == nil && resp.StatusCode < 300 {
				return
			}
			if err == nil {
				err = fmt.Errorf("status %s", resp.Status)
			}
		}
		if attempt == 5 {
			if w.hubGone != nil {
				w.hubGone(err)
				return
			}
			fmt.Fprintf(os.Stderr, "chaos worker %d: hub unreachable: %v\n", w.spec.Proc, err)
			os.Exit(4)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
