package chaos

import (
	"context"
	"sync"
	"time"

	"github.com/zklockkit/zklockkit/zklock"
)

// Outcomes of the notes a Client's session reports (sessionFates).
const (
	// OutcomeSessionVerified: the session (Event.Session) was verified,
	// at its start or again after a suspension: it was alive then.
	OutcomeSessionVerified = "session-verified"
	// OutcomeSessionReplaced: the Client was verified on a new session,
	// so its previous one (Event.Session) had ended: ZooKeeper expired
	// it (the workers close no Client mid-run).
	OutcomeSessionReplaced = "session-replaced"
)

// sessionFates reports what became of a Client's sessions, so that the
// checker can tell a lease lost on a session that then expired (ZooKeeper
// deleted its node: the next holder came in no sooner than the loss margin
// after the holder was told) from one whose session lived on (the client
// deleted the node itself). A lease's process reports neither for a load
// session otherwise. Both notes are rare: one per change of the session's
// state to verified.
type sessionFates struct {
	w    *worker
	mu   sync.Mutex
	last int64 // the session last verified
}

// started records the Client's first session, sid, once Connect returned
// (the first verification is no change of state: no event reports it).
func (f *sessionFates) started(sid int64) {
	f.mu.Lock()
	first := f.last == 0
	if first {
		f.last = sid
	}
	f.mu.Unlock()
	if first && sid != 0 {
		f.w.send(Event{Kind: EvNote, Outcome: OutcomeSessionVerified, Session: sid})
	}
}

// Observe implements zklock.Observer. It must not block (it is called on
// the Client's goroutines): the notes go out on goroutines of their own.
func (f *sessionFates) Observe(_ context.Context, e zklock.Event) {
	if e.Kind != zklock.EventState || e.State != zklock.SessionVerified || e.SessionID == 0 {
		return
	}
	t := time.Now().UnixNano() // stamped now: the notes go out later
	f.mu.Lock()
	prev := f.last
	f.last = e.SessionID
	f.mu.Unlock()
	if prev != 0 && prev != e.SessionID {
		go f.w.send(Event{Kind: EvNote, T: t, Outcome: OutcomeSessionReplaced, Session: prev})
	}
	go f.w.send(Event{Kind: EvNote, T: t, Outcome: OutcomeSessionVerified, Session: e.SessionID})
}
