package bench

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// peerJob is a scenario as a peer runs it.
type peerJob struct {
	kind     string // uncontended, contenders or queue
	n        int    // cycles, acquisitions in all, or waiters
	sessions int    // contenders only
}

// peerJobs maps the names of the scenarios that the peers run, as
// Scenarios names them, to their jobs: uncontended, every contenders-N and
// queue. Ping-pong (each holder waits until the other is queued with its
// watch set: a server-side check between the two sessions of one peer) and
// distinct (one goroutine per resource) have no peer side.
func peerJobs(sz Sizes) map[string]peerJob {
	jobs := map[string]peerJob{"uncontended": {kind: "uncontended", n: sz.Uncontended}}
	jobs[fmt.Sprintf("queue-%d", sz.QueueDepth)] = peerJob{kind: "queue", n: sz.QueueDepth}
	for _, n := range sz.Contenders {
		jobs[fmt.Sprintf("contenders-%d", n)] = peerJob{kind: "contenders", n: sz.ContenderOps, sessions: n}
	}
	return jobs
}

// ops returns how many operations a run of j must report.
func (j peerJob) ops() int {
	if j.kind == "contenders" {
		each := (j.n + j.sessions - 1) / j.sessions
		return each * j.sessions
	}
	return j.n
}

// peerSample is one peer run's figures, as the peer measured them.
type peerSample struct {
	Ops      int
	Elapsed  time.Duration
	P50, P99 time.Duration
}

func (s peerSample) rate() float64 {
	if s.Elapsed <= 0 {
		return 0
	}
	return float64(s.Ops) / s.Elapsed.Seconds()
}

// peerSessionServers returns the connect string of the next session of the
// run rooted at root, as the Go sides' sessions get theirs.
func peerSessionServers(h *Harness, root string) string {
	return strings.Join(h.sessionServers(root), ",")
}

// run runs job once on a fresh root, as the Go sides' runs do: the queue
// znode is made beforehand, as the peer's recipe would make it.
func (pp *peerProc) run(ctx context.Context, h *Harness, job peerJob) (peerSample, error) {
	root := h.newRoot(pp.peer.name + "-" + job.kind)
	defer h.cleanup(root)
	path := root + "/p"
	if err := mkdirs(h.admin, root, false); err != nil {
		return peerSample{}, err
	}
	if err := mkdirs(h.admin, path, pp.peer.container); err != nil {
		return peerSample{}, err
	}
	ctx, done := pp.runContext(ctx)
	defer done()
	var (
		r   peerReply
		err error
	)
	switch job.kind {
	case "uncontended":
		r, err = pp.call(ctx, fmt.Sprintf("uncontended %s %d %s", path, job.n, peerSessionServers(h, root)), "result")
	case "contenders":
		servers := make([]string, job.sessions)
		for i := range servers {
			servers[i] = peerSessionServers(h, root)
		}
		r, err = pp.call(ctx, fmt.Sprintf("contenders %s %d %s", path, job.n, strings.Join(servers, " ")), "result")
	case "queue":
		r, err = pp.queue(ctx, h, path, job.n, peerSessionServers(h, root), peerSessionServers(h, root))
	default:
		err = fmt.Errorf("bench: no peer job %q", job.kind)
	}
	if err != nil {
		return peerSample{}, err
	}
	s := peerSample{Ops: r.Ops, Elapsed: time.Duration(r.Elapsed), P50: time.Duration(r.P50), P99: time.Duration(r.P99)}
	if r.Ops != job.ops() || r.Elapsed <= 0 || r.P50 < 0 || r.P50 > r.P90 || r.P90 > r.P99 || r.P99 > r.Max {
		return peerSample{}, pp.breakOff(fmt.Errorf("implausible result %+v for %d operations", r, job.ops()))
	}
	return s, nil
}

// queue drives the queue job: the peer's holder takes the lock; its
// waiters queue behind it; the bench waits until every waiter's node
// exists and its watch is set (one per waiter for both peers: a getData
// watch on its predecessor), as it does for the Go sides; then the holder
// releases and the clock runs in the peer.
func (pp *peerProc) queue(ctx context.Context, h *Harness, path string, depth int, holder, waiters string) (peerReply, error) {
	if _, err := pp.call(ctx, fmt.Sprintf("queue %s %d %s %s", path, depth, holder, waiters), "holding"); err != nil {
		return peerReply{}, err
	}
	base := h.baseWatches()
	if err := pp.send("enqueue"); err != nil {
		return peerReply{}, err
	}
	if err := h.waitQueued(ctx, path, depth+1); err != nil {
		return peerReply{}, pp.breakOff(context.Cause(ctx))
	}
	if err := h.settle(ctx, base, int64(depth)); err != nil {
		return peerReply{}, pp.breakOff(context.Cause(ctx))
	}
	return pp.call(ctx, "go", "result")
}
