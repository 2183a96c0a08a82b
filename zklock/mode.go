package zklock

// Mode is the kind of lock an acquire asks for.
type Mode int

// Lock modes.
const (
	// Exclusive: one holder at a time (the default).
	Exclusive Mode = iota
	// Read: shared with other readers; excluded by writers and exclusive
	// holders ahead in the queue.
	Read
	// Write: excludes everyone; same as Exclusive but named with Curator's
	// read/write layout so Java readers and writers see it.
	Write
	// Semaphore: up to the limit given with WithLimit hold at once.
	Semaphore
	// Election: a candidate in a leader election (Client.Campaign); the
	// first candidate leads. Node names follow Curator's LeaderLatch.
	Election
)

func (m Mode) String() string {
	switch m {
	case Exclusive:
		return "exclusive"
	case Read:
		return "read"
	case Write:
		return "write"
	case Semaphore:
		return "semaphore"
	case Election:
		return "election"
	}
	return "unknown"
}
