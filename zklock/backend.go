package zklock

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/zklockkit/zklockkit/zklock/internal/errs"
	"github.com/zklockkit/zklockkit/zklock/internal/session"
)

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
		return fmt.Errorf("%w: %w", ErrUnavailable, err)
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

func (b *zkBackend) observe(ctx context.Context, e Event) {
	if len(b.c.cfg.observers) == 0 {
		return
	}
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	for _, o := range b.c.cfg.observers {
		o.Observe(ctx, e)
	}
}

// sessionState reports a suspension or a resumption to the observers.
func (b *zkBackend) sessionState(s session.State, sid int64) {
	kind := EventSuspended
	if s == session.Resumed {
		kind = EventResumed
	}
	b.observe(context.Background(), Event{Kind: kind, SessionID: sid})
}

// releaseHolds deletes every node of a lease being released (its own:
// borrowed parts go back to their lenders, see finishRelease). If ctx ends
// before ZooKeeper confirms, the rest goes on in the background and the
// lease ends when it is done.
func (b *zkBackend) releaseHolds(ctx context.Context, st *leaseState) error {
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
		host, _ := os.Hostname()
		data, _ := json.Marshal(Owner{Host: host, PID: os.Getpid(), Label: cfg.label})
		return data
	}
	return c.owner
}
