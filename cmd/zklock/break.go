package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strconv"
	"time"

	"github.com/go-zookeeper/zk"
)

var breakCommand = &command{
	name:         "break",
	args:         "RESOURCE",
	summary:      "break a stuck lock: delete its holders' nodes (an administrator's command)",
	interspersed: true,
	help: `
Break deletes the lock nodes of RESOURCE's current holders, so that the lock
goes to the next in line, and prints whose they were (owner, token, node,
session). A holder learns it at once: a zklock holder's lease is lost
(Lease.Done closes, its Err says node_deleted), "zklock run" stops its CMD,
and Curator and kazoo holders lose their node as well. Waiters are left in
place. Only the nodes listed are deleted: a holder that took the lock
meanwhile is not touched.

Use it for a holder that hangs while its session stays alive (a session
that dies frees the lock by itself). Where services lock with digest ACLs
(zklock.WithDigestAuth), only the holder's identity and the administrator
set with zklock.WithAdminDigest may delete its node: connect as that
administrator with --user and --password (or $ZKLOCK_PASSWORD). Without the
right, break fails with exit code 1 and deletes nothing more.

--dry-run lists what would be deleted. For a semaphore, --limit N says
which nodes hold.

Examples:
  zklock break --dry-run nightly-report
  ZKLOCK_PASSWORD=... zklock break --user ops nightly-report
  zklock break --raw /locks/payments      # a Curator or kazoo lock path`,
	setup: func(fs *flag.FlagSet, cf *connFlags) func(*env, []string) error {
		q := registerQueueFlags(fs)
		dry := fs.Bool("dry-run", false, "list the holders' nodes without deleting them")
		return func(e *env, args []string) error {
			resource, err := q.resource("break", args)
			if err != nil {
				return err
			}
			ctx := context.Background()
			c, err := cf.open(ctx, "break")
			if err != nil {
				return err
			}
			defer c.Close()
			queue, err := q.inspect(ctx, c, resource, cf.connectTimeout)
			if err != nil {
				return err
			}
			holders := queue.Holders()
			if len(holders) == 0 {
				_, err := fmt.Fprintf(e.stdout, "%s has no holder: nothing to break\n", clean(resource))
				return err
			}
			for _, h := range holders {
				who := fmt.Sprintf("%s, token %d, node %s, session %s", ownerText(h.Owner), h.Token, clean(h.Path), session(h.SessionID))
				if *dry {
					fmt.Fprintf(e.stdout, "would break %s: held by %s\n", clean(resource), who)
					continue
				}
				switch err := deleteNode(ctx, c.Conn(), h.Path, cf.connectTimeout); {
				case errors.Is(err, zk.ErrNoNode):
					fmt.Fprintf(e.stdout, "%s: already released by %s\n", clean(resource), who)
				case errors.Is(err, zk.ErrNoAuth):
					return fmt.Errorf("not allowed to delete %s (held by %s): connect as the administrator of zklock.WithAdminDigest (--user, --password), or as the holder's identity", clean(h.Path), ownerText(h.Owner))
				case err != nil:
					return opError(fmt.Errorf("delete %s: %w", clean(h.Path), err), cf.connectTimeout)
				default:
					fmt.Fprintf(e.stdout, "broke %s: deleted the node of %s\n", clean(resource), who)
				}
			}
			if !*dry && len(queue.Waiters()) > 0 {
				_, err := fmt.Fprintf(e.stdout, "%s waiting: the next in line takes the lock\n", strconv.Itoa(len(queue.Waiters())))
				return err
			}
			return nil
		}
	},
}

// deleteNode deletes path (any version), giving up after timeout: a
// go-zookeeper call takes no context and may wait for a reconnection.
func deleteNode(ctx context.Context, conn *zk.Conn, path string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	_, err := zkDo(ctx, func() (struct{}, error) { return struct{}{}, conn.Delete(path, -1) })
	return err
}
