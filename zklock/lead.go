package zklock

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/zklockkit/zklockkit/internal/ctxsleep"
	"github.com/zklockkit/zklockkit/zklock/internal/layout"
)

// LeadOption configures Lead: RawPath, StopOnError, RequeueDelay,
// MutexLayout.
type LeadOption interface{ applyLead(*leadConfig) }

type leadConfig struct {
	acquire     []AcquireOption
	stopOnError bool
	delay       time.Duration
}

type leadFunc func(*leadConfig)

func (f leadFunc) applyLead(c *leadConfig) { f(c) }

// DefaultRequeueDelay is how long Lead waits before it campaigns again
// after leading, unless RequeueDelay says otherwise.
const DefaultRequeueDelay = 100 * time.Millisecond

// StopOnError makes Lead return fn's error instead of campaigning again
// when fn returns one (Curator's LeaderSelector without autoRequeue).
func StopOnError() LeadOption { return leadFunc(func(c *leadConfig) { c.stopOnError = true }) }

// RequeueDelay sets how long Lead waits before it campaigns again after
// this process led (default DefaultRequeueDelay), so that a fn that
// returns at once does not take the leadership back in a busy loop. The
// delay doubles, up to 32 times d, while fn keeps returning within d.
func RequeueDelay(d time.Duration) LeadOption {
	return leadFunc(func(c *leadConfig) { c.delay = d })
}

// MutexLayout makes Lead campaign with a mutex's node names
// ("_c_<uuid>-lock-<seq>"), as Curator's LeaderSelector and go-zookeeper's
// zk.Lock do, instead of LeaderLatch's: use it to share an election with
// a LeaderSelector (with RawPath, on the path the Java service uses).
func MutexLayout() LeadOption {
	return leadFunc(func(c *leadConfig) {
		c.acquire = append(c.acquire, acquireFunc(func(a *acquireConfig) { a.layout = layout.MarkLock }))
	})
}

// Lead runs fn while this process leads election, and campaigns again
// after fn returns or the leadership is lost, until ctx ends. It is
// Curator's LeaderSelector with autoRequeue, kazoo's Election.run, and
// etcd's Campaign and Resign in a loop.
//
// fn's context is cancelled when the leadership is lost, before any other
// candidate can be elected (the loss rules of every lease: see Lease), and
// when ctx ends; its cause says which (context.Cause). When fn returns,
// Lead resigns (another candidate is elected), waits RequeueDelay, and
// campaigns again. When fn panics, Lead resigns and the panic goes on. value is the candidate's value for observers (Leader,
// Observe); fn may change it with LeaseFromContext(ctx).Proclaim.
//
// Lead returns ctx's error when ctx ends, fn's error with StopOnError, and
// at once an error that campaigning again cannot cure: ErrClosed,
// ErrInvalidResource, ErrValueTooLarge, ErrInvalidOption, ErrNoAuth. While
// ZooKeeper is away it keeps campaigning (a campaign waits, as any acquire
// does).
func (c *Client) Lead(ctx context.Context, election string, value []byte, fn func(ctx context.Context) error, opts ...LeadOption) error {
	cfg := leadConfig{delay: DefaultRequeueDelay}
	for _, o := range opts {
		if o != nil {
			o.applyLead(&cfg)
		}
	}
	if fn == nil || cfg.delay <= 0 || ctx == nil {
		return fmt.Errorf("%w: Lead needs a context, a function and a positive requeue delay", ErrInvalidOption)
	}
	acfg := newAcquireConfig(cfg.acquire)
	delay := cfg.delay
	for {
		l, err := c.campaign(ctx, election, value, acfg)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if !campaignAgain(err) {
				return err
			}
			c.cfg.logger.Warn("zklock: campaign failed; campaigning again", "election", election, "err", err)
			if err := ctxsleep.Sleep(ctx, delay); err != nil {
				return err
			}
			continue
		}
		start := time.Now()
		ferr := c.lead(ctx, l, fn)
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case ferr != nil && cfg.stopOnError:
			return ferr
		case ferr != nil:
			c.cfg.logger.Warn("zklock: leader function failed; campaigning again", "election", election, "err", ferr)
		}
		if time.Since(start) < delay {
			delay = min(2*delay, 32*cfg.delay) // fn returns at once: back off
		} else {
			delay = cfg.delay
		}
		if err := ctxsleep.Sleep(ctx, delay); err != nil {
			return err
		}
	}
}

// lead runs fn as leader under l, then resigns, whatever happened (a
// panic of fn's included, which goes on once the next candidate may lead):
// a lost lease says so, a held one lets the next candidate in.
func (c *Client) lead(ctx context.Context, l *Lease, fn func(ctx context.Context) error) error {
	defer func() {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.cfg.sessionTimeout)
		_ = l.Release(rctx)
		cancel()
	}()
	return fn(l.Context(ctx))
}

// campaignAgain reports whether a failed campaign may succeed if tried
// again.
func campaignAgain(err error) bool {
	for _, final := range []error{ErrClosed, ErrInvalidResource, ErrValueTooLarge, ErrInvalidOption, ErrNoAuth, ErrUnknownNode} {
		if errors.Is(err, final) {
			return false
		}
	}
	return true
}

// The bound on the leaderless gap that docs/guarantees.md states: from
// the moment a leader's process dies (or is cut off) to the moment the
// next candidate leads. ZooKeeper expires a silent session no sooner than
// a session timeout after it last heard of it, and no later than one tick
// after that: it files each session's expiry under the next multiple of
// tickTime (ExpiryQueue.roundToNextInterval). On an ensemble the leader,
// which expires sessions, hears of a session on a follower when it pings
// that follower, every half tick. Then the expiry is committed (a write),
// the candidate behind the dead leader's node is told by its watch and
// takes over with at most a listing and a sync: leaderGapSlack bounds
// those. TestIntegration_LeaderGapOnDefaultTick checks the bound on a
// server with ZooKeeper's default tickTime, 2s; the doc test checks that
// the docs quote it. The chaos campaign takes its leaderless target from
// it.
const (
	// leaderGapSlack is the allowance for committing the expiry, the watch
	// that tells the next candidate and its taking over: milliseconds on
	// a healthy ensemble.
	leaderGapSlack = time.Second
	// leaderGapFollowerTicks is what a follower's report of the session
	// adds on an ensemble: half a tick.
	leaderGapFollowerTicks = 0.5
)

// LeaderGapBound is the bound docs/guarantees.md states on the gap
// between a leader's death and the next leader, for a session timeout and
// the servers' tickTime: the session timeout + tickTime + 1 s, plus half a
// tick on an ensemble (where the session may live on a follower). It holds
// with a candidate waiting and no other fault meanwhile.
func LeaderGapBound(timeout, tick time.Duration, ensemble bool) time.Duration {
	b := timeout + tick + leaderGapSlack
	if ensemble {
		b += time.Duration(leaderGapFollowerTicks * float64(tick))
	}
	return b
}
