// Package wire is the tracked connection under go-zookeeper: it learns
// from the bytes of zklock's own connection what go-zookeeper hides (when
// the server last heard from the client, a create's czxid, the moment a
// create is on the wire) and works around its reconnection race. The
// door is one type, Tracker: go-zookeeper dials through Tracker.Dial, and
// the session and the lock recipe read what it learned. docs/wire.md
// describes it.
package wire
