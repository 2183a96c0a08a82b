package queue

import (
	"context"
	"time"
)

// Release deletes nodes, the own nodes of a lease being released. If ctx
// ends before ZooKeeper confirms, the rest goes on in the background,
// which calls finish once every node is gone; the error says the release
// is not yet confirmed.
func (q *Queues) Release(ctx context.Context, nodes []*Node, finish func(context.Context)) error {
	q.mu.Lock()
	for _, e := range nodes {
		e.releasing = true
		if e.watchT != nil {
			e.watchT.Stop()
		}
	}
	q.mu.Unlock()
	for i, e := range nodes {
		if err := q.deleteNode(ctx, e.path, e.sessionID); err != nil {
			rest := nodes[i:]
			q.s.Go(func(bctx context.Context) {
				for _, e := range rest {
					if q.deleteNode(bctx, e.path, e.sessionID) != nil {
						return // closing: the session's end deletes them
					}
				}
				finish(bctx)
			})
			return err
		}
	}
	q.s.Kick()
	return nil
}

// Drop lets go of the nodes of a lease that was lost: any that may still
// exist is deleted in the background.
func (q *Queues) Drop(nodes []*Node) {
	for _, e := range nodes {
		q.mu.Lock()
		e.releasing = true
		_, present := q.nodes[e.path]
		q.mu.Unlock()
		if present {
			q.s.Go(func(ctx context.Context) { _ = q.deleteNode(ctx, e.path, e.sessionID) })
		}
	}
	q.s.Kick()
}

// Abandon deletes the nodes of a failed acquire's parts on the spot, as a
// failed waiter deletes its own (removeNode: bounded by the answer bound
// and the connection, then in the background).
func (q *Queues) Abandon(nodes []*Node) {
	deadline := time.Now().Add(q.s.AnswerBound())
	for _, e := range nodes {
		q.mu.Lock()
		_, present := q.nodes[e.path]
		q.mu.Unlock()
		if present {
			q.removeNode(e, deadline)
		}
	}
	q.s.Kick()
}
