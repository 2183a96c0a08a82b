package zklock

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"
)

// errRestart tells the wait loop to enqueue again with a fresh node: our
// node vanished (session expired, or someone deleted it).
var errRestart = errors.New("zklock: restart")

// Acquire blocks until the lock on resource is held, ctx ends, or the wait
// limit (MaxWait) passes, and returns the lease. If ctx carries a lease of
// this client on the same resource (see Lease.Context), the acquire
// re-enters it instead of waiting.
//
// Errors: *ResourceError (ErrInvalidResource) for a bad name; ErrLocked with
// Try; ErrWaitTimeout; the context's error (also matching ErrUnavailable if
// ZooKeeper was unreachable at the time); ErrClosed; ErrUpgrade.
func (c *Client) Acquire(ctx context.Context, resource string, opts ...AcquireOption) (*Lease, error) {
	cfg := acquireConfig{}
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	return c.acquire(ctx, []string{resource}, cfg)
}

// TryAcquire is Acquire with Try: it never waits for another holder and
// returns ErrLocked when the resource is busy, leaving no node behind.
func (c *Client) TryAcquire(ctx context.Context, resource string, opts ...AcquireOption) (*Lease, error) {
	return c.Acquire(ctx, resource, append(opts, Try())...)
}

// AcquireAll acquires every resource, all or nothing, in one canonical order
// (sorted by znode path) so that two callers asking for {A,B} and {B,A}
// cannot deadlock. On failure or cancellation everything already taken is
// released. The lease is lost as soon as any part of it is lost.
func (c *Client) AcquireAll(ctx context.Context, resources []string, opts ...AcquireOption) (*Lease, error) {
	cfg := acquireConfig{}
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	if len(resources) == 0 {
		return nil, &ResourceError{Reason: "no resources given"}
	}
	return c.acquire(ctx, resources, cfg)
}

// target is one resource of an acquire, resolved to its queue's znode.
type target struct {
	resource string
	parent   string
}

func (c *Client) targets(resources []string, raw bool) ([]target, error) {
	ts := make([]target, 0, len(resources))
	for _, r := range resources {
		p, err := c.queuePath(r, raw)
		if err != nil {
			return nil, err
		}
		ts = append(ts, target{r, p})
	}
	slices.SortFunc(ts, func(a, b target) int { return strings.Compare(a.parent, b.parent) })
	for i := 1; i < len(ts); i++ {
		if ts[i].parent == ts[i-1].parent {
			return nil, &ResourceError{Resource: ts[i].resource, Reason: "listed twice"}
		}
	}
	return ts, nil
}

// QueuePath returns the znode that holds resource's lock queue.
func (c *Client) QueuePath(resource string, opts ...AcquireOption) (string, error) {
	cfg := acquireConfig{}
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	return c.queuePath(resource, cfg.raw)
}

func (c *Client) queuePath(resource string, raw bool) (string, error) {
	if raw {
		if err := validateZnodePath(resource); err != nil {
			return "", err
		}
		return resource, nil
	}
	if err := ValidateResource(resource); err != nil {
		return "", err
	}
	return c.cfg.root + "/" + EscapeResource(resource), nil
}

func (c *Client) acquire(ctx context.Context, resources []string, cfg acquireConfig) (*Lease, error) {
	if cfg.mode < Exclusive || cfg.mode > Election {
		return nil, fmt.Errorf("%w: unknown mode %d", ErrInvalidOption, cfg.mode)
	}
	if err := cfg.check(); err != nil {
		return nil, err
	}
	if cfg.mode == Semaphore && cfg.limit < 1 {
		return nil, fmt.Errorf("%w: semaphore limit must be at least 1", ErrInvalidOption)
	}
	ts, err := c.targets(resources, cfg.raw)
	if err != nil {
		return nil, err
	}
	name := resources[0]
	if len(resources) > 1 {
		name = strings.Join(resources, ",")
	}
	keys := make([]string, len(ts))
	for i, t := range ts {
		keys[i] = t.parent
	}
	whole, lenders, err := reenter(ctx, c, keys, cfg.mode)
	if whole != nil || err != nil {
		return whole, err
	}
	data := c.owner
	switch {
	case cfg.data != nil:
		data = cfg.data
	case cfg.label != "":
		host, _ := os.Hostname()
		data, _ = json.Marshal(Owner{Host: host, PID: os.Getpid(), Label: cfg.label})
	}
	if len(data) > MaxValueLen {
		return nil, fmt.Errorf("%w: %d bytes, the limit is %d", ErrValueTooLarge, len(data), MaxValueLen)
	}
	st, start, wctx, cancel := beginAcquire(ctx, c, name, cfg)
	defer cancel()
	p := parts{c: c, ts: ts, lenders: lenders, cfg: cfg, data: data}
	if cfg.try {
		// A try never waits for the queue, nor on ZooKeeper past the
		// answer bound: while ZooKeeper is away it answers ErrUnavailable
		// (errTryBound) within the bound, and its on-the-spot delete of a
		// node that found the lock busy stops at the same deadline.
		var cancelTry context.CancelFunc
		wctx, cancelTry = context.WithTimeoutCause(wctx, c.answerBound(), errTryBound)
		defer cancelTry()
		p.deleteBy, _ = wctx.Deadline()
	}
	for {
		failed, sid, err := p.acquire(wctx, st)
		if err == nil {
			break
		}
		// give back what was taken; the lease never existed for the caller
		st.abandon()
		if errors.Is(err, errPartLost) && wctx.Err() == nil {
			// A part already held was lost while we waited for another.
			// Keeping the others while queueing again for it would wait
			// out of canonical order (a deadlock with an acquire of the
			// same set); so everything was given back: queue again for
			// every part, within the same context and MaxWait.
			c.log.Debug("zklock: a part of a multi-resource acquire was lost; enqueueing again for all", "resources", name)
			st = newLeaseState(c, st.id, name, cfg.mode)
			if _, p.lenders, err = reenter(ctx, c, keys, cfg.mode); err == nil {
				continue
			}
		}
		if errors.Is(err, errPartLost) {
			err = ctxErr(wctx) // the caller's context ended too: that is the news
		}
		if isCtxErr(err) && !errors.Is(err, ErrUnavailable) && c.unreachable() {
			// the wait ended while ZooKeeper was out of reach: say so
			err = fmt.Errorf("%w: %w", ErrUnavailable, err)
		}
		err = fmt.Errorf("zklock: acquire %q: %w", failed.resource, err)
		c.observe(ctx, Event{Kind: EventFailed, ID: st.id, Resource: name, Mode: cfg.mode, Wait: time.Since(start), Err: err, SessionID: sid})
		return nil, err
	}
	st.mu.Lock()
	st.acquired = time.Now()
	st.waited = st.acquired.Sub(start)
	st.mu.Unlock()
	c.observe(ctx, Event{Kind: EventAcquired, ID: st.id, Resource: name, Mode: cfg.mode, Path: st.holds[0].path,
		Wait: st.waited, Token: st.Token(), SessionID: st.holds[0].sessionID, Time: st.acquired})
	c.kick()
	return &Lease{st: st}, nil
}

// errPartLost ends the wait of a multi-resource acquire one of whose parts,
// already held, was lost: the acquire gives everything back and queues
// again (see Client.acquire). It never reaches the caller.
var errPartLost = errors.New("zklock: a part already held was lost")

// parts is one acquire's resources and how to take them.
type parts struct {
	c        *Client
	ts       []target
	lenders  map[string]*leaseState // parts held by a lease in the context (re-entered)
	cfg      acquireConfig
	data     []byte
	deleteBy time.Time // see waiter.deleteBy
}

// acquire takes every part for st, in canonical order: a part a lease of
// the context holds is re-entered (borrowed from it), the others are
// waited for. On error it reports the part that failed and its session.
func (p *parts) acquire(ctx context.Context, st *leaseState) (failed target, sid int64, err error) {
	multi := len(p.ts) > 1
	if multi {
		// The loss of a part already held ends the wait for the others.
		pctx, cancel := context.WithCancelCause(ctx)
		stop := context.AfterFunc(st.ctx, func() { cancel(errPartLost) })
		defer func() {
			stop()
			cancel(nil)
		}()
		ctx = pctx
	}
	for _, t := range p.ts {
		if l := p.lenders[t.parent]; l != nil && st.borrow(l, t.parent) {
			continue
		}
		w := &waiter{c: p.c, st: st, target: t, cfg: p.cfg, data: p.data, multi: multi, deleteBy: p.deleteBy}
		if err := w.wait(ctx); err != nil {
			return t, w.sid, err
		}
	}
	return target{}, 0, nil
}

// waiter is one acquire's journey through a resource's queue. It may take
// several nodes: when its node vanishes (deleted by someone else, or gone
// with an expired session) it queues again with a new one.
type waiter struct {
	c      *Client
	st     *leaseState
	target target
	cfg    acquireConfig
	data   []byte
	multi  bool  // one part of a multi-resource acquire
	sid    int64 // the session of the current node
	// deleteBy, if set, is when a failed acquire stops deleting its node
	// on the spot (see removeNode): a try's deadline.
	deleteBy time.Time

	// n is the current node, nil before the first create. Everything
	// known about a node lives in it, so a waiter that queues again
	// starts clean: a new node has no watch, no token and no listing
	// until it gets its own.
	n *node
}

// node is one lock node of a waiter, from its create until it holds the
// lock, fails, or vanishes.
type node struct {
	path   string
	name   string
	entry  *nodeEntry
	token  int64    // its czxid, once known
	pos    int      // position last reported to observers, -1 before
	listed []string // the queue as listed right after its create, if it was
	behind bool     // the last listing showed nodes behind this one
	// predSeen: the predecessor's data version that last sent a
	// semaphore waiter back to list the queue (see awaitSlot).
	predSeen nodeVersion
	// ownWatched: a data watch on the node is set, so its deletion by
	// anyone is delivered to us before any later event. Only a waiter
	// about to take a zero-round-trip hand-off needs it; a holder without
	// it sets it after the client's node watch delay (WithNodeWatchDelay).
	ownWatched bool
}

func (w *waiter) wait(ctx context.Context) error {
	for {
		sid, err := w.c.waitReady(ctx)
		if err != nil {
			return err
		}
		w.sid = sid
		if err := w.create(ctx); err != nil {
			if errors.Is(err, errRestart) {
				continue
			}
			return err
		}
		err = w.queue(ctx)
		if errors.Is(err, errRestart) {
			// Our node is gone: drop what we knew of it, and queue again.
			w.c.log.Debug("zklock: lock node vanished; enqueueing again", "resource", w.target.resource)
			w.forget()
			continue
		}
		return err
	}
}

// create makes our ephemeral-sequential node with a protected name, so that
// after a connection loss mid-create we can find it by its UUID instead of
// leaving an orphan or queueing twice.
func (w *waiter) create(ctx context.Context) error {
	c := w.c
	id := newUUID()
	prefix := w.target.parent + "/" + protectedPrefix + id + "-" + marker(w.cfg.mode)
	mayExist := false // a create whose outcome is unknown may have made a node
	w.n = nil         // a new node knows nothing of the last one (see wait)
	ended := make(chan struct{})
	c.mu.Lock()
	c.creates[id] = ended
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.creates, id)
		c.mu.Unlock()
		close(ended)
		if w.n == nil && mayExist {
			c.cleanupByID(w.target.parent, id, w.sid)
		}
	}()
	for {
		path, names, err := c.createNode(ctx, createReq{prefix: prefix, data: w.data, parent: w.target.parent,
			id: id, sid: w.sid, count: !w.cfg.raw && w.cfg.mode != Semaphore})
		switch {
		case err == nil:
			token := c.live.takeCreated(prefix)
			if !w.register(path) {
				return w.sessionChanged(path)
			}
			w.n.token = token
			w.n.listed = names
			return nil
		case errors.Is(err, zk.ErrNoNode):
			if err := c.ensureQueue(ctx, w.target.parent, w.queueData()); err != nil {
				return err
			}
		case isConnErr(err):
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
				if path := w.target.parent + "/" + name; !w.register(path) {
					return w.sessionChanged(path)
				}
				return nil
			}
		case errors.Is(err, zk.ErrSessionExpired):
			return errRestart
		default:
			return mapErr(err)
		}
	}
}

// findByID lists the queue on our session, again after each connection
// loss while the session lives, and returns the name of our node with
// protected id, or "" if there is none. A changed session is errRestart:
// its nodes are gone.
func (w *waiter) findByID(ctx context.Context, id string) (string, error) {
	if err := w.sameSession(ctx); err != nil {
		return "", err
	}
	names, err := retryRead(ctx, w, func() ([]string, error) {
		n, _, err := w.c.conn.Children(w.target.parent)
		if errors.Is(err, zk.ErrNoNode) {
			return nil, nil // no queue, so no node of ours
		}
		return n, err
	})
	if err != nil {
		return "", err
	}
	for _, n := range names {
		if protectedID(n) == id {
			return n, nil
		}
	}
	return "", nil
}

// register records path as our node, on session w.sid. It refuses, and
// returns false, if the client is on another session by now: go-zookeeper
// sends requests queued while it was disconnected on whatever session it
// gets next, so a create issued for w.sid may have run on a newer one.
// Checked under c.mu, so that a session change after it drops the entry
// with the rest of w.sid's nodes.
func (w *waiter) register(path string) bool {
	e := &nodeEntry{path: path, resource: w.target.resource, mode: w.cfg.mode, sessionID: w.sid,
		since: time.Now(), gone: make(chan struct{})}
	e.position.Store(-1)
	w.c.mu.Lock()
	if w.c.sessionID != w.sid {
		w.c.mu.Unlock()
		return false
	}
	w.c.nodes[path] = e
	w.c.mu.Unlock()
	w.n = &node{path: path, name: path[len(w.target.parent)+1:], entry: e, pos: -1}
	return true
}

// sessionChanged handles our node at path, made or found after the
// session changed from w.sid. It may belong to the new session, alive and
// unknown to us, where it would sit in the queue until that session ends:
// delete it in the background, on the current session, and enqueue again.
// If it belonged to w.sid, it is gone already and the delete finds nothing.
func (w *waiter) sessionChanged(path string) error {
	c := w.c
	cur, _ := c.session()
	c.log.Debug("zklock: lock node made across a session change; deleting it and enqueueing again",
		"resource", w.target.resource, "node", path, "queued_on", fmt.Sprintf("%#x", w.sid), "session", fmt.Sprintf("%#x", cur))
	c.goBackground(func(ctx context.Context) { _ = c.deleteNode(ctx, path, cur) })
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
}

// createNode runs one create. If ctx ends while it is in flight, whatever
// it creates is deleted in the background. A ctx that cannot end runs it
// on the caller's goroutine, as call does.
func (c *Client) createNode(ctx context.Context, r createReq) (string, []string, error) {
	if ctx.Done() == nil {
		return c.createAndList(r)
	}
	type result struct {
		path  string
		err   error
		names []string // the queue listed right after the create, if it could be
		owner int64    // the session current when the create returned
	}
	ch := make(chan result, 1)
	abandoned := make(chan struct{})
	go func() {
		p, names, err := c.createAndList(r)
		// A successful create ran on this session or on one that has
		// expired since (a request queued while disconnected is sent on
		// the next session, which may be a new one): delete on this one.
		owner, _ := c.session()
		res := result{path: p, err: err, names: names, owner: owner}
		select {
		case ch <- res:
		default:
		}
		select {
		case <-abandoned:
			switch {
			case err == nil:
				c.goBackground(func(ctx context.Context) { _ = c.deleteNode(ctx, p, owner) })
			case isConnErr(err):
				c.cleanupByID(r.parent, r.id, r.sid)
			}
		default:
		}
	}()
	select {
	case res := <-ch:
		return res.path, res.names, res.err
	case <-ctx.Done():
		close(abandoned)
		// The create may have finished in the meantime: then clean up here.
		select {
		case res := <-ch:
			if res.err == nil {
				c.goBackground(func(ctx context.Context) { _ = c.deleteNode(ctx, res.path, res.owner) })
			}
		default:
		}
		return "", nil, ctxErr(ctx)
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
// (createCounted), so that a queue of one needs no listing at all.
func (c *Client) createAndList(r createReq) (path string, names []string, err error) {
	// Pipeline only the client's one create in flight: with many at once
	// (1,000 acquires on one session), listings interleaved with the
	// creates cost more than they save (measured: 5,200 against 7,800
	// locks/s, medians of 12 batches).
	inFlight := c.creating.Add(1)
	defer c.creating.Add(-1)
	if inFlight > 1 {
		counted := false
		if r.count && !c.noCount.Load() {
			path, names, counted, err = c.createCounted(r)
		}
		if !counted {
			path, err = c.conn.Create(r.prefix, r.data, zk.FlagEphemeralSequential, c.cfg.acl)
		}
		if err != nil || names != nil {
			return path, names, err
		}
		names, _, lerr := c.conn.Children(r.parent)
		if lerr != nil {
			names = nil
		}
		return path, names, nil
	}
	written, stop := c.live.notifyWritten(r.prefix)
	type created struct {
		path string
		err  error
	}
	ch := make(chan created, 1)
	go func() {
		p, err := c.conn.Create(r.prefix, r.data, zk.FlagEphemeralSequential, c.cfg.acl)
		ch <- created{p, err}
	}()
	var cr created
	var lerr error
	select {
	case <-written:
		names, _, lerr = c.conn.Children(r.parent)
		cr = <-ch
	case cr = <-ch:
		// not seen on the wire (the connection failed, or it went
		// through no dialer of ours): list after it
		stop()
		if cr.err == nil {
			names, _, lerr = c.conn.Children(r.parent)
		}
	}
	if cr.err != nil || lerr != nil {
		names = nil
	}
	return cr.path, names, cr.err
}

// createCounted creates our node in one transaction with a rewrite of its
// queue's data, which is empty and stays so: the rewrite's reply carries
// the queue's child count as of our create. If our node is the only child,
// nothing is ahead of it, nor can anything come ahead of it later (sequence
// numbers only grow), and names is just our node: the lock is ours without
// a listing, at the cost of one transaction instead of a create and a read.
// Otherwise names is nil and the caller lists the queue.
//
// counted is false if the server refused the transaction for want of the
// right to write the queue's data (a queue made by someone else, with an
// ACL that lacks WRITE); no node was made, and the caller creates without
// the count, as the client does from then on.
func (c *Client) createCounted(r createReq) (path string, names []string, counted bool, err error) {
	res, err := c.conn.Multi(
		&zk.CreateRequest{Path: r.prefix, Data: r.data, Acl: c.cfg.acl, Flags: zk.FlagEphemeralSequential},
		&zk.SetDataRequest{Path: r.parent, Version: -1})
	if err != nil {
		if len(res) == 2 && res[0].Error == nil && errors.Is(res[1].Error, zk.ErrNoAuth) {
			if c.noCount.CompareAndSwap(false, true) {
				c.log.Info("zklock: may not write a queue's data; acquires list their queue after the create",
					"queue", r.parent)
			}
			return "", nil, false, nil
		}
		return "", nil, true, err
	}
	if len(res) != 2 {
		return "", nil, true, fmt.Errorf("zklock: zookeeper answered a create of 2 operations with %d results", len(res))
	}
	path = res[0].String
	if st := res[1].Stat; st != nil && st.NumChildren == 1 && strings.HasPrefix(path, r.parent+"/") {
		names = []string{path[len(r.parent)+1:]}
	}
	return path, names, true, nil
}

// ensureQueue creates a queue's znode as a CONTAINER (ZooKeeper removes it
// once empty) and its ancestors as persistent nodes.
func (c *Client) ensureQueue(ctx context.Context, parent string, queueData []byte) error {
	parts := strings.Split(parent[1:], "/")
	for i := range parts {
		p := "/" + strings.Join(parts[:i+1], "/")
		last := i == len(parts)-1
		_, err := call(ctx, func() (string, error) {
			if last {
				return c.conn.CreateContainer(p, queueData, zk.FlagContainer, c.cfg.acl)
			}
			return c.conn.Create(p, nil, 0, c.cfg.acl)
		})
		switch {
		case err == nil, errors.Is(err, zk.ErrNodeExists):
		case isConnErr(err):
			if _, err := c.waitReady(ctx); err != nil {
				return err
			}
			return nil // let the caller retry its create
		case isCtxErr(err):
			return err
		default:
			return mapErr(err)
		}
	}
	return nil
}

// queue reads the queue, and waits until our node holds the lock.
func (w *waiter) queue(ctx context.Context) error {
	if w.cfg.mode == Semaphore {
		if err := w.checkLimit(ctx); err != nil {
			return w.fail(err)
		}
	}
	kids, err := w.firstLook(ctx)
	if err != nil {
		return w.fail(err)
	}
	for {
		idx := slices.IndexFunc(kids, func(k child) bool { return k.name == w.n.name })
		if idx < 0 {
			return errRestart
		}
		held, watch := rule(kids, idx, w.cfg.limit)
		w.report(ctx, idx)
		if held {
			return w.hold(ctx)
		}
		if w.cfg.try {
			return w.fail(ErrLocked)
		}
		if w.cfg.mode == Semaphore {
			var err error
			if kids, err = w.awaitSlot(ctx, kids, idx); err != nil {
				return w.fail(err)
			}
			continue
		}
		pred := w.target.parent + "/" + kids[watch].name
		if p := w.c.ownNode(ctx, pred, w.sid); p != nil && provesFirst(p.mode) {
			// Keep only what lies between pred and us (nothing, unless
			// we read behind readers), not the snapshot (see below).
			behind := slices.Clone(kids[watch+1 : idx+1])
			kids = nil
			held, err := w.awaitLocal(ctx, p)
			if err != nil {
				return w.fail(err)
			}
			if held {
				// Nothing is ahead of pred, so nothing but what lay
				// between it and us: the lock is ours, with no request.
				kids = behind
				continue
			}
			if kids, err = w.list(ctx); err != nil {
				return w.fail(err)
			}
			continue
		}
		// Nodes ahead of ours can only disappear (sequence numbers only
		// grow), so if pred is the last obstacle in our snapshot, its
		// deletion hands us the lock without another round trip. That
		// hand-off relies on a watch on our own node, set with pred's.
		rest := slices.Delete(slices.Clone(kids), watch, watch+1)
		direct, _ := rule(rest, idx-1, w.cfg.limit)
		if !direct {
			// We list again once pred is gone, so nothing of the
			// snapshot is kept while we wait: n waiters of one queue
			// on one client would otherwise keep O(n²) names alive
			// (and every garbage collection would mark them).
			rest = nil
		}
		if err := w.watch(ctx, pred, direct); err != nil {
			return w.fail(err)
		}
		if direct {
			kids = rest
			continue
		}
		var err error
		if kids, err = w.list(ctx); err != nil {
			return w.fail(err)
		}
	}
}

// awaitLocal waits for pred, a node of this client on our session, to go,
// with no watch and no request: the client learns of its own nodes' end by
// itself (its delete confirmed, its lease lost, its session gone, or the
// watch on it fired). It reports whether pred had held the lock. A node that
// held had nothing ahead of it, and nothing can come ahead of it since
// (sequence numbers only grow), so its going hands us the lock: n waiters of
// one queue on one client take it in turn at the cost of the releases'
// deletes alone, where each would otherwise be woken by a watch and list the
// queue. That hand-off, like the direct one in queue, relies on a watch on
// our own node, set here first; and it waits until pred's lease has ended,
// so its holder is told (Done closed, contexts cancelled) before we hold.
func (w *waiter) awaitLocal(ctx context.Context, pred *nodeEntry) (bool, error) {
	if !w.n.ownWatched {
		if _, err := retryRead(ctx, w, func() (struct{}, error) {
			_, _, _, err := w.c.conn.GetW(w.n.path)
			return struct{}{}, err
		}); err != nil {
			return false, err
		}
		w.n.ownWatched = true
	}
	if err := w.until(ctx, pred.gone); err != nil {
		return false, err
	}
	w.c.mu.Lock()
	st := pred.st
	w.c.mu.Unlock()
	if st == nil {
		return false, nil // it never held: what was ahead of it may remain
	}
	return true, w.until(ctx, st.ctx.Done())
}

// until waits for ch to close. It returns errRestart if our node goes
// first.
func (w *waiter) until(ctx context.Context, ch <-chan struct{}) error {
	select {
	case <-ch:
		return nil
	case <-w.n.entry.gone:
		return errRestart
	case <-ctx.Done():
		return ctxErr(ctx)
	case <-w.c.closeCh:
		return ErrClosed
	}
}

// ownNode returns our entry for the node at path if it is one of this
// client's live nodes on session sid, and nil otherwise. A node of ours
// whose create has been answered but not yet registered (listed by another
// waiter of this client meanwhile) is waited for, briefly: the reply is
// already in.
func (c *Client) ownNode(ctx context.Context, path string, sid int64) *nodeEntry {
	c.mu.Lock()
	e := c.nodes[path]
	ended := c.creates[protectedID(path[strings.LastIndexByte(path, '/')+1:])]
	c.mu.Unlock()
	if e == nil && ended != nil {
		select {
		case <-ended:
		case <-ctx.Done():
			return nil
		}
		c.mu.Lock()
		e = c.nodes[path]
		c.mu.Unlock()
	}
	if e != nil && e.sessionID == sid {
		return e
	}
	return nil
}

// provesFirst reports whether a node of mode m holds only when no node is
// ahead of it (exclusive, write, election), so that its having held proves
// the queue ahead of it empty for good.
func provesFirst(m Mode) bool { return m == Exclusive || m == Write || m == Election }

// firstLook reads the queue (the listing taken with the create, when there
// is one). If the create reply gave no fencing token, it also reads our
// node for its czxid, which sets the watch on it.
func (w *waiter) firstLook(ctx context.Context) ([]child, error) {
	var kids []child
	if listed := w.n.listed; listed != nil {
		w.n.listed = nil
		var err error
		if kids, err = w.view(listed); err != nil {
			return nil, err
		}
		if !slices.ContainsFunc(kids, func(k child) bool { return k.name == w.n.name }) {
			// Cannot happen if the server answered in order; never
			// take a missing node for a deleted one on this listing
			// (that would queue us twice): list again.
			w.c.log.Warn("zklock: queue listed without our new node; listing again", "node", w.n.path)
			kids = nil
		}
	}
	if kids == nil {
		var err error
		if kids, err = w.list(ctx); err != nil {
			return nil, err
		}
	}
	if w.n.token != 0 {
		return kids, nil
	}
	st, err := retryRead(ctx, w, func() (*zk.Stat, error) {
		_, st, _, err := w.c.conn.GetW(w.n.path)
		return st, err
	})
	if err != nil {
		return nil, err
	}
	w.n.token, w.n.ownWatched = st.Czxid, true
	return kids, nil
}

// list reads the queue's children, retrying across connection loss while
// the session lives.
func (w *waiter) list(ctx context.Context) ([]child, error) {
	names, err := retryRead(ctx, w, func() ([]string, error) {
		n, _, err := w.c.conn.Children(w.target.parent)
		return n, err
	})
	if err != nil {
		return nil, err
	}
	return w.view(names)
}

// view parses a listing of our queue as our node sees it: the nodes up to
// and including ours, in order. A child that cannot be ordered fails the
// acquire (ErrUnknownNode).
func (w *waiter) view(names []string) ([]child, error) {
	kids, unknown, behind := sortAhead(names, w.n.name)
	if len(unknown) > 0 {
		slices.Sort(unknown)
		return nil, fmt.Errorf("%w: %s/%s (and %d more): it has no sequence number, so it may hold the lock",
			ErrUnknownNode, w.target.parent, unknown[0], len(unknown)-1)
	}
	w.n.behind = behind
	return kids, nil
}

// retryRead runs a read of our queue under ctx, again after each connection
// loss while our session lives. A vanished node or session is errRestart.
func retryRead[T any](ctx context.Context, w *waiter, fn func() (T, error)) (T, error) {
	for {
		v, err := call(ctx, fn)
		switch {
		case err == nil:
			return v, nil
		case isConnErr(err):
			if err = w.sameSession(ctx); err == nil {
				continue
			}
		case errors.Is(err, zk.ErrNoNode), errors.Is(err, zk.ErrSessionExpired):
			err = errRestart
		case isCtxErr(err):
		default:
			err = mapErr(err)
		}
		var zero T
		return zero, err
	}
}

// sameSession waits for the connection and returns errRestart if the
// session changed meanwhile.
func (w *waiter) sameSession(ctx context.Context) error {
	sid, err := w.c.waitReady(ctx)
	if err != nil {
		return err
	}
	if sid != w.sid {
		return errRestart
	}
	return nil
}

// watch sets a data watch on pred and waits for its deletion; it returns
// at once if pred is already gone. With own it first makes sure our node is
// watched too, in the same round trip (the two requests are pipelined).
func (w *waiter) watch(ctx context.Context, pred string, own bool) error {
	c := w.c
	for {
		type res struct {
			ch     <-chan zk.Event
			err    error
			ownErr error // of the read that watches our node, if made
		}
		needOwn := own && !w.n.ownWatched
		r, err := call(ctx, func() (res, error) {
			var ownCh chan error
			if needOwn {
				ownCh = make(chan error, 1)
				go func() {
					_, _, _, err := c.conn.GetW(w.n.path)
					ownCh <- err
				}()
			}
			_, _, ch, err := c.conn.GetW(pred)
			r := res{ch: ch, err: err}
			if ownCh != nil {
				r.ownErr = <-ownCh
			}
			return r, nil
		})
		if err != nil {
			return err
		}
		if needOwn {
			switch {
			case r.ownErr == nil:
				w.n.ownWatched = true
			case errors.Is(r.ownErr, zk.ErrNoNode), errors.Is(r.ownErr, zk.ErrSessionExpired):
				return errRestart
			case isConnErr(r.ownErr):
				if err := w.sameSession(ctx); err != nil {
					return err
				}
				continue
			default:
				return mapErr(r.ownErr)
			}
		}
		switch {
		case r.err == nil:
		case errors.Is(r.err, zk.ErrNoNode):
			return nil
		case isConnErr(r.err):
			if err := w.sameSession(ctx); err != nil {
				return err
			}
			continue
		case errors.Is(r.err, zk.ErrSessionExpired):
			return errRestart
		default:
			return mapErr(r.err)
		}
		select {
		case ev := <-r.ch:
			switch {
			case ev.Type == zk.EventNodeDeleted:
				// Our own node's deletion, if any, was delivered before
				// this event: check it now.
				select {
				case <-w.n.entry.gone:
					return errRestart
				default:
				}
				return nil
			case ev.Type == zk.EventNotWatching && errors.Is(ev.Err, zk.ErrClosing):
				return ErrClosed
			case ev.Type == zk.EventNotWatching:
				return errRestart
			}
			// data changed: set the watch again
		case <-w.n.entry.gone:
			return errRestart
		case <-ctx.Done():
			return ctxErr(ctx)
		case <-c.closeCh:
			return ErrClosed
		}
	}
}

func (w *waiter) report(ctx context.Context, pos int) {
	n := w.n
	n.entry.position.Store(int64(pos))
	if pos == n.pos {
		return
	}
	kind := EventPosition
	if n.pos < 0 {
		kind = EventEnqueued // a node of its own: a re-queue is reported again
	}
	n.pos = pos
	w.c.observe(ctx, Event{Kind: kind, ID: w.st.id, Resource: w.target.resource, Mode: w.cfg.mode,
		Path: n.path, Position: pos, Token: n.token, SessionID: w.sid})
}

// hold turns our node into a held lock.
func (w *waiter) hold(ctx context.Context) error {
	c := w.c
	// If we have not heard from the server for so long that the session may
	// be about to expire, prove it alive before handing out a lease. Like
	// every read of ours, the proof waits out a lost connection (within
	// ctx) and enqueues again if the session changed meanwhile.
	if time.Now().After(c.lossDeadline()) {
		ok, err := retryRead(ctx, w, func() (bool, error) {
			ok, _, err := c.conn.Exists(w.n.path)
			return ok, err
		})
		switch {
		case err != nil:
			return w.fail(err)
		case !ok:
			return errRestart
		}
	}
	c.mu.Lock()
	select {
	case <-w.n.entry.gone:
		c.mu.Unlock()
		return errRestart
	default:
	}
	c.mu.Unlock()
	h := &hold{resource: w.target.resource, parent: w.target.parent, path: w.n.path, token: w.n.token, sessionID: w.sid, entry: w.n.entry}
	if !w.st.addHold(h) {
		// Another part of this multi-resource lease was lost while we
		// waited: give this node back, and queue again for every part.
		return w.fail(errPartLost)
	}
	if w.cfg.mode == Semaphore && w.n.behind {
		c.poke(w.n.entry, w.data) // see slot.go
	}
	if !w.n.ownWatched {
		delay := c.cfg.nodeWatchDelay
		if w.multi {
			// A part of a multi-resource acquire is held while the others
			// are awaited: not a short critical section, so watch at once.
			delay = 0
		}
		w.n.entry.watchLater(c, delay)
	}
	c.mu.Lock()
	w.n.entry.st = w.st
	w.n.entry.position.Store(0)
	var gone bool
	select {
	case <-w.n.entry.gone:
		gone = true // deleted between the two steps above
	default:
	}
	c.mu.Unlock()
	if gone {
		w.st.lose(LossNodeDeleted)
	}
	return nil
}

// fail deletes our node (with a fresh context: the caller's may be dead)
// and returns err.
func (w *waiter) fail(err error) error {
	if errors.Is(err, errRestart) {
		w.forget() // the node is gone
		return err
	}
	if w.n != nil {
		deadline := w.deleteBy
		if deadline.IsZero() {
			deadline = time.Now().Add(w.c.answerBound())
		}
		w.c.removeNode(w.n.entry, deadline)
	}
	return err
}

// forget drops our record of the current node, which is already gone.
func (w *waiter) forget() {
	n := w.n
	if n == nil {
		return
	}
	w.c.mu.Lock()
	if w.c.nodes[n.path] == n.entry {
		delete(w.c.nodes, n.path)
		close(n.entry.gone) // a local successor waits on it (awaitLocal)
	}
	w.c.mu.Unlock()
	w.n = nil
}

// removeNode deletes one of our nodes that is not (or no longer) held.
// While connected it tries on the caller's goroutine until deadline (one
// round trip, normally), so the caller returns with no node of its left.
// It stops as soon as the connection is lost (a server killed as the caller
// gave up held callers a second past their deadline, waiting for the
// reconnect) and at deadline, at most answerBound from now, the bound for a
// connection that died silently. Otherwise, or if that was not enough, it
// goes on in the background until ZooKeeper confirms or the session ends.
func (c *Client) removeNode(e *nodeEntry, deadline time.Time) {
	c.mu.Lock()
	e.releasing = true
	ready, down := c.ready && !c.closed, c.downCh
	c.mu.Unlock()
	if ready && time.Until(deadline) > 0 {
		ctx, cancel := context.WithDeadline(context.Background(), deadline)
		go func() {
			select {
			case <-down:
				cancel()
			case <-ctx.Done():
			}
		}()
		err := c.deleteNode(ctx, e.path, e.sessionID)
		cancel()
		if err == nil {
			return
		}
	}
	c.goBackground(func(ctx context.Context) { _ = c.deleteNode(ctx, e.path, e.sessionID) })
}

// answerBound is how long a try, or the on-the-spot delete of a failed
// acquire's node, may wait on ZooKeeper: a third of the session timeout
// (the client pings every third), at most a second.
func (c *Client) answerBound() time.Duration {
	return min(c.cfg.sessionTimeout/3, time.Second)
}

// deleteNode deletes path, created in session sid, retrying across
// connection loss. It returns nil once the node is known to be gone
// (deleted, already gone, or gone with its session).
func (c *Client) deleteNode(ctx context.Context, path string, sid int64) error {
	defer func() {
		c.mu.Lock()
		if e := c.nodes[path]; e != nil && e.sessionID == sid {
			delete(c.nodes, path)
			close(e.gone)
		}
		c.mu.Unlock()
	}()
	for {
		cur, ready := c.session()
		if cur != sid {
			return nil // the session that owned it has expired
		}
		if !ready {
			if _, err := c.waitReady(ctx); err != nil {
				if errors.Is(err, ErrClosed) {
					return nil // closing the session deletes it
				}
				return err
			}
			continue
		}
		_, err := call(ctx, func() (struct{}, error) { return struct{}{}, c.conn.Delete(path, -1) })
		switch {
		case err == nil, errors.Is(err, zk.ErrNoNode), errors.Is(err, zk.ErrSessionExpired), errors.Is(err, zk.ErrClosing):
			return nil
		case isConnErr(err):
			continue
		case isCtxErr(err):
			return err
		default:
			c.log.Error("zklock: cannot delete lock node", "node", path, "err", err)
			return mapErr(err)
		}
	}
}

// cleanupByID deletes, in the background, any node of queue parent whose
// protected name carries id: the result of a create whose outcome we never
// learned.
func (c *Client) cleanupByID(parent, id string, sid int64) {
	c.goBackground(func(ctx context.Context) {
		for {
			cur, err := c.waitReady(ctx)
			if err != nil || cur != sid {
				return
			}
			names, _, err := c.conn.Children(parent)
			switch {
			case err == nil:
				for _, n := range names {
					if protectedID(n) == id {
						_ = c.deleteNode(ctx, parent+"/"+n, sid)
					}
				}
				return
			case isConnErr(err):
				continue
			default:
				return
			}
		}
	})
}

func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	var s [36]byte
	hex.Encode(s[0:8], b[0:4])
	s[8] = '-'
	hex.Encode(s[9:13], b[4:6])
	s[13] = '-'
	hex.Encode(s[14:18], b[6:8])
	s[18] = '-'
	hex.Encode(s[19:23], b[8:10])
	s[23] = '-'
	hex.Encode(s[24:], b[10:])
	return string(s[:])
}
