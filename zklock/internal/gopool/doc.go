// Package gopool runs a Client's short-lived work (an acquire's step, a
// create's pipelined listing, a batch of deletes) on goroutines kept for
// reuse.
//
// Each of those once started a goroutine of its own: three per
// uncontended acquire and release, none for go-zookeeper's zk.Lock. A new
// goroutine starts on the smallest stack, and go-zookeeper's calls grow
// it at once (a create and a listing reach 4 to 8 KiB); the runtime
// copies the stack at each growth, and frees it when the goroutine ends.
// A Pool keeps up to MaxIdle goroutines parked once their work is done;
// the next work is handed to one of them, with the stack it has grown.
// With none parked, the work starts a goroutine, as before.
//
// The pool never delays work: a Go call that finds no parked goroutine
// starts one. It never grows past the work in flight plus MaxIdle.
package gopool
