package session

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zklockkit/zklockkit/internal/canary"
	"github.com/zklockkit/zklockkit/zklock/internal/errs"
)

// Proof of life from the leader.
//
// ZooKeeper's leader expires a session, not the server the client talks
// to. A follower answers the client's pings on its own; it passes the
// sessions it heard from on to the leader when the leader pings it (every
// tickTime/2). A follower cut off from the leader, silently, goes on
// answering pings until it gives up on the leader (syncLimit × tickTime),
// while the leader, hearing nothing of the session, expires it and grants
// its locks to someone else. So an answered ping proves that the server
// heard the client, not that the leader did.
//
// A sync does: the follower forwards it to the leader and answers once the
// leader has. Sent at s and answered, it proves the leader-follower link
// was up after the follower had seen the client's earlier requests; the
// follower's touch table, carrying the client's session, reached the
// leader with the follower's answer to a leader ping no later than that,
// so the leader heard of the session at or after the client's previous
// request, sent no earlier than s minus one sync interval, minus half a
// tick for the ping that carried it. The client does not know the tick;
// it is at most half the negotiated session timeout (ZooKeeper's minimum
// timeout is two ticks), so the proven anchor is
//
//	s − interval − timeout/4
//
// A write the server answers with success proves the same, on the same
// terms: the follower forwards it to the leader, behind what it sent the
// leader before, and answers success only once the leader has committed
// it. It counts (wire.Tracker.OnCommit) only when the request before it
// on its connection was sent within one interval, which the argument
// assumes of the client's previous request; a write after a longer
// silence proves nothing.
//
// The client sends a sync while it has lock nodes whenever no answered
// sync or counted write was sent within the last interval (a tenth of the
// session timeout): a client that writes, as a contended one does at every
// cycle, sends none. It also sends one before granting a lock when the
// proof has run out (the recipe's proveAlive). Leases are given up at the proven
// anchor plus the session timeout minus the loss margin (LossDeadline):
// with the default margin of a quarter, 40% of the timeout after the last
// proof's send.
type quorum struct {
	mu     sync.Mutex
	sent   time.Time // the send time of the latest answered sync or counted write
	sid    int64     // the session it was answered on
	flying atomic.Bool
	syncs  atomic.Uint64 // sent by the prover (ProverSyncs)
}

// proven returns when the leader is known to have heard from session sid,
// from the latest answered sync, or est, the send time of the connect
// request that established or resumed sid (the leader creates and
// revalidates sessions); the zero time if neither is known.
func (q *quorum) proven(sid int64, est time.Time, timeout time.Duration) time.Time {
	sent := q.latest(sid, est)
	if sent.IsZero() {
		return sent
	}
	return sent.Add(-ProofInterval(timeout) - timeout/PingDelayDivisor)
}

// latest returns the send time of the latest proof of session sid: an
// answered sync, a counted write, or est, the send time of the connect
// request that established or resumed it; the zero time if none.
func (q *quorum) latest(sid int64, est time.Time) time.Time {
	q.mu.Lock()
	sent := time.Time{}
	if q.sid == sid {
		sent = q.sent
	}
	q.mu.Unlock()
	if est.After(sent) {
		sent = est
	}
	return sent
}

// PingDelayDivisor bounds how long before a sync's send the leader may
// last have heard of the session through a follower: the follower passes
// it on with its answer to the leader's ping, every half tick, and a tick
// is at most half the negotiated timeout (ZooKeeper's least timeout is two
// ticks), so at most timeout/PingDelayDivisor.
const PingDelayDivisor = 4

// ProofDivisor: a client with lock nodes proves its session every
// timeout/ProofDivisor (ProofInterval).
const ProofDivisor = 10

// GivenUpAfter is how long after the send of its last proof (an answered
// sync, a counted write, the connect) a session's leases are given up,
// for a negotiated timeout and a configured loss margin (0: the default):
// LossDeadline's formula, S − T/10 − T/4 + T − M after S. With the
// default margin, 40% of the timeout.
func GivenUpAfter(timeout, margin time.Duration) time.Duration {
	return timeout - ProofInterval(timeout) - timeout/PingDelayDivisor - LossMargin(margin, timeout)
}

// answered records a proof of session sid sent at sent, unless a later
// one of the same session is on record.
func (q *quorum) answered(sid int64, sent time.Time) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if sid != q.sid || sent.After(q.sent) {
		q.sid, q.sent = sid, sent
	}
}

// ProofInterval is how often a client with lock nodes proves its session
// to the leader.
func ProofInterval(timeout time.Duration) time.Duration {
	return max(timeout/ProofDivisor, 20*time.Millisecond)
}

// Proved records a sync sent at sent on session sid and answered: the
// leader has heard from the session (see quorum).
func (s *Session) Proved(sid int64, sent time.Time) {
	s.quorum.answered(sid, sent)
	s.Kick()
	s.nudgeState()
}

// committed records a write sent at sent on session sid that the leader
// committed, with the request before it sent within one proof interval
// (wire.Tracker.OnCommit): a proof as good as an answered sync's. It runs
// on the connection's reading goroutine, at every counted write, so it
// wakes the watchdog and the state watcher only when they wait for a
// proof: the watchdog sleeps until the loss deadline, which a proof only
// moves later, and the published status changes only if it is not
// Verified.
func (s *Session) committed(sid int64, sent time.Time) {
	s.quorum.answered(sid, sent)
	s.Kick()
	if s.Published() != Verified {
		s.nudgeState()
	}
}

// ProveSoon wakes the prover if the proof is not worth granting a lease on
// (Proven), so that a fresh one is in by the time a lease is granted: an
// acquire asks with its create, and the sync travels with it.
func (s *Session) ProveSoon() {
	if !s.Proven() {
		select {
		case s.proveNow <- struct{}{}:
		default:
		}
	}
}

// prove sends one sync through the leader and records its proof. It
// returns once answered, or on ctx's end or a connection error (the sync
// may still be answered later, and count then).
func (s *Session) prove(ctx context.Context) error {
	sid, ready := s.Current()
	if !ready {
		_, err := s.Wait(ctx)
		return err
	}
	sent := time.Now()
	s.quorum.syncs.Add(1)
	_, err := Call(ctx, func() (string, error) {
		p, err := s.conn.Sync("/")
		if err == nil {
			s.Proved(sid, sent)
		}
		return p, err
	})
	return err
}

// prover keeps the proof fresh while the client has lock nodes, or its
// state is watched (State): one sync in flight at a time, one proof
// interval after the latest proof's send (an answered sync, a counted
// write, the connect), and at once when asked (ProveSoon, State).
func (s *Session) prover() {
	defer s.wg.Done()
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		asked := false
		select {
		case <-s.closeCh:
			return
		case <-t.C:
		case <-s.proveNow:
			asked = true
		}
		_, timeout := s.wire.Snapshot()
		if timeout <= 0 {
			timeout = s.cfg.SessionTimeout
		}
		interval := ProofInterval(timeout)
		next := interval
		if s.nodes.Busy() || s.watched() {
			sid, _ := s.Current()
			esid, est := s.wire.Established()
			if esid != sid {
				est = time.Time{}
			}
			if since := time.Since(s.quorum.latest(sid, est)); !asked && since < interval {
				next = interval - since // proven meanwhile: a write, a reconnection
			} else if s.quorum.flying.CompareAndSwap(false, true) {
				s.Go(func(ctx context.Context) {
					defer s.quorum.flying.Store(false)
					_ = s.prove(ctx)
				})
			}
		}
		if !t.Stop() {
			select {
			case <-t.C:
			default:
			}
		}
		t.Reset(next)
	}
}

// ProverSyncs returns how many syncs the prover has sent.
func (s *Session) ProverSyncs() uint64 { return s.quorum.syncs.Load() }

// Kick wakes the loss watchdog when it sleeps with nothing to watch (after
// a deadline passed with no lease held); otherwise it wakes by itself at
// the next deadline, so acquires and releases need not wake it.
func (s *Session) Kick() {
	if !s.idle.Load() {
		return
	}
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// watchdog declares held leases lost (Nodes.Unverified) once the session
// can no longer be proven alive: at the last moment ZooKeeper's leader is
// known to have heard from us, plus the negotiated session timeout, minus
// the loss margin. ZooKeeper cannot expire the session, and so cannot
// grant our locks to anyone else, before that moment plus the margin.
func (s *Session) watchdog() {
	defer s.wg.Done()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		d := time.Until(s.LossDeadline())
		if d <= 0 {
			// Nothing heard for too long. Only now look for held leases
			// (an acquire that finds the deadline passed proves the session
			// alive first), then sleep until nudged.
			s.nodes.Unverified()
			d = time.Hour
			s.idle.Store(true)
		}
		timer.Reset(d)
		select {
		case <-s.closeCh:
			return
		case <-s.wake:
		case <-timer.C:
		}
		s.idle.Store(false)
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
	}
}

// Unreachable reports whether ZooKeeper is out of reach: disconnected, or
// silent for over half the session timeout (it answers a ping every
// third), which is how a partition looks before go-zookeeper notices it.
func (s *Session) Unreachable() bool {
	if _, ready := s.Current(); !ready {
		return true
	}
	anchor, timeout := s.wire.Snapshot()
	return time.Since(anchor) > timeout/2
}

// LossDeadline returns when held leases must be given up if the leader is
// not heard to hear from us again: the proven anchor (see quorum) plus the
// negotiated session timeout, minus the loss margin. The zero time when
// nothing is proven on the current session: now is too late.
func (s *Session) LossDeadline() time.Time {
	_, timeout := s.wire.Snapshot()
	sid, _ := s.Current()
	margin := s.margin(timeout)
	if canary.On(canary.NoLossMargin) {
		margin = 0 // the canary: leases given up at the session timeout
	}
	esid, est := s.wire.Established()
	if esid != sid {
		est = time.Time{}
	}
	proven := s.quorum.proven(sid, est, timeout)
	if proven.IsZero() {
		return proven
	}
	return proven.Add(timeout - margin)
}

// Proven reports whether the session's proof of life is worth granting a
// lease on: the proven remainder (until LossDeadline) is at least half of
// what a fresh proof gives, the session timeout minus the loss margin,
// the proof interval and a quarter of the timeout (with the default
// margin, a fifth of the timeout of the two fifths). A grant on less
// would hand out a lease that may be given up before its holder can use
// it: the recipe proves the session afresh first.
func (s *Session) Proven() bool {
	_, timeout := s.wire.Snapshot()
	return time.Until(s.LossDeadline()) >= (timeout-s.margin(timeout)-ProofInterval(timeout)-timeout/4)/2
}

// margin is the loss margin for a negotiated timeout (LossMargin).
func (s *Session) margin(timeout time.Duration) time.Duration {
	return LossMargin(s.cfg.LossMargin, timeout)
}

// LossMargin is the loss margin in force for a negotiated session
// timeout: the one configured (WithLossMargin), or a quarter of the
// timeout when none was, or the one configured is not below the timeout.
func LossMargin(configured, timeout time.Duration) time.Duration {
	if configured != 0 && configured < timeout {
		return configured
	}
	return timeout / 4
}

// AnswerBound is how long a try, or the on-the-spot delete of a failed
// acquire's node, may wait on ZooKeeper: a third of the session timeout
// (the client pings every third), at most a second.
func (s *Session) AnswerBound() time.Duration {
	return AnswerBound(s.cfg.SessionTimeout)
}

// AnswerBound is Session.AnswerBound for a session timeout.
func AnswerBound(timeout time.Duration) time.Duration {
	return min(timeout/3, time.Second)
}

// Call runs fn, a go-zookeeper call (which takes no context), on its own
// goroutine so that the caller never waits past ctx. If ctx ends first the
// call still completes in the background; callers whose call creates
// something must clean up after it. A context that cannot end runs fn on
// the calling goroutine.
func Call[T any](ctx context.Context, fn func() (T, error)) (T, error) {
	if ctx.Done() == nil {
		return fn()
	}
	if ctx.Err() != nil {
		var zero T
		return zero, errs.CtxErr(ctx)
	}
	type result struct {
		v   T
		err error
	}
	ch := make(chan result, 1)
	go func() {
		v, err := fn()
		ch <- result{v, err}
	}()
	select {
	case r := <-ch:
		return r.v, r.err
	case <-ctx.Done():
		var zero T
		return zero, errs.CtxErr(ctx)
	}
}
