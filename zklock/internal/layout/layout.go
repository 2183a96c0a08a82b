// Package layout knows the names of lock nodes and the order of a queue:
// Curator's, kazoo's, go-zookeeper's and ZooKeeper's own layouts, protected
// names (Curator's "_c_<uuid>-"), and the rule that says which node of a
// sorted queue holds and which earlier node a waiter watches. The
// ZooKeeper recipe, the MemoryLocker and Inspect all apply this one rule.
// Pure functions; it imports nothing of the module.
package layout

import (
	"crypto/rand"
	"encoding/hex"
	"slices"
	"strings"
)

// Kind is the kind of lock a node asks for. Its values are zklock.Mode's,
// in the same order (zklock converts one to the other).
type Kind int

// Kinds of lock node.
const (
	Exclusive Kind = iota
	Read
	Write
	Semaphore
	Election
)

// Node name layouts. Sequence numbers are the 10 digits ZooKeeper appends.
const (
	ProtectedPrefix = "_c_"   // Curator's protected-name prefix, followed by a UUID and "-"
	MarkLock        = "lock-" // Curator InterProcessMutex, go-zookeeper zk.Lock
	markRead        = "__READ__"
	markWrite       = "__WRIT__"
	markKazooLock   = "__lock__"
	markKazooRead   = "__rlock__"
	markSemaphore   = "sema-"  // zklock's own semaphore layout
	markLatch       = "latch-" // Curator LeaderLatch
	seqDigits       = 10
)

// Child is one parsed lock node in a resource's queue.
type Child struct {
	Name string
	Seq  int64
	Kind Kind
}

// Marker returns the name part that precedes the sequence for a kind.
func Marker(k Kind) string {
	switch k {
	case Read:
		return markRead
	case Write:
		return markWrite
	case Semaphore:
		return markSemaphore
	case Election:
		return markLatch
	}
	return MarkLock
}

// Parse parses a lock node name. The sequence number is the ten
// digits ZooKeeper appends to a sequential node's name; the text before it
// says the kind: Curator's and go-zookeeper's "lock-", Curator's
// "__READ__"/"__WRIT__", kazoo's "__lock__"/"__rlock__", zklock's "sema-",
// Curator's LeaderLatch "latch-", and ZooKeeper's own WriteLock recipe
// ("x-<sessionId>-"). A name with a sequence number and none of these
// layouts is another recipe's lock node: it counts as an exclusive node in
// sequence order, so that no lock is granted past it. Only a name with no
// sequence number cannot be ordered; ok is then false and the caller fails
// (see unknownNodeError): never grant a lock past a node you do not
// understand.
func Parse(name string) (Child, bool) {
	if len(name) < seqDigits {
		return Child{}, false
	}
	digits := name[len(name)-seqDigits:]
	var seq int64
	for i := 0; i < len(digits); i++ {
		d := digits[i]
		if d < '0' || d > '9' {
			return Child{}, false
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
	return Child{Name: name, Seq: seq, Kind: m}, true
}

// ProtectedID returns the UUID of a Curator-style protected name
// ("_c_<uuid>-..."), or "" when the name is not protected.
func ProtectedID(name string) string {
	if !strings.HasPrefix(name, ProtectedPrefix) {
		return ""
	}
	rest := name[len(ProtectedPrefix):]
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

// Sort parses names, returns the lock nodes in sequence order and
// the names that have no sequence number.
func Sort(names []string) (kids []Child, unknown []string) {
	kids = make([]Child, 0, len(names))
	for _, n := range names {
		if c, ok := Parse(n); ok {
			kids = append(kids, c)
		} else {
			unknown = append(unknown, n)
		}
	}
	slices.SortFunc(kids, Compare)
	return kids, unknown
}

// SortAhead is Sort for the waiter whose node is named ours: it
// keeps only the nodes up to and including ours, since nothing behind a
// node bears on whether it holds or what it watches (see Rule). A waiter
// near the head of a long queue then sorts next to nothing. behind reports
// whether any node lies behind ours.
//
// dup reports a listing that proves its server diverged from the
// ensemble: two of the nodes kept share a sequence number, or a node
// behind ours has ours. ZooKeeper numbers a queue's children from one
// counter, so a consistent server never lists two live nodes with one
// number; a waiter must not decide anything on such a listing.
func SortAhead(names []string, ours string) (kids []Child, unknown []string, behind, dup bool) {
	return SortAheadInto(nil, names, ours)
}

// SortAheadInto is SortAhead with the room of kids, which it overwrites,
// for the nodes kept: a waiter that lists its queue again reuses it.
func SortAheadInto(kids []Child, names []string, ours string) (_ []Child, unknown []string, behind, dup bool) {
	me, ok := Parse(ours)
	if !ok {
		kids, unknown = Sort(names)
		return kids, unknown, false, duplicated(kids)
	}
	if kids == nil {
		// Room for a short queue whole, at once: grown node by node, a
		// listing of 32 took 6 allocations and 2,144 bytes, now 1 and
		// 1,152 (BenchmarkSortAhead).
		kids = make([]Child, 0, min(len(names), sortAheadRoom))
	}
	kids = kids[:0]
	for _, n := range names {
		c, ok := Parse(n)
		switch {
		case !ok:
			unknown = append(unknown, n)
		case Compare(c, me) <= 0:
			kids = append(kids, c)
		default:
			behind = true
			dup = dup || c.Seq == me.Seq
		}
	}
	slices.SortFunc(kids, Compare)
	return kids, unknown, behind, dup || duplicated(kids)
}

// sortAheadRoom is the most room SortAhead makes before it parses: a
// waiter far back in a long queue grows its slice as it goes, one near
// the head of it does not pay for the whole queue.
const sortAheadRoom = 64

// duplicated reports whether two nodes of sorted kids share a sequence
// number.
func duplicated(kids []Child) bool {
	for i := 1; i < len(kids); i++ {
		if kids[i].Seq == kids[i-1].Seq {
			return true
		}
	}
	return false
}

// Compare orders nodes by sequence number, then name.
func Compare(a, b Child) int {
	switch {
	case a.Seq < b.Seq:
		return -1
	case a.Seq > b.Seq:
		return 1
	}
	return strings.Compare(a.Name, b.Name)
}

// Rule decides, for the node at index i of a sorted queue, whether it holds
// the lock and, if not, which earlier node it must watch. Exactly one node
// is watched, so each hand-off wakes only a waiter that may proceed next.
// A semaphore waiter watches more than its predecessor when it is first in
// line (see awaitSlot); Rule names its predecessor.
func Rule(kids []Child, i int, limit int) (held bool, watch int) {
	switch kids[i].Kind {
	case Read:
		// A reader holds unless a writer or exclusive node is ahead; it
		// watches the nearest such node.
		for j := i - 1; j >= 0; j-- {
			if kids[j].Kind != Read {
				return false, j
			}
		}
		return true, -1
	case Semaphore:
		// A semaphore node holds when fewer than limit nodes are ahead,
		// all of them semaphore nodes: a node of any other kind ahead
		// (exclusive, write, read, another recipe's) excludes it, as it
		// excludes every node behind it. It watches its predecessor.
		if limit < 1 {
			limit = 1
		}
		if i < limit && Only(kids[:i], Semaphore) {
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

// Only reports whether every node of kids is of kind k.
func Only(kids []Child, k Kind) bool {
	for _, c := range kids {
		if c.Kind != k {
			return false
		}
	}
	return true
}

// HeldWithout reports whether the node at index i of a sorted queue would
// hold were the node at index j, ahead of it, gone: Rule on kids without
// kids[j], without copying them.
func HeldWithout(kids []Child, i, j int, limit int) bool {
	switch kids[i].Kind {
	case Read:
		for k := i - 1; k >= 0; k-- {
			if k != j && kids[k].Kind != Read {
				return false
			}
		}
		return true
	case Semaphore:
		for k := i - 1; k >= 0; k-- {
			if k != j && kids[k].Kind != Semaphore {
				return false
			}
		}
		return i-1 < max(limit, 1)
	default:
		return i == 1
	}
}

// NewID returns a random UUID (version 4) for a protected name: it lets a
// client find its own node after a lost create reply.
func NewID() string {
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
