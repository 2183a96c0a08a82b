package zktest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Ensemble is a ZooKeeper quorum of servers on 127.0.0.1. Servers[i] has
// myid i+1.
type Ensemble struct {
	Servers []*Server

	dir    string
	ownDir bool
	links  *links // nil unless started WithLinkProxies
}

// StartEnsemble starts n servers (n >= 1; 3 is typical) as one quorum and
// waits up to 30s until every server serves and one of them is leader.
func StartEnsemble(n int, opts ...Option) (*Ensemble, error) {
	if n < 1 {
		return nil, fmt.Errorf("zktest: ensemble of %d servers", n)
	}
	if err := Installed(); err != nil {
		return nil, err
	}
	cfg := newConfig(opts)
	dir, own, err := makeDir(cfg.dir, "zktest-ensemble-")
	if err != nil {
		return nil, err
	}
	e := &Ensemble{dir: dir, ownDir: own}
	if err := e.start(n, cfg); err != nil {
		return nil, errors.Join(err, e.Close())
	}
	return e, nil
}

func (e *Ensemble) start(n int, cfg config) error {
	ports, err := freePorts(3 * n) // client, quorum, election per server
	if err != nil {
		return err
	}
	var common strings.Builder
	common.WriteString("initLimit=10\nsyncLimit=5\n")
	if n == 1 {
		common.WriteString("standaloneEnabled=false\n") // a quorum of one, with a leader
	}
	if cfg.links {
		if e.links, err = newLinks(n, ports); err != nil {
			return err
		}
	}
	for i := range n {
		// Server i names itself with its real ports and, WithLinkProxies,
		// every other server j with the ports of the proxies of link i→j.
		var extra strings.Builder
		extra.WriteString(common.String())
		for j := range n {
			quorum, election := ports[3*j+1], ports[3*j+2]
			if e.links != nil && j != i {
				quorum, election = e.links.ports(i, j)
			}
			fmt.Fprintf(&extra, "server.%d=127.0.0.1:%d:%d;127.0.0.1:%d\n", j+1, quorum, election, ports[3*j])
		}
		dir := filepath.Join(e.dir, fmt.Sprintf("zk%d", i+1))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, "myid"), fmt.Appendf(nil, "%d\n", i+1), 0o644); err != nil {
			return err
		}
		s, err := newServer(cfg, dir, false, ports[3*i], extra.String())
		if err != nil {
			return err
		}
		e.Servers = append(e.Servers, s)
	}
	for _, s := range e.Servers {
		if err := s.launch(); err != nil {
			return err
		}
	}
	return e.wait(readyTimeout, true)
}

// Addrs returns the client addresses of all servers, in order.
func (e *Ensemble) Addrs() []string {
	addrs := make([]string, len(e.Servers))
	for i, s := range e.Servers {
		addrs[i] = s.Addr()
	}
	return addrs
}

// ConnectString returns the addresses joined by commas, as ZooKeeper
// clients expect: "127.0.0.1:p1,127.0.0.1:p2,...".
func (e *Ensemble) ConnectString() string { return strings.Join(e.Addrs(), ",") }

// Leader waits up to 30s for a running server that reports Mode leader and
// returns it with its index in Servers.
func (e *Ensemble) Leader() (*Server, int, error) {
	deadline := time.Now().Add(readyTimeout)
	for {
		for i, s := range e.Servers {
			if !s.Running() || s.paused() {
				continue
			}
			if m, err := mode(s.Addr(), time.Second); err == nil && m == "leader" {
				return s, i, nil
			}
		}
		if time.Now().After(deadline) {
			return nil, -1, fmt.Errorf("zktest: no leader after %v", readyTimeout)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// WaitForQuorum waits until a majority of servers is running, every
// running, unpaused server serves (reports a Mode) and exactly one of them
// is leader.
func (e *Ensemble) WaitForQuorum(timeout time.Duration) error {
	return e.wait(timeout, false)
}

// wait polls until the quorum is healthy; with all set every server must
// be running, and a server that exits fails the wait at once.
func (e *Ensemble) wait(timeout time.Duration, all bool) error {
	deadline := time.Now().Add(timeout)
	for {
		err := e.check(all)
		if err == nil {
			return nil
		}
		if all {
			for _, s := range e.Servers {
				if !s.Running() {
					return s.logError("exited before the ensemble formed")
				}
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("zktest: ensemble %s has no quorum after %v: %w", e.ConnectString(), timeout, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (e *Ensemble) check(all bool) error {
	running, leaders := 0, 0
	for _, s := range e.Servers {
		if !s.Running() || (!all && s.paused()) {
			continue
		}
		running++
		m, err := mode(s.Addr(), time.Second)
		if err != nil {
			return err
		}
		if m == "leader" {
			leaders++
		}
	}
	switch {
	case running <= len(e.Servers)/2:
		return fmt.Errorf("only %d of %d servers running", running, len(e.Servers))
	case leaders != 1:
		return fmt.Errorf("%d leaders", leaders)
	}
	return nil
}

// Close kills every server and removes the ensemble's directory if
// StartEnsemble made it.
func (e *Ensemble) Close() error {
	var err error
	for _, s := range e.Servers {
		err = errors.Join(err, s.Close())
	}
	if e.links != nil {
		err = errors.Join(err, e.links.close())
	}
	if e.ownDir {
		err = errors.Join(err, os.RemoveAll(e.dir))
	}
	return err
}
