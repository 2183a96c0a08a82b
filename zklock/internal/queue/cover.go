package queue

// A waiter that cannot take the lock waits, in the plain recipe, on a
// watch on the node ahead of it, and lists its queue again once woken:
// three requests to queue (the create, the listing, the watch) and one to
// take the lock. A waiter whose create found exactly one node ahead of it
// (a counted create, see createCounted) needs neither watch: it lists its
// queue with a child watch, and that watch is what it waits on, its
// cover. The cover fires on the queue's first change, whatever it is:
// the node ahead going (the usual case: the waiter lists and holds), our
// own node going (the listing finds it gone), or a node queuing behind
// ours (the waiter lists, finds the node ahead still there, and waits on
// it as any waiter does, with the watches on it and on our node that a
// direct hand-off needs). Two requests to queue where zk.Lock makes three,
// and one watch per waiter on the server and in the client, as zk.Lock's;
// taking the lock costs the one listing it costs zk.Lock. No herd: at
// most one waiter of a queue is covered at a time (the one second in line
// when it queued, until the queue's first change).
//
// A cover fires on its own too when the session ends or the client
// closes (dropCoversLocked): the listing then fails, as it would have for
// the watch ahead. A lost connection ends nothing: go-zookeeper sets the
// child watch again on the next connection, and the server fires it at
// once if the queue changed meanwhile.
type cover struct {
	fired chan struct{} // closed when the child watch fires
	// Guarded by Queues.mu:
	next *cover // the next cover armed on the same queue (Queues.covers)
	done bool   // fired is closed
}

// armCover registers a cover for a listing of parent about to be sent
// with a child watch. Registered before the request, it may be fired by
// an earlier child watch of the session on the same queue: that only
// costs the waiter a listing.
func (q *Queues) armCover(parent string) *cover {
	cv := &cover{fired: make(chan struct{})}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.covers == nil {
		q.covers = make(map[string]*cover)
	}
	cv.next = q.covers[parent]
	q.covers[parent] = cv
	return cv
}

// disarm forgets cv, armed on parent, whose listing failed: it covers
// nothing.
func (q *Queues) disarm(parent string, cv *cover) {
	q.mu.Lock()
	defer q.mu.Unlock()
	var prev *cover
	for x := q.covers[parent]; x != nil; prev, x = x, x.next {
		if x != cv {
			continue
		}
		switch {
		case prev != nil:
			prev.next = x.next
		case x.next != nil:
			q.covers[parent] = x.next
		default:
			delete(q.covers, parent)
		}
		break
	}
	cv.fireLocked()
}

// fireLocked marks cv fired. q.mu is held.
func (cv *cover) fireLocked() {
	if !cv.done {
		cv.done = true
		close(cv.fired)
	}
}

// coverEventLocked fires the covers of queue path for its child event,
// from the event callback. A child watch fires once: every cover on the
// queue is spent. q.mu is held.
func (q *Queues) coverEventLocked(path string) {
	for cv := q.covers[path]; cv != nil; cv = cv.next {
		cv.fireLocked()
	}
	delete(q.covers, path)
}

// dropCoversLocked fires and forgets every cover: the session's watches
// are gone with it. q.mu is held.
func (q *Queues) dropCoversLocked() {
	for _, cv := range q.covers {
		for ; cv != nil; cv = cv.next {
			cv.fireLocked()
		}
	}
	q.covers = nil
}

// covering reports whether cv, if any, has not fired yet: the waiter may
// then wait on it alone.
func (q *Queues) covering(cv *cover) bool {
	if cv == nil {
		return false
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	return !cv.done
}
