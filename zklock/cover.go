package zklock

import "strings"

// A direct hand-off (see waiter.ahead) takes the lock with no request when
// the node ahead goes, trusting that a deletion of our own node would have
// reached us first. That takes a watch that sees our node go, set before
// the wait: usually a data watch on our node, one more request per
// waiter. A queue's child watch, set by the listing itself, sees it too,
// at no request: it fires on the first change of the queue, whatever it
// is. A cover is such a listing's child watch, standing in for the watch
// on our node while nothing else changes in the queue.
//
// A waiter arms one when its create found exactly one node ahead of it (a
// counted create, see createCounted), so that it is the one waiter to
// take the lock when that node goes: its listing then costs no more than
// a plain one and its wait needs only the watch on the node ahead, three
// requests per waiting acquire where a data watch on our node makes four,
// and three are what go-zookeeper's zk.Lock makes (create, list, watch).
//
// ZooKeeper sends a session's events in the order of the changes, within
// a connection, and delivers the deletion of a node before its parent's
// child event for the same change. So when the node ahead's deletion
// arrives while the cover's child watch has not fired, nothing in the
// queue changed between our listing and that deletion, our node included:
// the hand-off is safe (clean). If the child watch fired first, something
// changed (a node queued behind us, or ours went): the waiter is woken,
// watches its own node as it would have without a cover (finding it gone
// if it is), and waits again. A lost connection ends what a cover proves,
// as it does for a data watch (see node.handoffSafe).
type cover struct {
	epoch <-chan struct{} // the connection epoch of the listing (Client.epoch)
	fired chan struct{}   // closed when the child watch fires
	// Guarded by Client.mu:
	next  *cover // the next cover armed on the same queue (Client.covers)
	pred  string // the node ahead; its deletion hands us the lock
	clean bool   // pred's deletion arrived before the child watch fired
	done  bool   // fired is closed
}

// armCover registers a cover for a listing of parent about to be sent
// with a child watch. Registered before the request, it may be fired by
// an earlier child watch of the session on the same queue: that only
// costs the waiter the watch on its own node it would have set anyway.
func (c *Client) armCover(parent string) *cover {
	cv := &cover{fired: make(chan struct{})}
	c.mu.Lock()
	defer c.mu.Unlock()
	cv.epoch = c.downCh
	if c.covers == nil {
		c.covers = make(map[string]*cover)
	}
	cv.next = c.covers[parent]
	c.covers[parent] = cv
	return cv
}

// disarm forgets cv, armed on parent, whose listing failed: it covers
// nothing.
func (c *Client) disarm(parent string, cv *cover) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var prev *cover
	for x := c.covers[parent]; x != nil; prev, x = x, x.next {
		if x != cv {
			continue
		}
		switch {
		case prev != nil:
			prev.next = x.next
		case x.next != nil:
			c.covers[parent] = x.next
		default:
			delete(c.covers, parent)
		}
		break
	}
	cv.fireLocked()
}

// fireLocked marks cv fired. c.mu is held.
func (cv *cover) fireLocked() {
	if !cv.done {
		cv.done = true
		close(cv.fired)
	}
}

// coverEventLocked updates the covers for a watch event, from the event
// callback, in the order of the events. c.mu is held.
func (c *Client) coverEventLocked(typ eventType, path string) {
	if len(c.covers) == 0 {
		return
	}
	switch typ {
	case childrenChanged:
		// A child watch fires once: every cover on this queue is spent.
		for cv := c.covers[path]; cv != nil; cv = cv.next {
			cv.fireLocked()
		}
		delete(c.covers, path)
	case nodeDeleted:
		i := strings.LastIndexByte(path, '/')
		if i <= 0 {
			return
		}
		for cv := c.covers[path[:i]]; cv != nil; cv = cv.next {
			if cv.pred == path && !cv.done {
				cv.clean = true
			}
		}
	}
}

// dropCoversLocked fires and forgets every cover: the session's watches
// are gone with it. c.mu is held.
func (c *Client) dropCoversLocked() {
	for _, cv := range c.covers {
		for ; cv != nil; cv = cv.next {
			cv.fireLocked()
		}
	}
	c.covers = nil
}

// eventType is the kind of watch event a cover cares about.
type eventType uint8

const (
	childrenChanged eventType = iota + 1
	nodeDeleted
)

// covering reports whether cv still covers our node, and if so records
// pred as the node whose deletion hands us the lock: the caller then
// watches pred alone. cv may be nil.
func (c *Client) covering(cv *cover, pred string) bool {
	if cv == nil {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if cv.done {
		return false
	}
	select {
	case <-cv.epoch:
		return false
	default:
	}
	cv.pred = pred
	return true
}

// coveredHandoff reports whether pred's deletion, just received, hands us
// the lock with no request under cv: it arrived before anything else
// changed in the queue, on the connection of cv's listing.
func (c *Client) coveredHandoff(cv *cover, pred string) bool {
	c.mu.Lock()
	ok := cv.clean && cv.pred == pred
	c.mu.Unlock()
	if !ok {
		return false
	}
	select {
	case <-cv.epoch:
		return false
	default:
		return true
	}
}
