// Package session is one ZooKeeper session of a zklock Client: connecting,
// the session's state (ready, suspended, expired, closed), the proof that
// ZooKeeper's leader has heard from the session recently enough, the loss
// deadline that follows from it and the watchdog that keeps it, and the
// background work that Close waits for.
//
// The door is one type, Session, and the function Call. The lock recipe
// (package queue) keeps the session's lock nodes; the session reaches
// them through the Nodes interface it is given, so that it knows nothing
// of the recipe.
package session
