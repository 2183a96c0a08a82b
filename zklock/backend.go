package zklock

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/zklockkit/zklockkit/zklock/internal/errs"
	"github.com/zklockkit/zklockkit/zklock/internal/queue"
	"github.com/zklockkit/zklockkit/zklock/internal/session"
)

// backend is a lock backend under the acquire shell (acquireWith): the
// ZooKeeper Client, the MemoryLocker, and any Driver through NewLocker.
// The shell does what every Locker shares: options and their checks,
// resource names and their canonical order, re-entry through the context,
// MaxWait, a try's bound, starting over when a held part is lost, events;
// the backend queues and holds.
type backend interface {
	releaser
	// key returns resource's queue key (the Client: its queue's znode
	// path), or a *ResourceError.
	key(resource string, raw bool) (string, error)
	// check refuses an acquire the backend cannot make.
	check(cfg acquireConfig) error
	// answerBound is how long a try may wait on the backend (0: no bound
	// of the shell's).
	answerBound() time.Duration
	// annotate adds what the backend knows to the error of a wait that
	// ended (the Client: ErrUnavailable when ZooKeeper was out of reach).
	annotate(err error) error
	// acquired runs after each successful acquire.
	acquired()
}

// blocker is a backend that takes an acquire's parts in one call, which
// waits (the MemoryLocker, NewLocker's).
type blocker interface {
	backend
	// acquireParts takes every part of ts, in their (canonical) order,
	// for st: a part a lender holds is borrowed (leaseState.borrow), the
	// others queued for. It returns errs.ErrPartLost when a part it held was
	// lost while it waited for another (the shell then gives everything
	// back and calls it again), and on error the part that failed and,
	// if known, its session.
	acquireParts(ctx context.Context, st *leaseState, p acquireParts) (failed target, sid int64, err error)
}

// stepper is a backend that waits in steps (the Client; see step.go): the
// acquiring goroutine only parks, on what a step said to wait for, and
// every step runs on a goroutine of the backend's (steps). Its parts are
// taken by a partTaker.
type stepper interface {
	backend
	// takeParts starts taking a's parts (a.ts) for its lease
	// (a.lease()), once the acquire is set up, and again after a part
	// already held was lost.
	takeParts(a *acquisition) partTaker
	// steps returns the runners of the backend's steps.
	steps() *stepRunners
}

// partTaker takes one attempt's parts a step at a time.
type partTaker interface {
	// next goes on from what ended the last park (woke), on a step's
	// goroutine, until it must wait (p), every part is held (nil), or it
	// failed (err: at part failed, whose node was on session sid).
	next(woke queue.Wake) (p parker, failed target, sid int64, err error)
	// waiting is the part waited for and its session, once next parked.
	waiting() (target, int64)
	// quick reports whether the step after a park that woke ended is
	// likely to hold at once, with no request (a hand-off with no round
	// trip): the acquiring goroutine runs it itself, sparing the hand-off
	// two goroutine switches (see runStep).
	quick(woke queue.Wake) bool
	// abandon ends a parked attempt nobody waits for any more: the
	// acquiring goroutine's context ended (err).
	abandon(err error)
}

// parker is what an acquire waits for between two steps: a *queue.Park
// for the Client. Wait runs on the acquiring goroutine.
type parker interface {
	Wait() queue.Wake
}

// target is one resource of an acquire, resolved to its queue key.
type target struct {
	resource string
	parent   string
}

// zkBackend is the Client as the acquire shell sees it (a stepper): it
// resolves names to queue znodes, takes an acquire's parts a step at a
// time with the recipe's waiters (clientParts), and lets go of a lease's
// nodes. A lease of the Client has it as its owner.
type zkBackend struct {
	c *Client
}

var _ stepper = (*zkBackend)(nil)

// key is the Client's queue key: the queue's znode path.
func (b *zkBackend) key(resource string, raw bool) (string, error) {
	return b.c.queuePath(resource, raw)
}

// check refuses node data ZooKeeper would refuse.
func (b *zkBackend) check(cfg acquireConfig) error {
	if n := len(b.c.nodeData(cfg)); n > MaxValueLen {
		return fmt.Errorf("%w: %d bytes, the limit is %d", ErrValueTooLarge, n, MaxValueLen)
	}
	return nil
}

// answerBound is how long a try may wait on ZooKeeper.
func (b *zkBackend) answerBound() time.Duration { return b.c.sess.AnswerBound() }

// annotate says so when a wait ended while ZooKeeper was out of reach.
func (b *zkBackend) annotate(err error) error {
	if errs.IsCtxErr(err) && !errors.Is(err, ErrUnavailable) && b.c.sess.Unreachable() {
		return errs.Errorf("%w: %w", ErrUnavailable, err)
	}
	return err
}

// acquired wakes the loss watchdog if it sleeps.
func (b *zkBackend) acquired() { b.c.sess.Kick() }

// steps returns the runners of the Client's steps.
func (b *zkBackend) steps() *stepRunners { return &b.c.steps }

// takeParts starts taking a's parts on ZooKeeper (see clientParts).
func (b *zkBackend) takeParts(a *acquisition) partTaker {
	p := &clientParts{a: a, c: b.c}
	p.watchParts()
	return p
}

func (b *zkBackend) observe(ctx context.Context, e Event) { notify(ctx, b.c.cfg.observers, e) }

// connState reports a lost connection (EventSuspended) or a resumption
// to the observers.
func (b *zkBackend) connState(s session.Conn, sid int64) {
	kind := EventSuspended
	if s == session.ConnResumed {
		kind = EventResumed
	}
	b.observe(context.Background(), Event{Kind: kind, SessionID: sid})
}

// sessionStatus reports a change of the session's state to the
// observers (EventState).
func (b *zkBackend) sessionStatus(st session.Status, sid int64) {
	b.observe(context.Background(), Event{Kind: EventState, State: SessionState(st), SessionID: sid})
}

// releaseHolds deletes every node of a lease being released (its own:
// borrowed parts go back to their lenders, see finishRelease). If ctx ends
// before ZooKeeper confirms, the rest goes on in the background and the
// lease ends when it is done.
func (b *zkBackend) releaseHolds(ctx context.Context, st *leaseState) error {
	b.c.holds.released(st)
	return b.c.q.Release(ctx, st.ownNodes(), st.finishRelease)
}

// dropHolds lets go of the nodes of a lease that was lost: any that may
// still exist is deleted in the background.
func (b *zkBackend) dropHolds(st *leaseState) { b.c.q.Drop(st.ownNodes()) }

// abandonHolds deletes the nodes of a failed acquire's parts on the spot.
func (b *zkBackend) abandonHolds(st *leaseState) { b.c.q.Abandon(st.ownNodes()) }

// nodeData is the data of an acquire's lock nodes: the election value, or
// the owner record (with the lease's label, if it has one).
func (c *Client) nodeData(cfg acquireConfig) []byte {
	switch {
	case cfg.data != nil:
		return cfg.data
	case cfg.label != "":
		return labelData(cfg.label)
	}
	return c.owner
}

// labelData is the owner record of a lease labelled label (LeaseLabel).
func labelData(label string) []byte {
	host, _ := os.Hostname()
	data, _ := json.Marshal(Owner{Host: host, PID: os.Getpid(), Label: label})
	return data
}
