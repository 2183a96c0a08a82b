package queue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/zklockkit/zklockkit/internal/canary"
	"github.com/zklockkit/zklockkit/zklock/internal/errs"
	"github.com/zklockkit/zklockkit/zklock/internal/layout"

	"github.com/go-zookeeper/zk"
)

// create makes our ephemeral-sequential node with a protected name, so that
// after a connection loss mid-create we can find it by its UUID instead of
// leaving an orphan or queueing twice.
func (w *Waiter) create(ctx context.Context) error {
	q := w.q
	id := layout.NewID()
	mark := w.req.Layout
	if mark == "" {
		mark = layout.Marker(w.req.Kind)
	}
	prefix := w.req.Parent + "/" + layout.ProtectedPrefix + id + "-" + mark
	mayExist := false // a create whose outcome is unknown may have made a node
	w.n = nil         // a new node knows nothing of the last one (see wait)
	ended := make(chan struct{})
	q.mu.Lock()
	q.creates[id] = ended
	q.mu.Unlock()
	q.s.ProveSoon() // a proof in flight with the create, for hold (see proveAlive)
	defer func() {
		q.mu.Lock()
		delete(q.creates, id)
		q.mu.Unlock()
		close(ended)
		if mayExist {
			// nodes of ours other than w.n: made by a create whose
			// reply was lost (listSynced makes one unlikely)
			keep := ""
			if w.n != nil {
				keep = w.n.name
			}
			if canary.On(canary.LostCreateNoSync) && keep != "" {
				return // the canary: a second node of one create left in the queue
			}
			q.cleanupByID(w.req.Parent, id, w.sid, keep)
		}
	}()
	for {
		path, names, cv, err := q.createNode(ctx, createReq{prefix: prefix, data: w.req.Data, parent: w.req.Parent,
			id: id, sid: w.sid, count: !w.req.Raw && w.req.Kind != layout.Semaphore,
			cover: w.req.Kind == layout.Exclusive || w.req.Kind == layout.Write}, w.runner)
		switch {
		case err == nil:
			token := q.s.Wire().Created(prefix)
			if !w.register(path) {
				return w.sessionChanged(path)
			}
			w.n.token = token
			w.n.listed = names
			w.n.cover = cv
			return nil
		case errors.Is(err, zk.ErrNoNode):
			if err := w.ensureQueue(ctx, w.queueData()); err != nil {
				return err
			}
		case errs.IsConnErr(err):
			// The create's outcome is unknown. Create again only once a
			// listing, complete on this session, shows it made no node:
			// a second create after a lost listing would queue us twice
			// and leave the first node behind.
			mayExist = true
			name, err := w.findByID(ctx, id)
			if err != nil {
				return err
			}
			if name != "" {
				if path := w.req.Parent + "/" + name; !w.register(path) {
					return w.sessionChanged(path)
				}
				return nil
			}
		case errors.Is(err, zk.ErrSessionExpired):
			return errRestart
		default:
			return errs.Map(err)
		}
	}
}

// findByID lists the queue on our session after a sync (listSynced), again
// after each connection loss while the session lives, and returns the name
// of our node with protected id, or "" if there is none. A changed session is errRestart:
// its nodes are gone.
func (w *Waiter) findByID(ctx context.Context, id string) (string, error) {
	if err := w.sameSession(ctx); err != nil {
		return "", err
	}
	names, err := retryRead(ctx, w, func() ([]string, error) {
		return w.q.listSynced(w.req.Parent) // no queue, so no node of ours
	})
	if err != nil {
		return "", err
	}
	for _, n := range names {
		if layout.ProtectedID(n) == id {
			return n, nil
		}
	}
	return "", nil
}

// register records path as our node, on session w.sid. It refuses, and
// returns false, if the client is on another session by now: go-zookeeper
// sends requests queued while it was disconnected on whatever session it
// gets next, so a create issued for w.sid may have run on a newer one.
// Checked under q.mu, so that a session change after it drops the entry
// with the rest of w.sid's nodes.
func (w *Waiter) register(path string) bool {
	e := &Node{path: path, resource: w.req.Resource, kind: w.req.Kind, sessionID: w.sid,
		since: time.Now(), gone: make(chan struct{}), givenUp: w.req.GivenUp}
	e.position.Store(-1)
	w.q.mu.Lock()
	if w.q.sid != w.sid {
		w.q.mu.Unlock()
		return false
	}
	w.q.nodes.add(e)
	w.q.mu.Unlock()
	w.n = &node{path: path, name: path[len(w.req.Parent)+1:], entry: e, pos: -1}
	if canary.On(canary.RequeueNoWatch) && w.stale {
		w.n.ownWatched = true // the canary: the old node's watch taken for the new one's
	}
	return true
}

// sessionChanged handles our node at path, made or found after the
// session changed from w.sid. It may belong to the new session, alive and
// unknown to us, where it would sit in the queue until that session ends:
// delete it in the background, on the current session, and enqueue again.
// If it belonged to w.sid, it is gone already and the delete finds nothing.
func (w *Waiter) sessionChanged(path string) error {
	q := w.q
	cur, _ := q.s.Current()
	q.log.Debug("zklock: lock node made across a session change; deleting it and enqueueing again",
		"resource", w.req.Resource, "node", path, "queued_on", fmt.Sprintf("%#x", w.sid), "session", fmt.Sprintf("%#x", cur))
	q.s.Go(func(ctx context.Context) { _ = q.deleteNode(ctx, path, cur) })
	return errRestart
}

// createReq is one create of a lock node.
type createReq struct {
	prefix string // the node's path up to its sequence number
	data   []byte
	parent string // its queue
	id     string // its protected id
	sid    int64  // the session it is made for
	// count: the queue's data is ours and empty, so it may be rewritten
	// to learn the queue's child count with the create (createCounted).
	count bool
	// cover: any node ahead blocks the lock, so a counted create that
	// finds one node ahead lists the queue with a child watch, and waits
	// on that alone (cover.go).
	cover bool
}

// createNode runs one create. If ctx ends while it is in flight, whatever
// it creates is deleted in the background. A ctx that cannot end, or a
// step on a runner (see Waiter.Step), runs it on the calling goroutine.
func (q *Queues) createNode(ctx context.Context, r createReq, runner bool) (string, []string, *cover, error) {
	if ctx.Done() == nil {
		return q.createAndList(r)
	}
	if runner {
		if ctx.Err() != nil {
			return "", nil, nil, errs.CtxErr(ctx)
		}
		return q.createAndList(r)
	}
	type result struct {
		path  string
		err   error
		names []string // the queue listed right after the create, if it could be
		cv    *cover
		owner int64 // the session current when the create returned
	}
	ch := make(chan result, 1)
	abandoned := make(chan struct{})
	go func() {
		p, names, cv, err := q.createAndList(r)
		// A successful create ran on this session or on one that has
		// expired since (a request queued while disconnected is sent on
		// the next session, which may be a new one): delete on this one.
		owner, _ := q.s.Current()
		res := result{path: p, err: err, names: names, cv: cv, owner: owner}
		select {
		case ch <- res:
		default:
		}
		select {
		case <-abandoned:
			switch {
			case err == nil:
				q.s.Go(func(ctx context.Context) { _ = q.deleteNode(ctx, p, owner) })
			case errs.IsConnErr(err):
				q.cleanupByID(r.parent, r.id, r.sid, "")
			}
		default:
		}
	}()
	select {
	case res := <-ch:
		return res.path, res.names, res.cv, res.err
	case <-ctx.Done():
		close(abandoned)
		// The create may have finished in the meantime: then clean up here.
		select {
		case res := <-ch:
			if res.err == nil {
				q.s.Go(func(ctx context.Context) { _ = q.deleteNode(ctx, res.path, res.owner) })
			}
		default:
		}
		return "", nil, nil, errs.CtxErr(ctx)
	}
}

// createAndList creates our node and lists its queue. names is nil when the
// queue could not be listed.
//
// The client's only create in flight is pipelined with the listing: the
// list request is sent as soon as the create request is on the wire, and
// the server answers a session's requests in order, so the listing is taken
// after the create and costs no extra round trip. With other creates in
// flight (many acquires at once on one session) the listing waits for the
// create, which then also reads the queue's child count where it can
// (createCounted), so that a queue of one needs no listing at all, and a
// queue of two is listed with a child watch, the waiter's cover (cv, see
// cover.go).
func (q *Queues) createAndList(r createReq) (path string, names []string, cv *cover, err error) {
	// Pipeline only the client's one create in flight: with many at once
	// (1,000 acquires on one session), listings interleaved with the
	// creates cost more than they save (measured: 5,200 against 7,800
	// locks/s, medians of 12 batches).
	inFlight := q.creating.Add(1)
	defer q.creating.Add(-1)
	if inFlight > 1 {
		counted, kids := false, int32(0)
		if r.count && !q.noCount.Load() {
			path, names, kids, counted, err = q.createCounted(r)
		}
		if !counted {
			path, err = q.conn().Create(r.prefix, r.data, zk.FlagEphemeralSequential, q.acl)
		}
		if err != nil || names != nil {
			return path, names, nil, err
		}
		var lerr error
		if r.cover && kids == 2 {
			cv = q.armCover(r.parent)
			names, _, _, lerr = q.conn().ChildrenW(r.parent)
		} else {
			names, _, lerr = q.conn().Children(r.parent)
		}
		if lerr != nil {
			if cv != nil {
				q.disarm(r.parent, cv)
			}
			return path, nil, nil, nil
		}
		return path, names, cv, nil
	}
	written, stop := q.s.Wire().Written(r.prefix)
	type created struct {
		path string
		err  error
	}
	ch := make(chan created, 1)
	q.s.Spawn(func() {
		p, err := q.conn().Create(r.prefix, r.data, zk.FlagEphemeralSequential, q.acl)
		ch <- created{p, err}
	})
	var cr created
	var lerr error
	select {
	case <-written:
		names, _, lerr = q.conn().Children(r.parent)
		cr = <-ch
	case cr = <-ch:
		// not seen on the wire (the connection failed, or it went
		// through no dialer of ours): list after it
		stop()
		if cr.err == nil {
			names, _, lerr = q.conn().Children(r.parent)
		}
	}
	if cr.err != nil || lerr != nil {
		names = nil
	}
	return cr.path, names, nil, cr.err
}

// createCounted creates our node in one transaction with a rewrite of its
// queue's data, which is empty and stays so: the rewrite's reply carries
// the queue's child count as of our create. If our node is the only child,
// nothing is ahead of it, nor can anything come ahead of it later (sequence
// numbers only grow), and names is just our node: the lock is ours without
// a listing, at the cost of one transaction instead of a create and a read.
// Otherwise names is nil and the caller lists the queue; kids is the
// queue's child count after our create.
//
// counted is false if the server refused the transaction for want of the
// right to write the queue's data (a queue made by someone else, with an
// ACL that lacks WRITE); no node was made, and the caller creates without
// the count, as the client does from then on.
func (q *Queues) createCounted(r createReq) (path string, names []string, kids int32, counted bool, err error) {
	res, err := q.conn().Multi(
		&zk.CreateRequest{Path: r.prefix, Data: r.data, Acl: q.acl, Flags: zk.FlagEphemeralSequential},
		&zk.SetDataRequest{Path: r.parent, Version: -1})
	if err != nil {
		if len(res) == 2 && res[0].Error == nil && errors.Is(res[1].Error, zk.ErrNoAuth) {
			if q.noCount.CompareAndSwap(false, true) {
				q.log.Info("zklock: may not write a queue's data; acquires list their queue after the create",
					"queue", r.parent)
			}
			return "", nil, 0, false, nil
		}
		return "", nil, 0, true, err
	}
	if len(res) != 2 {
		return "", nil, 0, true, fmt.Errorf("zklock: zookeeper answered a create of 2 operations with %d results", len(res))
	}
	path = res[0].String
	if st := res[1].Stat; st != nil {
		kids = st.NumChildren
		if kids == 1 && strings.HasPrefix(path, r.parent+"/") {
			names = []string{path[len(r.parent)+1:]}
		}
	}
	return path, names, kids, true, nil
}

// ensureQueue creates our queue's znode as a CONTAINER (ZooKeeper removes it
// once empty), after a create found it missing. The queue's parent (the
// root, or a raw path's directory) is there but on a client's first lock
// under it: the container is created alone, one write. Only if that finds
// its parent missing are the ancestors made, from the top, each that a
// read finds missing as a persistent node. Every create is a transaction
// of the whole ensemble, a failed one too (NodeExists): creating each
// ancestor in turn cost a first-time lock four writes more on a root three
// levels deep, which on a 3-node ensemble made it slower than zk.Lock's
// (reads of the ancestors, answered by the server the client is on).
func (w *Waiter) ensureQueue(ctx context.Context, queueData []byte) error {
	parent := w.req.Parent
	err := w.makeNode(ctx, parent, queueData, true)
	if errors.Is(err, zk.ErrNoNode) {
		err = nil
		for i := 1; i < len(parent) && err == nil; i++ {
			if parent[i] == '/' {
				err = w.makeNode(ctx, parent[:i], nil, false)
			}
		}
		if err == nil {
			err = w.makeNode(ctx, parent, queueData, true)
		}
	}
	if errors.Is(err, zk.ErrNoNode) {
		// An ancestor is still missing: a connection lost while it was
		// checked or made left it unmade (makeNode takes the node for
		// made once the connection is back), or someone deleted it
		// again. The caller's create tells, and comes back here.
		return nil
	}
	return err
}

// makeNode creates the node at p, a container or, if a read finds it
// missing, a persistent node, for ensureQueue. A node that exists is
// success; so is a lost connection, once it is back (the caller's create
// is retried and tells). zk.ErrNoNode says its parent is missing.
func (w *Waiter) makeNode(ctx context.Context, p string, data []byte, container bool) error {
	q := w.q
	_, err := do(ctx, w, func() (string, error) {
		if container {
			return q.conn().CreateContainer(p, data, zk.FlagContainer, q.acl)
		}
		if ok, _, err := q.conn().Exists(p); ok || err != nil {
			return "", err
		}
		return q.conn().Create(p, nil, 0, q.acl)
	})
	switch {
	case err == nil, errors.Is(err, zk.ErrNodeExists):
		return nil
	case errors.Is(err, zk.ErrNoNode), errs.IsCtxErr(err):
		return err
	case errs.IsConnErr(err):
		_, err := q.s.Wait(ctx)
		return err
	}
	return errs.Map(err)
}

// queueData is the data a new queue znode is created with.
func (w *Waiter) queueData() []byte {
	if w.req.Kind != layout.Semaphore {
		return nil
	}
	b, _ := json.Marshal(queueMeta{Limit: w.req.Limit})
	return b
}
