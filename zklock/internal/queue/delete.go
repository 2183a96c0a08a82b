package queue

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/zklockkit/zklockkit/internal/canary"
	"github.com/zklockkit/zklockkit/zklock/internal/errs"
	"github.com/zklockkit/zklockkit/zklock/internal/layout"

	"github.com/go-zookeeper/zk"
)

// removeNode deletes one of our nodes that is not (or no longer) held.
// While connected it tries on the caller's goroutine until deadline (one
// round trip, normally), so the caller returns with no node of its left.
// It stops as soon as the connection is lost (a server killed as the caller
// gave up held callers a second past their deadline, waiting for the
// reconnect) and at deadline, at most the answer bound from now, the bound for a
// connection that died silently. Otherwise, or if that was not enough, it
// goes on in the background until ZooKeeper confirms or the session ends.
func (q *Queues) removeNode(e *Node, deadline time.Time) {
	q.mu.Lock()
	e.releasing = true
	q.mu.Unlock()
	_, ready := q.s.Current()
	down := q.s.Epoch()
	if ready && time.Until(deadline) > 0 {
		ctx, cancel := context.WithDeadline(context.Background(), deadline)
		go func() {
			select {
			case <-down:
				cancel()
			case <-ctx.Done():
			}
		}()
		err := q.deleteNode(ctx, e.path, e.sessionID)
		cancel()
		if err == nil {
			return
		}
	}
	q.s.Go(func(ctx context.Context) { _ = q.deleteNode(ctx, e.path, e.sessionID) })
}

// deleteNode deletes path, created in session sid, retrying across
// connection loss. It returns nil once the node is known to be gone
// (deleted, already gone, or gone with its session).
func (q *Queues) deleteNode(ctx context.Context, path string, sid int64) error {
	defer q.startDeleting(path, sid)()
	defer func() {
		q.mu.Lock()
		if e := q.nodes[path]; e != nil && e.sessionID == sid {
			q.nodes.drop(e)
		}
		q.mu.Unlock()
	}()
	for {
		cur, ready := q.s.Current()
		if cur != sid {
			return nil // the session that owned it has expired
		}
		if !ready {
			if _, err := q.s.Wait(ctx); err != nil {
				if errors.Is(err, errs.ErrClosed) {
					return nil // closing the session deletes it
				}
				return err
			}
			continue
		}
		err := q.delete(ctx, path)
		switch {
		case err == nil, errors.Is(err, zk.ErrNoNode), errors.Is(err, zk.ErrSessionExpired), errors.Is(err, zk.ErrClosing):
			return nil
		case errs.IsConnErr(err):
			continue
		case errs.IsCtxErr(err):
			return err
		default:
			q.log.Error("zklock: cannot delete lock node", "node", path, "err", err)
			return errs.Map(err)
		}
	}
}

// cleanupByID deletes, in the background, any node of queue parent whose
// protected name carries id, but keep (a name, or ""): the result of a
// create whose outcome we never learned. It lists the queue after a sync
// (listSynced), so that it also finds a create the leader was still
// committing when our connection was lost.
func (q *Queues) cleanupByID(parent, id string, sid int64, keep string) {
	q.s.Go(func(ctx context.Context) {
		for {
			cur, err := q.s.Wait(ctx)
			if err != nil || cur != sid {
				return
			}
			names, err := q.listSynced(parent)
			switch {
			case err == nil:
				for _, n := range names {
					if layout.ProtectedID(n) == id && n != keep {
						_ = q.deleteNode(ctx, parent+"/"+n, sid)
					}
				}
				return
			case errs.IsConnErr(err):
				continue
			default:
				return
			}
		}
	})
}

// listSynced lists queue parent after a sync, for a client that lost the
// reply to a create: the listing must show the create if it was made. A
// listing alone is read where the session is now, a server that may not
// yet have applied a create sent on the lost connection: the leader
// answers a sync only once it has committed what it proposed before it,
// and a create the leader sees after the session moved to this
// connection fails. Without the sync, a waiter found no node, created
// another, and the first stood ahead of it in the queue, unknown to it,
// until the session ended. No queue lists as no names.
func (q *Queues) listSynced(parent string) ([]string, error) {
	if !canary.On(canary.LostCreateNoSync) { // the canary lists without the sync
		if _, err := q.conn().Sync(parent); err != nil && !errors.Is(err, zk.ErrNoNode) {
			return nil, err
		}
	}
	names, _, err := q.conn().Children(parent)
	if errors.Is(err, zk.ErrNoNode) {
		return nil, nil
	}
	return names, err
}

// Deletes requested while one is in flight go out together, as one
// transaction (a multi of deletes), as a database groups commits: a lone
// delete is sent at once, and a burst (a thousand leases released at once)
// costs the server a few requests instead of a thousand, and the client a
// goroutine per batch instead of one per delete.
type deletes struct {
	mu      sync.Mutex
	flying  bool         // a flusher runs (flushDeletes)
	flush   func()       // flushDeletes, made once (a method value passed on is allocated each time)
	pending []*deleteReq // waiting for the next batch
}

// deleteReq is one delete waiting for its batch.
type deleteReq struct {
	path string
	err  chan error // its answer; buffered, so a flusher never blocks
}

// maxDeleteBatch bounds a batch, and so a transaction's size (a path is
// a few hundred bytes at most; ZooKeeper refuses a packet over 1 MB).
const maxDeleteBatch = 256

// delete deletes path, on the caller's session, with the deletes
// requested meanwhile (see deletes), and returns ZooKeeper's answer for it,
// or the context's error when ctx ends first (the delete goes on).
func (q *Queues) delete(ctx context.Context, path string) error {
	r := &deleteReq{path: path, err: make(chan error, 1)}
	q.dels.mu.Lock()
	q.dels.pending = append(q.dels.pending, r)
	start := !q.dels.flying
	q.dels.flying = true
	q.dels.mu.Unlock()
	if start {
		q.s.Spawn(q.dels.flush)
	}
	select {
	case err := <-r.err:
		return err
	case <-ctx.Done():
		return errs.CtxErr(ctx)
	}
}

// flushDeletes sends the pending deletes, a batch at a time, until none
// is left.
func (q *Queues) flushDeletes() {
	for {
		q.dels.mu.Lock()
		batch := q.dels.pending
		if len(batch) > maxDeleteBatch {
			batch, q.dels.pending = batch[:maxDeleteBatch], slices.Clone(batch[maxDeleteBatch:])
		} else {
			q.dels.pending = nil
		}
		if len(batch) == 0 {
			q.dels.flying = false
			q.dels.mu.Unlock()
			return
		}
		q.dels.mu.Unlock()
		q.deleteBatch(batch)
	}
}

// deleteBatch deletes a batch's paths: alone, or in one transaction. A
// transaction fails whole when one delete fails (a node someone else
// deleted already): each path is then deleted alone, so that each gets
// its own answer.
func (q *Queues) deleteBatch(batch []*deleteReq) {
	if len(batch) == 1 {
		batch[0].err <- q.conn().Delete(batch[0].path, -1)
		return
	}
	ops := make([]any, len(batch))
	for i, r := range batch {
		ops[i] = &zk.DeleteRequest{Path: r.path, Version: -1}
	}
	res, err := q.conn().Multi(ops...)
	if err == nil || len(res) != len(batch) {
		for _, r := range batch {
			r.err <- err // all deleted, or the transaction's fate unknown (a lost connection)
		}
		return
	}
	var wg sync.WaitGroup
	for _, r := range batch {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.err <- q.conn().Delete(r.path, -1)
		}()
	}
	wg.Wait()
}
