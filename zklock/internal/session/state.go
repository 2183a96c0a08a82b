package session

import (
	"sync/atomic"
	"time"
)

// Status is what the client knows of its session now (see State).
type Status int

// Statuses, as package zklock's SessionState.
const (
	// Verified: connected, and the leader is proven to have heard from
	// the session recently enough that a lease held now is kept
	// (LossDeadline is ahead).
	Verified Status = iota + 1
	// Suspended: not verified: disconnected, or connected without a
	// proof of life that reaches now (a server cut off from its leader
	// answers pings, not syncs). Leases are kept until LossDeadline.
	Suspended
	// Expired: ZooKeeper expired the session; every lease on it is lost.
	// The client is establishing a new session.
	Expired
	// Closed: the client was closed.
	Closed
)

// String returns the status's name: "verified", "suspended", "expired"
// or "closed" (package zklock's SessionState prints the same).
func (st Status) String() string {
	switch st {
	case Verified:
		return "verified"
	case Suspended:
		return "suspended"
	case Expired:
		return "expired"
	case Closed:
		return "closed"
	}
	return "unknown"
}

// stateWatch publishes the session's status: the current one, and a
// channel closed when it changes (State). It is kept by its own goroutine
// (watchState), woken by the session's events and by the proof's deadline.
type stateWatch struct {
	kick     chan struct{} // something the status depends on changed
	interest atomic.Int64  // unix nanoseconds of the last State call (see prover)
	cur      atomic.Pointer[published]
}

// published is one status and the channel closed when it is replaced.
type published struct {
	status  Status
	changed chan struct{}
}

// State returns the session's status, and a channel closed when it next
// changes. Asking keeps the session proven for a while, lock nodes or
// not (see prover), so that a health check polling State sees Verified
// only on a live proof.
func (s *Session) State() (Status, <-chan struct{}) {
	if old := s.state.interest.Swap(time.Now().UnixNano()); time.Since(time.Unix(0, old)) > s.cfg.SessionTimeout {
		select {
		case s.proveNow <- struct{}{}:
		default:
		}
	}
	p := s.state.cur.Load()
	return p.status, p.changed
}

// Published returns the session's status, as State does, without
// asking: it keeps no proof going.
func (s *Session) Published() Status { return s.state.cur.Load().status }

// watched reports whether State was asked within the session timeout.
func (s *Session) watched() bool {
	return time.Since(time.Unix(0, s.state.interest.Load())) < s.cfg.SessionTimeout
}

// status computes the session's status now, and when it may change by
// itself (the proof running out); zero when only an event can change it.
func (s *Session) status() (Status, time.Time) {
	s.mu.Lock()
	closed, ready, expired := s.closed, s.ready, s.expired
	s.mu.Unlock()
	switch {
	case closed:
		return Closed, time.Time{}
	case expired:
		return Expired, time.Time{}
	case !ready:
		return Suspended, time.Time{}
	}
	if d := s.LossDeadline(); time.Now().Before(d) {
		return Verified, d
	}
	return Suspended, time.Time{}
}

// nudgeState wakes watchState: something the status depends on changed.
func (s *Session) nudgeState() {
	select {
	case s.state.kick <- struct{}{}:
	default:
	}
}

// watchState keeps the published status, and reports each change to
// Config.OnStatus.
func (s *Session) watchState() {
	defer s.wg.Done()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		s.mu.Lock()
		passed := s.passed
		s.passed = nil
		s.mu.Unlock()
		for _, st := range passed {
			s.publish(st)
		}
		st, until := s.status()
		s.publish(st)
		if st == Closed {
			return
		}
		d := time.Hour
		if !until.IsZero() {
			d = time.Until(until) + time.Millisecond
		}
		timer.Reset(d)
		select {
		case <-s.state.kick:
		case <-timer.C:
		case <-s.closeCh:
		}
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
	}
}

// publish makes st the session's status, if it is not already, and
// reports the change.
func (s *Session) publish(st Status) {
	if !s.swap(st) {
		return
	}
	s.note("state "+st.String(), s.ID())
	if s.cfg.OnStatus != nil {
		s.cfg.OnStatus(st, s.ID())
	}
}

// publishQuietly makes st the session's status, reporting no change to
// Config.OnStatus: the first status, when the session is established.
// The History still notes it.
func (s *Session) publishQuietly(st Status) {
	if s.swap(st) {
		s.note("state "+st.String(), s.ID())
	}
}

// swap makes st the published status, and reports whether it changed it.
func (s *Session) swap(st Status) bool {
	p := s.state.cur.Load()
	if p.status == st || p.status == Closed {
		return false
	}
	if !s.state.cur.CompareAndSwap(p, &published{status: st, changed: make(chan struct{})}) {
		return false // Close published Closed meanwhile
	}
	close(p.changed)
	return true
}

// publishClosed publishes Closed once the session's goroutines are done
// (watchState ends on Close, and may not have seen it).
func (s *Session) publishClosed() {
	for s.state.cur.Load().status != Closed {
		s.publish(Closed)
	}
}
