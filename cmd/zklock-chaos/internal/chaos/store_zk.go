package chaos

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zklockkit/zklockkit/zklock"
)

// zkStore is the campaign's fenced store in ZooKeeper, on the campaign's
// own ensemble, as a service keeping its state in ZooKeeper would write
// it. Under root, each resource has a register znode: its data is the
// last write (a writeRequest in JSON), its version n the number of writes
// committed to it. The register's persistent-sequential children, w-
// followed by a 10-digit sequence number, log each write: ZooKeeper
// numbers a parent's sequential children by its count of child changes,
// which only these creates move, so the n-th write is w-<n-1>.
//
// A write is one multi through zklock.Client.Fenced with the writer's
// live lease: a check of each of the lease's lock nodes, the log's create
// and the register's setData. It commits only while the lease's nodes
// exist, and ZooKeeper orders it against every other, so the log is the
// resource's commit order whatever the fence does; the checker reads it
// back (committedRows). Every recipe's writes go through the fence,
// readers' and semaphore holders' too: the fence is the lease's node,
// not a token (zkFenceSpec).
//
// Like PostgreSQL's, it is written by the workers, each through its own
// Client, so its writes cross the same proxies, partitions and pauses as
// the locks.
type zkStore struct {
	root string // the parent of the registers
}

// zkLogPrefix begins the name of each log entry under a register.
const zkLogPrefix = "w-"

// zkWriteTimeout bounds a write: well above a session timeout, so that
// go-zookeeper's loss of its connection (the answer lost: WriteAborted)
// or a refusal on a new session, not this, ends a write held up by a
// fault.
const zkWriteTimeout = 10 * time.Second

// register returns the register znode of resource.
func (s zkStore) register(resource string) string {
	return s.root + "/" + zklock.EscapeResource(resource)
}

// logEntry returns the path of the n-th write (from 1) to the register
// reg.
func logEntry(reg string, n int64) string {
	return fmt.Sprintf("%s/%s%010d", reg, zkLogPrefix, n-1)
}

// startZKStore installs the store under root on the ensemble at addrs,
// with a register for each resource.
func startZKStore(addrs []string, root string, resources []string) (*zkStore, error) {
	conn, err := dialQuiet(addrs)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	s := &zkStore{root: root}
	if err := s.install(conn, resources); err != nil {
		return nil, err
	}
	return s, nil
}

// install creates the root and a register for each resource, at version
// 0 with no data. Existing ones are kept.
func (s zkStore) install(conn *zk.Conn, resources []string) error {
	paths := []string{s.root}
	for _, r := range resources {
		paths = append(paths, s.register(r))
	}
	for _, p := range paths {
		if _, err := conn.Create(p, nil, 0, zk.WorldACL(zk.PermAll)); err != nil && !errors.Is(err, zk.ErrNodeExists) {
			return fmt.Errorf("chaos: the zookeeper store's %s: %w", p, err)
		}
	}
	return nil
}

// Write commits w through c.Fenced, fenced by l (a lease of c).
func (s zkStore) Write(ctx context.Context, c *zklock.Client, l *zklock.Lease, w writeRequest) dbVerdict {
	rec, err := json.Marshal(w)
	if err != nil {
		return dbVerdict{Outcome: WriteError, Err: err.Error()}
	}
	reg := s.register(w.Resource)
	res, err := c.Fenced(ctx, l,
		&zk.CreateRequest{Path: reg + "/" + zkLogPrefix, Data: rec, Acl: zk.WorldACL(zk.PermAll), Flags: zk.FlagSequence},
		&zk.SetDataRequest{Path: reg, Data: rec, Version: -1})
	if err != nil {
		return dbVerdict{Outcome: zkWriteOutcome(err), Err: err.Error()}
	}
	// The log entry ZooKeeper's answer names: the checker lays it beside
	// the log read back (a committed write with no row, whose entry holds
	// another write, was forgotten by the ensemble).
	v := dbVerdict{Accepted: true, Outcome: WriteCommitted}
	if len(res) > 0 {
		if i := strings.LastIndex(res[0].String, "/"+zkLogPrefix); i >= 0 {
			if seq, err := strconv.ParseInt(res[0].String[i+1+len(zkLogPrefix):], 10, 64); err == nil {
				v.Order = seq + 1
			}
		}
	}
	return v
}

// zkWriteOutcome classifies a failed fenced write, in the database
// stores' words: a lease's node gone, or the lease released (Fenced
// refuses it without a request), is the fence's refusal (WriteStale);
// an answer lost with the connection, or a session expired under the
// write, is WriteAborted (the first may have committed: the log says);
// anything else, one of the store's own operations refused included, is
// WriteError.
func zkWriteOutcome(err error) string {
	switch {
	case errors.Is(err, zklock.ErrLeaseLost), errors.Is(err, zklock.ErrReleased):
		return WriteStale
	case errors.Is(err, context.DeadlineExceeded):
		return WriteTimeout
	case errors.Is(err, zklock.ErrUnavailable), errors.Is(err, zklock.ErrSessionExpired):
		return WriteAborted
	}
	return WriteError
}

// zkWrite runs req's write on s through c with l and returns the writer's
// report: an EvWrite whose Called and T are when the multi was sent and
// answered.
func zkWrite(ctx context.Context, s zkStore, c *zklock.Client, l *zklock.Lease, req writeRequest) Event {
	ctx, cancel := context.WithTimeout(ctx, zkWriteTimeout)
	defer cancel()
	called := time.Now().UnixNano()
	return writeEvent(req, called, s.Write(ctx, c, l, req))
}
