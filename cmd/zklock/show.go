package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/zklockkit/zklockkit/zklock"
)

var showCommand = &command{
	name:         "show",
	args:         "RESOURCE",
	summary:      "holder and ordered waiters: owner (host, pid, label), token, age",
	interspersed: true,
	help: `
Show prints the lock queue of RESOURCE as ZooKeeper holds it now: the
holder(s) first, then the waiters in the order they will get the lock, each
with its owner (host, pid, label), fencing token, age, session and znode.
A resource nobody holds shows an empty queue, not an error.

For each waiter it estimates the wait (WAIT≈): its turns (its position, in
an exclusive queue) times the resource's recent hold-time median, which
zklock clients report in the nodes they create (the median of their last
` + strconv.Itoa(zklock.HoldSamples) + ` holds of it); "?" when no node reports one. DEADLINE is how long until
the waiter's acquire gives up, when it wrote a deadline (its context's, or
MaxWait), marked "(gives up first)" when that comes before its turn.

Example:
  zklock show demo/nightly-report
  zklock show --json demo/nightly-report | jq '.nodes[0].pid'
  zklock show --raw /locks/payments     # a Curator or kazoo lock path`,
	setup: func(fs *flag.FlagSet, cf *connFlags) func(*env, []string) error {
		asJSON := registerJSON(fs)
		q := registerQueueFlags(fs)
		return func(e *env, args []string) error {
			resource, err := q.resource("show", args)
			if err != nil {
				return err
			}
			ctx := context.Background()
			c, err := cf.open(ctx, "show")
			if err != nil {
				return err
			}
			defer c.Close()
			queue, err := q.inspect(ctx, c, resource, cf.connectTimeout)
			if err != nil {
				return err
			}
			now := time.Now()
			if *asJSON {
				enc := json.NewEncoder(e.stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(toJSON(queue, now))
			}
			return WriteQueue(e.stdout, queue, now)
		}
	},
}

// queueFlags are the flags of the commands that read one queue.
type queueFlags struct {
	raw   *bool
	limit *int
}

func registerQueueFlags(fs *flag.FlagSet) *queueFlags {
	return &queueFlags{
		raw:   fs.Bool("raw", false, "RESOURCE is a raw znode path, e.g. /locks/foo of a Curator or kazoo service"),
		limit: fs.Int("limit", 0, "for a semaphore: how many nodes at the head of the queue hold it (default 1)"),
	}
}

// resource checks the one positional argument.
func (q *queueFlags) resource(cmd string, args []string) (string, error) {
	switch {
	case len(args) == 0:
		return "", usageErrorf(cmd, "missing RESOURCE")
	case len(args) > 1:
		return "", usageErrorf(cmd, "one RESOURCE expected, got %d arguments: %q", len(args), args)
	case *q.limit < 0:
		return "", usageErrorf(cmd, "bad --limit %d: must not be negative", *q.limit)
	}
	r := args[0]
	if *q.raw {
		if !strings.HasPrefix(r, "/") {
			return "", usageErrorf(cmd, "bad raw path %q: must be an absolute znode path such as /locks/foo", r)
		}
		return r, nil
	}
	if err := zklock.ValidateResource(r); err != nil {
		return "", usageErrorf(cmd, "%s", errText(err))
	}
	return r, nil
}

func (q *queueFlags) options() []zklock.QueueOption {
	var opts []zklock.QueueOption
	if *q.raw {
		opts = append(opts, zklock.RawPath())
	}
	if *q.limit > 0 {
		opts = append(opts, zklock.Limit(*q.limit))
	}
	return opts
}

// inspect reads the queue, giving up after timeout.
func (q *queueFlags) inspect(ctx context.Context, c *zklock.Client, resource string, timeout time.Duration) (*zklock.Queue, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	queue, err := c.Inspect(ctx, resource, q.options()...)
	return queue, opError(err, timeout)
}

// opError turns a ZooKeeper call that ran out of time into an
// unreachable error.
func opError(err error, timeout time.Duration) error {
	if errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, zklock.ErrUnavailable) {
		return withCode(ExitUnreachable, fmt.Errorf("ZooKeeper did not answer within %v: %w", timeout, err))
	}
	return err
}
