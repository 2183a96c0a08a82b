package queue

import (
	"context"
	"errors"

	"github.com/zklockkit/zklockkit/internal/canary"
	"github.com/zklockkit/zklockkit/zklock/internal/errs"
	"github.com/zklockkit/zklockkit/zklock/internal/layout"
	"github.com/zklockkit/zklockkit/zklock/internal/session"

	"github.com/go-zookeeper/zk"
)

// A semaphore of limit n is work-conserving: whenever fewer than n nodes
// are ahead of a waiter, it holds within one hand-off, whichever holder
// left and in whatever order. Watching the node n places ahead is not
// enough (a release by another holder would wake nobody), and watching
// every holder from every waiter is a herd. So:
//
//   - The first waiter (n nodes ahead: all holders) watches every node
//     ahead of it. Whichever leaves, it wakes, lists the queue, and holds.
//   - A waiter further back watches its predecessor, a waiter, and its
//     own node (see awaitSlot). It must
//     learn when that node goes, and also when it holds: it is then the
//     first waiter itself, and must watch the holders. A holder does not
//     go away when it starts holding, so a node that holds with nodes
//     behind it (one of them may have listed it as a waiter) rewrites its
//     own data once, unchanged, from data version 0 to 1 (poke). That
//     fires its successor's data watch; a successor that sets its watch
//     after the poke sees version > 0 and lists the queue at once.
//
// One release then wakes the first waiter, which holds, and through its
// poke at most one waiter that cannot hold yet (the next one, now first).
// A waiter's cancellation wakes only its successor. Arrivals wake nobody.

// nodeVersion is a node's data version as seen by a watch.
type nodeVersion struct {
	path    string
	version int32
}

// awaitSlot sets up the wait, for our semaphore node at index idx of kids
// (the queue up to our node: limit or more nodes ahead, or a node of
// another kind among them), until a node ahead of it may have gone or
// started holding, after which the queue is listed again. It returns nil
// if that may have happened already. Behind a node of another kind (an
// exclusive, write or read node, another recipe's), which excludes every
// node behind it, our node waits as one further back does: on its
// predecessor, a semaphore node that pokes when it starts holding, or
// that node itself.
func (w *Waiter) awaitSlot(ctx context.Context, kids []layout.Child, idx int) (*Park, error) {
	w.n.wait = waitFor{kind: waitSlot}
	parent := w.req.Parent + "/"
	if canary.On(canary.SemaphoreNAhead) { // the canary: only the node limit places ahead
		return w.watchAny(ctx, []string{parent + kids[idx-w.req.Limit].Name}, false)
	}
	if idx == w.req.Limit && layout.Only(kids[:idx], layout.Semaphore) {
		paths := make([]string, idx)
		for i, k := range kids[:idx] {
			paths[i] = parent + k.Name
		}
		return w.watchAny(ctx, paths, false)
	}
	// Further back, our own node is watched too. Our predecessor may start
	// holding with nothing it sees behind it, and then pokes nobody: were
	// our node deleted meanwhile (an operator), we would not learn it for
	// as long as the predecessor holds, and a slot freed by another holder
	// would wake nobody. The watch makes the deletion end our wait at once
	// (our node's end is in every park), and we queue again.
	if !w.n.ownWatched {
		if _, err := w.watchOwn(ctx); err != nil {
			return nil, err
		}
	}
	return w.watchAny(ctx, []string{parent + kids[idx-1].Name}, true)
}

// watchAny sets a data watch on each path (the requests are pipelined) and
// returns the park on them; nil if one is gone already. With pred, the one
// path is our predecessor, and a data version above 0 that has not sent us
// to list the queue yet is a poke we missed: nil too.
func (w *Waiter) watchAny(ctx context.Context, paths []string, pred bool) (*Park, error) {
	q := w.q
	for {
		type res struct {
			chs     []<-chan zk.Event
			gone    bool
			changed bool
			err     error
		}
		r, err := do(ctx, w, func() (res, error) {
			type one struct {
				st  *zk.Stat
				ch  <-chan zk.Event
				err error
			}
			out := make([]chan one, len(paths))
			for i, p := range paths {
				out[i] = make(chan one, 1)
				go func() {
					_, st, ch, err := q.conn().GetW(p)
					out[i] <- one{st, ch, err}
				}()
			}
			var r res
			for i := range paths {
				o := <-out[i]
				switch {
				case o.err == nil:
					r.chs = append(r.chs, o.ch)
					if pred && o.st.Version > 0 {
						seen := nodeVersion{paths[i], o.st.Version}
						if w.n.predSeen != seen {
							w.n.predSeen = seen
							r.changed = true
						}
					}
				case errors.Is(o.err, zk.ErrNoNode):
					r.gone = true
				case r.err == nil:
					r.err = o.err
				}
			}
			return r, nil
		})
		if err != nil {
			return nil, err
		}
		switch {
		case r.err == nil:
		case errs.IsConnErr(r.err):
			if err := w.sameSession(ctx); err != nil {
				return nil, err
			}
			continue
		case errors.Is(r.err, zk.ErrSessionExpired):
			return nil, errRestart
		default:
			return nil, errs.Map(r.err)
		}
		if r.gone || r.changed {
			return nil, nil
		}
		return w.parkOn(Park{evs: r.chs}), nil
	}
}

// poke rewrites the data of e, a semaphore node that now holds with nodes
// behind it, unchanged, from version 0 (see the comment at the top): a
// waiter that listed it as a waiter, and so watches it as its predecessor,
// learns that it must look again. Done once per node, in the background;
// a node written already (version above 0) or gone needs nothing.
func (q *Queues) poke(e *Node, data []byte) {
	q.s.Go(func(ctx context.Context) {
		for {
			if cur, ready := q.s.Current(); cur != e.sessionID {
				return
			} else if !ready {
				if _, err := q.s.Wait(ctx); err != nil {
					return
				}
				continue
			}
			_, err := session.Call(ctx, func() (*zk.Stat, error) { return q.conn().Set(e.path, data, 0) })
			if !errs.IsConnErr(err) {
				return
			}
		}
	})
}
