package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"
)

// Timer is the part of *testing.B that scenarios use to keep their setup
// out of a benchmark's time.
type Timer interface {
	StartTimer()
	StopTimer()
}

// Harness holds what every run needs: the servers, an administrative
// session (preparing queues, counting nodes, cleaning up) and a root znode
// of its own under which each run makes a fresh one.
type Harness struct {
	servers []string
	timeout time.Duration
	admin   *zk.Conn
	root    string
	seq     *atomic.Int64
	timer   Timer
	place   *placement
	// pids are the processes of the servers, when they run on this
	// machine (serverPIDs), nil otherwise.
	pids []int
}

// placement says which servers a run's sessions connect to. Without
// pinned servers every session gets the whole list, and go-zookeeper picks
// one at random. With pinned servers (PinSessions) the sessions of each
// run take them in turn, starting over with every run, so that both sides'
// sessions sit on the same servers.
type placement struct {
	mu     sync.Mutex
	pinned []string
	run    string // the root of the run whose sessions are being placed
	next   int
}

// NewHarness connects the administrative session. Every znode it or its
// runs create lives under root + "/" + a random name; Close removes them.
// A zero sessionTimeout means 10s.
func NewHarness(ctx context.Context, servers []string, root string, sessionTimeout time.Duration) (*Harness, error) {
	if len(servers) == 0 {
		return nil, fmt.Errorf("bench: no ZooKeeper servers given")
	}
	if root == "" {
		root = "/zklock-bench"
	}
	if sessionTimeout <= 0 {
		sessionTimeout = 10 * time.Second
	}
	conn, err := dial(ctx, servers, sessionTimeout)
	if err != nil {
		return nil, err
	}
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	h := &Harness{servers: servers, timeout: sessionTimeout, admin: conn,
		root: root + "/run-" + hex.EncodeToString(b), seq: new(atomic.Int64), place: &placement{},
		pids: serverPIDs(servers)}
	if err := mkdirs(conn, h.root, false); err != nil {
		conn.Close()
		return nil, err
	}
	return h, nil
}

// PinSessions makes the sessions of each run connect to one of addrs each,
// in turn (see placement). zklock-bench -ensemble pins them to the
// followers.
func (h *Harness) PinSessions(addrs []string) {
	h.place.mu.Lock()
	defer h.place.mu.Unlock()
	h.place.pinned = addrs
}

// sessionServers returns the servers the next session of the run rooted at
// root connects to.
func (h *Harness) sessionServers(root string) []string {
	p := h.place
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.pinned) == 0 {
		return h.servers
	}
	if p.run != root {
		p.run, p.next = root, 0
	}
	addr := p.pinned[p.next%len(p.pinned)]
	p.next++
	return []string{addr}
}

// WithTimer returns a harness sharing h's session whose runs stop t during
// their setup and cleanup (pass a *testing.B).
func (h *Harness) WithTimer(t Timer) *Harness {
	c := *h
	c.timer = t
	return &c
}

// Close removes every znode the harness made and ends its session. Only the
// harness returned by NewHarness should be closed.
func (h *Harness) Close() error {
	err := removeTree(h.admin, h.root)
	h.admin.Close()
	return err
}

// newRoot returns a fresh root for one run.
func (h *Harness) newRoot(name string) string {
	return fmt.Sprintf("%s/%s-%d", h.root, name, h.seq.Add(1))
}

// sessionRun starts a run named name that needs one session of side: it
// stops a benchmark's timer, makes the run's root, the queue znodes of
// the resources queues as side would make them (side.prepare), and opens
// the session on it. end closes the session, removes the root and starts
// the timer again.
func (h *Harness) sessionRun(ctx context.Context, side Side, name string, queues ...string) (root string, s session, end func(), err error) {
	h.stopTimer()
	root = h.newRoot(name)
	clean := func() {
		h.cleanup(root)
		h.startTimer()
	}
	if err := side.prepare(h, root, queues); err != nil {
		clean()
		return "", nil, nil, err
	}
	if s, err = side.open(ctx, h, root); err != nil {
		clean()
		return "", nil, nil, err
	}
	return root, s, func() { s.close(); clean() }, nil
}

// cleanup removes a run's root.
func (h *Harness) cleanup(root string) { _ = removeTree(h.admin, root) }

func (h *Harness) stopTimer() {
	if h.timer != nil {
		h.timer.StopTimer()
	}
}

func (h *Harness) startTimer() {
	if h.timer != nil {
		h.timer.StartTimer()
	}
}
