// Package queue is zklock's lock recipe on a ZooKeeper session: the
// registry of the client's lock nodes, and the waiter that takes one
// acquire's part through a resource's queue (create, counted create,
// recovery from a lost create reply, listing, watches, local and direct
// hand-offs, the cover, the semaphore's slots), holds, deletes, and
// downgrades. docs/protocol.md describes the protocol request by request.
//
// The door: Queues (one per session: the registry, deletes, releases,
// snapshots), Waiter (one part of one acquire, a step at a time), Park
// (what a waiter waits for between two steps), and Holder, the interface
// through which package zklock's lease is told of its node's loss.
package queue
