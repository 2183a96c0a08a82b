package chaos

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"os"
	"path"
	"slices"
	"sync"
	"time"
)

// hub runs in the campaign process. It is the fenced store the workers
// write to (per resource it keeps the largest token seen and refuses any
// lower one) and the recorder of the history: every event, from workers,
// the store and the nemesis, gets its sequence number here, under one lock,
// so the history's order is the store's order. The history goes to its file
// only, written from a goroutine of its own (historyFile). In the
// ZooKeeper-store long run of 27 November the hub took no event for 9 s
// while the campaign process ran (its stall watch saw no stop): it kept
// the history in memory as well, a million events and a heap of about a
// gigabyte, which grew by copying the whole slice under the hub's lock,
// and it wrote the file under that lock too.
type hub struct {
	srv *http.Server
	ln  net.Listener

	mu      sync.Mutex
	seq     int64
	path    string // of the history file
	file    *historyFile
	store   Store                     // the store in memory, or
	db      *sqlStore                 // the store in a database that the hub writes for the workers (SQLite)
	holding map[int]map[int64]holding // proc -> op, for leases not yet ended
	server  map[int]int               // proc -> ensemble member its session was last on
	load    *loadSpec                 // each worker's share of the load phase, once it began
	// requeued: the latest re-queued lease of each session on each queue
	requeued map[requeueKey]requeuedLease
	quiet    map[int]int64 // proc -> session, for quiesced workers
	started  map[int]bool  // procs that reported start (their signal handlers are set)
	acq      int           // acquisitions so far
}

// writeRequest is what a worker sends to the store.
type writeRequest struct {
	Proc     int    `json:"proc"`
	Slot     int    `json:"slot"`
	Op       int64  `json:"op"`
	Resource string `json:"r"`
	Token    int64  `json:"token"`
	Mode     string `json:"mode,omitempty"`
	Sent     int64  `json:"sent"`
	ID       int64  `json:"wid,omitempty"` // unique in the campaign: the writer's Proc and a counter (writeID)
}

// writeID names a worker's n-th write to a database store: unique in the
// campaign, since Proc is.
func writeID(proc int, n int64) int64 { return int64(proc)<<32 | n }

// holding is a lease the nemesis may aim at.
type holding struct {
	long  bool
	mode  string   // its recipe (recipeOf)
	nodes []string // its lock nodes, as the worker reported them
}

// writeResponse is the store's verdict.
type writeResponse struct {
	Accepted bool  `json:"accepted"`
	Max      int64 `json:"max"`
	Seq      int64 `json:"seq"`
}

func newHub(historyPath string) (*hub, error) {
	f, err := os.Create(historyPath)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		f.Close()
		return nil, err
	}
	h := &hub{ln: ln, path: historyPath, file: newHistoryFile(f), store: newMemStore(),
		holding: map[int]map[int64]holding{}, server: map[int]int{}, quiet: map[int]int64{}, started: map[int]bool{},
		requeued: map[requeueKey]requeuedLease{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /event", h.handleEvent)
	mux.HandleFunc("POST /write", h.handleWrite)
	mux.HandleFunc("GET /load", h.handleLoad)
	h.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = h.srv.Serve(ln) }()
	return h, nil
}

// Addr returns the store's "host:port".
func (h *hub) Addr() string { return h.ln.Addr().String() }

func (h *hub) handleEvent(w http.ResponseWriter, r *http.Request) {
	var e Event
	if err := json.NewDecoder(r.Body).Decode(&e); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	h.record(e)
	w.WriteHeader(http.StatusNoContent)
}

func (h *hub) handleWrite(w http.ResponseWriter, r *http.Request) {
	var req writeRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Resource == "" || req.Token == 0 {
		http.Error(w, "bad write request", http.StatusBadRequest)
		return
	}
	if h.db != nil {
		e := h.record(dbWrite(r.Context(), h.db, req))
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(writeResponse{Accepted: e.Accepted, Max: e.Max, Seq: e.Seq})
		return
	}
	h.mu.Lock()
	called := time.Now().UnixNano()
	ok, prev := h.store.Write(req.Resource, req.Mode, req.Token)
	e := h.recordLocked(Event{Kind: EvWrite, T: time.Now().UnixNano(), Called: called, Proc: req.Proc, Slot: req.Slot, Op: req.Op,
		Resource: req.Resource, Mode: req.Mode, Token: req.Token, Sent: req.Sent, Accepted: ok, Max: prev})
	h.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(writeResponse{Accepted: ok, Max: prev, Seq: e.Seq})
}

func (h *hub) handleLoad(w http.ResponseWriter, _ *http.Request) {
	h.mu.Lock()
	ls := h.load
	h.mu.Unlock()
	if ls == nil {
		http.Error(w, "no load phase", http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(ls)
}

// setLoad starts the load phase: workers asking from now on get ls.
func (h *hub) setLoad(ls loadSpec) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.load = &ls
}

// loadSpec returns the load phase's share per worker, if it began.
func (h *hub) loadShare() *loadSpec {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.load
}

// record adds e to the history (stamping T if unset) and returns it with
// its sequence number.
func (h *hub) record(e Event) Event {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.recordLocked(e)
}

func (h *hub) recordLocked(e Event) Event {
	e.Recv = time.Now().UnixNano()
	if e.T == 0 {
		e.T = e.Recv
	}
	h.seq++
	e.Seq = h.seq
	b, _ := json.Marshal(e)
	h.file.add(append(b, '\n'))
	if e.Server != 0 && e.Proc != 0 {
		h.server[e.Proc] = e.Server
	}
	switch e.Kind {
	case EvAcquired:
		if e.Detail != "load" {
			h.acq++
		}
		if e.Requeued {
			for _, n := range e.Nodes {
				h.requeued[requeueKey{e.Session, path.Base(path.Dir(n))}] = requeuedLease{node: n, t: e.T}
			}
		}
		if h.holding[e.Proc] == nil {
			h.holding[e.Proc] = map[int64]holding{}
		}
		h.holding[e.Proc][e.Op] = holding{long: e.Detail == "long", mode: recipeOf(e.Mode, e.Detail), nodes: e.Nodes}
	case EvLost, EvRelease:
		delete(h.holding[e.Proc], e.Op)
	case EvDied:
		delete(h.holding, e.Proc)
		delete(h.server, e.Proc)
	case EvQuiesced:
		h.quiet[e.Proc] = e.Session
	case EvStart:
		h.started[e.Proc] = true
	}
	return e
}

// holders returns the processes that hold a lease of the given recipe
// now ("" for any), and those of them that hold a long one.
func (h *hub) holders(mode string) (all, long []int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for p, ops := range h.holding {
		any, lng := false, false
		for _, l := range ops {
			if mode == "" || l.mode == mode {
				any = true
				lng = lng || l.long
			}
		}
		if any {
			all = append(all, p)
		}
		if lng {
			long = append(long, p)
		}
	}
	return all, long
}

// held reports whether a worker reported holding a lease on node and has
// not reported its end. A node a listing shows behind the first is not
// always a waiter's: a semaphore's second permit, a read behind a read,
// or a node granted since the listing hold too.
func (h *hub) held(node string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, ops := range h.holding {
		for _, l := range ops {
			if slices.Contains(l.nodes, node) {
				return true
			}
		}
	}
	return false
}

type requeueKey struct {
	session int64
	queue   string
}

type requeuedLease struct {
	node string
	t    int64
}

// requeuedSince returns the node of a lease of session on queue, acquired
// after an acquire of it queued again, reported after t; "" if none.
func (h *hub) requeuedSince(session int64, queue string, t int64) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	if r, ok := h.requeued[requeueKey{session, queue}]; ok && r.t > t {
		return r.node
	}
	return ""
}

// servers returns the ensemble member (1-based) each live worker process
// was last connected to.
func (h *hub) servers() map[int]int {
	h.mu.Lock()
	defer h.mu.Unlock()
	m := make(map[int]int, len(h.server))
	for p, s := range h.server {
		m[p] = s
	}
	return m
}

// acquisitions returns the number of leases granted so far.
func (h *hub) acquisitions() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.acq
}

// quiesced returns the session of every worker that reported quiesced.
func (h *hub) quiesced() map[int]int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	m := make(map[int]int64, len(h.quiet))
	for p, s := range h.quiet {
		m[p] = s
	}
	return m
}

// startedCount returns how many workers reported start.
func (h *hub) startedCount() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.started)
}

// hasStarted reports whether worker proc has reported start.
func (h *hub) hasStarted(proc int) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.started[proc]
}

// readHistory returns the events recorded so far, read back from the
// history file.
func (h *hub) readHistory() ([]Event, error) {
	if err := h.file.Sync(); err != nil {
		return nil, err
	}
	return ReadHistoryFile(h.path)
}

// Close stops the server and writes the rest of the history file.
func (h *hub) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := h.srv.Shutdown(ctx)
	h.mu.Lock()
	defer h.mu.Unlock()
	return errors.Join(err, h.file.Close())
}
