package zklock

import (
	"slices"
	"strings"
)

// Node name layouts. Sequence numbers are the 10 digits ZooKeeper appends.
const (
	protectedPrefix = "_c_"   // Curator's protected-name prefix, followed by a UUID and "-"
	markLock        = "lock-" // Curator InterProcessMutex, go-zookeeper zk.Lock
	markRead        = "__READ__"
	markWrite       = "__WRIT__"
	markKazooLock   = "__lock__"
	markKazooRead   = "__rlock__"
	markSemaphore   = "sema-"  // zklock's own semaphore layout
	markLatch       = "latch-" // Curator LeaderLatch
	seqDigits       = 10
)

// child is one parsed lock node in a resource's queue.
type child struct {
	name string
	seq  int64
	mode Mode // Exclusive, Read, Write or Semaphore
}

// marker returns the name part that precedes the sequence for a mode.
func marker(m Mode) string {
	switch m {
	case Read:
		return markRead
	case Write:
		return markWrite
	case Semaphore:
		return markSemaphore
	case Election:
		return markLatch
	}
	return markLock
}

// parseChild parses a lock node name. The sequence number is the ten
// digits ZooKeeper appends to a sequential node's name; the text before it
// says the mode: Curator's and go-zookeeper's "lock-", Curator's
// "__READ__"/"__WRIT__", kazoo's "__lock__"/"__rlock__", zklock's "sema-",
// Curator's LeaderLatch "latch-", and ZooKeeper's own WriteLock recipe
// ("x-<sessionId>-"). A name with a sequence number and none of these
// layouts is another recipe's lock node: it counts as an exclusive node in
// sequence order, so that no lock is granted past it. Only a name with no
// sequence number cannot be ordered; ok is then false and the caller fails
// (see unknownNodeError): never grant a lock past a node you do not
// understand.
func parseChild(name string) (child, bool) {
	if len(name) < seqDigits {
		return child{}, false
	}
	digits := name[len(name)-seqDigits:]
	var seq int64
	for i := 0; i < len(digits); i++ {
		d := digits[i]
		if d < '0' || d > '9' {
			return child{}, false
		}
		seq = seq*10 + int64(d-'0')
	}
	head := name[:len(name)-seqDigits]
	m := Exclusive // "lock-", ZooKeeper's WriteLock, and foreign layouts
	switch {
	case strings.HasSuffix(head, markRead), strings.HasSuffix(head, markKazooRead):
		m = Read
	case strings.HasSuffix(head, markWrite), strings.HasSuffix(head, markKazooLock):
		m = Write
	case strings.HasSuffix(head, markSemaphore):
		m = Semaphore
	case strings.HasSuffix(head, markLatch):
		m = Election
	}
	return child{name: name, seq: seq, mode: m}, true
}

// protectedID returns the UUID of a Curator-style protected name
// ("_c_<uuid>-..."), or "" when the name is not protected.
func protectedID(name string) string {
	if !strings.HasPrefix(name, protectedPrefix) {
		return ""
	}
	rest := name[len(protectedPrefix):]
	i := strings.IndexByte(rest, '-')
	// A UUID has dashes of its own: take the fixed 36-character form when
	// present, else (go-zookeeper's 32 hex digits) up to the first dash.
	if len(rest) > 36 && rest[36] == '-' && strings.Count(rest[:36], "-") == 4 {
		return rest[:36]
	}
	if i <= 0 {
		return ""
	}
	return rest[:i]
}

// sortChildren parses names, returns the lock nodes in sequence order and
// the names that have no sequence number.
func sortChildren(names []string) (kids []child, unknown []string) {
	kids = make([]child, 0, len(names))
	for _, n := range names {
		if c, ok := parseChild(n); ok {
			kids = append(kids, c)
		} else {
			unknown = append(unknown, n)
		}
	}
	slices.SortFunc(kids, compareChildren)
	return kids, unknown
}

// sortAhead is sortChildren for the waiter whose node is named ours: it
// keeps only the nodes up to and including ours, since nothing behind a
// node bears on whether it holds or what it watches (see rule). A waiter
// near the head of a long queue then sorts next to nothing. behind reports
// whether any node lies behind ours.
func sortAhead(names []string, ours string) (kids []child, unknown []string, behind bool) {
	me, ok := parseChild(ours)
	if !ok {
		kids, unknown = sortChildren(names)
		return kids, unknown, false
	}
	for _, n := range names {
		c, ok := parseChild(n)
		switch {
		case !ok:
			unknown = append(unknown, n)
		case compareChildren(c, me) <= 0:
			kids = append(kids, c)
		default:
			behind = true
		}
	}
	slices.SortFunc(kids, compareChildren)
	return kids, unknown, behind
}

// compareChildren orders nodes by sequence number, then name.
func compareChildren(a, b child) int {
	switch {
	case a.seq < b.seq:
		return -1
	case a.seq > b.seq:
		return 1
	}
	return strings.Compare(a.name, b.name)
}

// rule decides, for the node at index i of a sorted queue, whether it holds
// the lock and, if not, which earlier node it must watch. Exactly one node
// is watched, so each hand-off wakes only a waiter that may proceed next.
// A semaphore waiter watches more than its predecessor when it is first in
// line (see awaitSlot); rule names its predecessor.
func rule(kids []child, i int, limit int) (held bool, watch int) {
	switch kids[i].mode {
	case Read:
		// A reader holds unless a writer or exclusive node is ahead; it
		// watches the nearest such node.
		for j := i - 1; j >= 0; j-- {
			if kids[j].mode != Read {
				return false, j
			}
		}
		return true, -1
	case Semaphore:
		if limit < 1 {
			limit = 1
		}
		if i < limit {
			return true, -1
		}
		return false, i - 1
	default:
		if i == 0 {
			return true, -1
		}
		return false, i - 1
	}
}
