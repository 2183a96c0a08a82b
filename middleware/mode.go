package middleware

import (
	"fmt"
	"net/http"

	"github.com/zklockkit/zklockkit/zklock"
)

// Mode is how a route locks its resource.
type Mode int

// Lock modes.
const (
	// Exclusive: one request at a time per resource (the default).
	Exclusive Mode = iota
	// ReadWrite: GET and HEAD requests share a read lock; every other
	// method takes the write lock, which excludes readers and writers.
	ReadWrite
	// Read: every request takes a shared read lock.
	Read
	// Write: every request takes the write lock.
	Write
)

// String returns the mode's name: "exclusive", "read-write", "read" or
// "write".
func (m Mode) String() string {
	switch m {
	case Exclusive:
		return "exclusive"
	case ReadWrite:
		return "read-write"
	case Read:
		return "read"
	case Write:
		return "write"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

func (m Mode) valid() bool { return m >= Exclusive && m <= Write }

// lockMode returns the zklock mode for a request method.
func (m Mode) lockMode(method string) zklock.Mode {
	switch m {
	case ReadWrite:
		if method == http.MethodGet || method == http.MethodHead {
			return zklock.Read
		}
		return zklock.Write
	case Read:
		return zklock.Read
	case Write:
		return zklock.Write
	}
	return zklock.Exclusive
}
