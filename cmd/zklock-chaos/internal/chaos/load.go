package chaos

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sync"
	"time"

	"github.com/zklockkit/zklockkit/zklock"
)

// loadSpec is one worker's share of the load phase: Sessions more zklock
// Clients (sessions), through the worker's own proxies, and Waiters acquire
// loops spread over them, on Resources (exclusive locks, long queues).
type loadSpec struct {
	Sessions       int           `json:"sessions"`
	Waiters        int           `json:"waiters"`
	Resources      []string      `json:"resources"`
	AcquireTimeout time.Duration `json:"acquire_timeout"`
}

// load runs a worker's load phase.
type load struct {
	w       *worker
	once    sync.Once
	wg      sync.WaitGroup
	mu      sync.Mutex
	clients []*zklock.Client
}

func newLoad(w *worker) *load { return &load{w: w} }

// start connects the sessions and starts the waiters, once; they run until
// ctx ends.
func (ld *load) start(ctx context.Context, spec loadSpec) {
	ld.once.Do(func() {
		w := ld.w
		ld.wg.Go(func() {
			var clients []*zklock.Client
			for i := range spec.Sessions {
				cctx, cancel := context.WithTimeout(ctx, 4*w.spec.SessionTimeout)
				fates := &sessionFates{w: w}
				c, err := zklock.Connect(cctx, w.spec.Servers,
					zklock.WithRoot(w.spec.Root),
					zklock.WithSessionTimeout(w.spec.SessionTimeout),
					zklock.WithLabel(fmt.Sprintf("chaos-proc-%d-load-%d", w.spec.Proc, i)),
					zklock.WithObserver(fates))
				cancel()
				if ctx.Err() != nil {
					break
				}
				if err != nil {
					w.send(Event{Kind: EvNote, Outcome: "load-connect-failed", Err: err.Error()})
					continue
				}
				fates.started(c.SessionID())
				clients = append(clients, c)
				ld.mu.Lock()
				ld.clients = append(ld.clients, c)
				ld.mu.Unlock()
			}
			if len(clients) == 0 {
				return
			}
			w.send(Event{Kind: EvNote, Detail: fmt.Sprintf("load: %d sessions, %d waiters", len(clients), spec.Waiters)})
			for i := range spec.Waiters {
				c := clients[i%len(clients)]
				ln := &lane{w: w, recipe: "load", rng: rand.New(rand.NewPCG(w.spec.Seed, uint64(w.spec.Proc)<<20|uint64(i)|1<<19))}
				ld.wg.Go(func() {
					for ctx.Err() == nil {
						ln.loadIteration(ctx, c, spec)
					}
				})
			}
		})
	})
}

// wait waits for the waiters, then closes the load sessions.
func (ld *load) wait() {
	ld.wg.Wait()
	ld.mu.Lock()
	defer ld.mu.Unlock()
	for _, c := range ld.clients {
		_ = c.Close()
	}
}

// loadIteration is one exclusive acquire on a load resource, through c,
// with a single fenced write.
func (ln *lane) loadIteration(ctx context.Context, c *zklock.Client, spec loadSpec) {
	a := attempt{op: ln.w.op.Add(1), timeout: spec.AcquireTimeout, mode: ModeExclusive, kind: "load", client: c}
	a.resource = spec.Resources[ln.rng.IntN(len(spec.Resources))]
	a.acquire = func(ctx context.Context) (*zklock.Lease, error) { return c.Acquire(ctx, a.resource) }
	hd := ln.acquire(ctx, a)
	if hd == nil {
		return
	}
	ln.critical(hd, a, 0, 0)
	ln.w.release(hd, a, "")
}

// fetchLoad asks the campaign for this worker's share of the load phase.
func (w *worker) fetchLoad() (loadSpec, bool) {
	resp, err := w.hc.Get("http://" + w.spec.Hub + "/load")
	if err != nil {
		return loadSpec{}, false
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return loadSpec{}, false
	}
	var ls loadSpec
	if err := json.NewDecoder(resp.Body).Decode(&ls); err != nil {
		return loadSpec{}, false
	}
	return ls, true
}
