package zktest

import (
	"errors"
	"fmt"
	"strconv"
	"time"
)

// WithLinkProxies makes StartEnsemble route every link between two servers
// through proxies, so that partitions inside the ensemble can be made
// without privileges (Ensemble.Cut, Isolate, Bridge, Heal).
//
// Each server gets its own zoo.cfg: its own line keeps its real quorum and
// election ports, and the line of every other server j names the ports of
// two Proxies (quorum, election) in front of j that only this server uses:
// the link i→j. Both directions of a TCP connection between i and j flow
// through the proxy of the side that opened it. In ZooKeeper 3.8 each
// follower opens the quorum connection to the leader, from the address in
// its own configuration, and the server with the higher id keeps the
// election connection: one opened by a lower id is closed and opened again
// the other way, to the address the lower id announced in its first
// message, which the proxy of the link rewrites to the proxy of the link
// back. A cut of the pair {i, j} stops both links i→j and j→i, so it holds
// whoever dials.
//
// Client ports are untouched: clients reach each server directly.
func WithLinkProxies() Option {
	return func(c *config) { c.links = true }
}

// CutMode says how a cut link fails.
type CutMode int

const (
	// CutReset closes the link's connections and refuses new ones, as a
	// peer that answers with a reset: both ends learn of it at once.
	CutReset CutMode = iota
	// CutSilent holds every byte (and close) on the link's connections,
	// new ones included, as a network that drops packets: the ends learn
	// of it only when their read timeouts fire. Held bytes are delivered
	// when the link heals.
	CutSilent
)

func (m CutMode) String() string {
	if m == CutSilent {
		return "silent"
	}
	return "reset"
}

// ErrNoLinkProxies is returned by the partition methods of an ensemble
// started without WithLinkProxies.
var ErrNoLinkProxies = errors.New("zktest: ensemble started without WithLinkProxies")

// links holds the proxies of every ordered pair of servers.
type links struct {
	n     int
	proxy [][]*linkProxies // [from][to]; nil on the diagonal
}

type linkProxies struct {
	quorum, election *Proxy
}

func newLinks(n int, ports []int) (*links, error) {
	l := &links{n: n, proxy: make([][]*linkProxies, n)}
	for i := range n {
		l.proxy[i] = make([]*linkProxies, n)
		for j := range n {
			if i == j {
				continue
			}
			q, err := NewProxy("127.0.0.1:" + strconv.Itoa(ports[3*j+1]))
			if err != nil {
				return nil, errors.Join(err, l.close())
			}
			el, err := NewProxy("127.0.0.1:" + strconv.Itoa(ports[3*j+2]))
			if err != nil {
				return nil, errors.Join(err, q.Close(), l.close())
			}
			l.proxy[i][j] = &linkProxies{quorum: q, election: el}
		}
	}
	for i := range n {
		for j := range n {
			if i != j {
				px := l.proxy[i][j].election
				px.mu.Lock()
				px.rewrite = announceAs(l.proxy[j][i].election.Addr())
				px.mu.Unlock()
			}
		}
	}
	return l, nil
}

// ports returns the quorum and election ports server i uses for server j.
func (l *links) ports(i, j int) (quorum, election int) {
	p := l.proxy[i][j]
	return port(p.quorum.Addr()), port(p.election.Addr())
}

func port(addr string) int {
	for i := len(addr) - 1; i >= 0; i-- {
		if addr[i] == ':' {
			n, _ := strconv.Atoi(addr[i+1:])
			return n
		}
	}
	return 0
}

func (l *links) each(f func(p *Proxy)) {
	for _, row := range l.proxy {
		for _, p := range row {
			if p != nil {
				f(p.quorum)
				f(p.election)
			}
		}
	}
}

func (l *links) close() error {
	var err error
	l.each(func(p *Proxy) { err = errors.Join(err, p.Close()) })
	return err
}

// cut stops both directions of the pair {i, j}.
func (l *links) cut(i, j int, mode CutMode) {
	for _, p := range []*linkProxies{l.proxy[i][j], l.proxy[j][i]} {
		for _, px := range []*Proxy{p.quorum, p.election} {
			switch mode {
			case CutSilent:
				px.Blackhole(true)
			default:
				px.RejectNew(true)
				px.DropAll()
			}
		}
	}
}

func (e *Ensemble) checkPair(i, j int) error {
	if e.links == nil {
		return ErrNoLinkProxies
	}
	if i < 0 || j < 0 || i >= len(e.Servers) || j >= len(e.Servers) || i == j {
		return fmt.Errorf("zktest: no link between servers %d and %d of %d", i, j, len(e.Servers))
	}
	return nil
}

// Cut cuts the link between Servers[i] and Servers[j], both directions.
// Other links are left as they are.
func (e *Ensemble) Cut(i, j int, mode CutMode) error {
	if err := e.checkPair(i, j); err != nil {
		return err
	}
	e.links.cut(i, j, mode)
	return nil
}

// Mend restores the link between Servers[i] and Servers[j], both
// directions; bytes held by a silent cut are delivered in order. Other
// links are left as they are (Heal restores them all).
func (e *Ensemble) Mend(i, j int) error {
	if err := e.checkPair(i, j); err != nil {
		return err
	}
	for _, p := range []*linkProxies{e.links.proxy[i][j], e.links.proxy[j][i]} {
		for _, px := range []*Proxy{p.quorum, p.election} {
			px.RejectNew(false)
			px.Blackhole(false)
		}
	}
	return nil
}

// Delay holds every byte on the link between Servers[i] and Servers[j],
// both directions, for d before passing it on, as a slow network does;
// the order of bytes is kept. Bytes read before the call keep the delay
// they were read under. Delay(i, j, 0) ends it; Heal does not.
func (e *Ensemble) Delay(i, j int, d time.Duration) error {
	if err := e.checkPair(i, j); err != nil {
		return err
	}
	for _, p := range []*linkProxies{e.links.proxy[i][j], e.links.proxy[j][i]} {
		p.quorum.SetDelay(d)
		p.election.SetDelay(d)
	}
	return nil
}

// Isolate cuts Servers[i] off from every other server. Its clients still
// reach it; whether it serves them is up to ZooKeeper (a server without a
// quorum stops serving once it notices).
func (e *Ensemble) Isolate(i int, mode CutMode) error {
	if e.links == nil {
		return ErrNoLinkProxies
	}
	if i < 0 || i >= len(e.Servers) {
		return fmt.Errorf("zktest: no server %d of %d", i, len(e.Servers))
	}
	for j := range e.Servers {
		if j == i {
			continue
		}
		if err := e.Cut(i, j, mode); err != nil {
			return err
		}
	}
	return nil
}

// Bridge cuts every link that does not touch Servers[b]: b still sees every
// other server, which no longer see each other. In a 3-node ensemble b and
// either other server are a majority, so a quorum survives.
func (e *Ensemble) Bridge(b int, mode CutMode) error {
	if e.links == nil {
		return ErrNoLinkProxies
	}
	if b < 0 || b >= len(e.Servers) {
		return fmt.Errorf("zktest: no server %d of %d", b, len(e.Servers))
	}
	for i := range e.Servers {
		for j := i + 1; j < len(e.Servers); j++ {
			if i != b && j != b {
				if err := e.Cut(i, j, mode); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// Heal restores every link between servers; bytes held by a silent cut
// are delivered in order.
func (e *Ensemble) Heal() error {
	if e.links == nil {
		return ErrNoLinkProxies
	}
	e.links.each(func(p *Proxy) {
		p.RejectNew(false)
		p.Blackhole(false)
	})
	return nil
}

// LinkConns returns the number of open connections through the proxies
// of the link from Servers[i] to Servers[j] (those i opened to j's quorum
// and election ports).
func (e *Ensemble) LinkConns(i, j int) (quorum, election int, err error) {
	if err := e.checkPair(i, j); err != nil {
		return 0, 0, err
	}
	p := e.links.proxy[i][j]
	return p.quorum.Conns(), p.election.Conns(), nil
}

// Serving returns, for each server, its Mode ("leader", "follower",
// "standalone"), or "" when it is down, paused or not serving (a server
// looking for a quorum answers srvr without a Mode).
func (e *Ensemble) Serving() []string {
	out := make([]string, len(e.Servers))
	for i, s := range e.Servers {
		if !s.Running() || s.paused() {
			continue
		}
		if m, err := mode(s.Addr(), time.Second); err == nil {
			out[i] = m
		}
	}
	return out
}

// WaitForMajority waits until a majority of the servers serve with exactly
// one leader among them, and returns the leader's index. Unlike
// WaitForQuorum it tolerates running servers that do not serve (one cut
// off by a partition).
func (e *Ensemble) WaitForMajority(timeout time.Duration) (int, error) {
	deadline := time.Now().Add(timeout)
	for {
		modes := e.Serving()
		serving, leader, leaders := 0, -1, 0
		for i, m := range modes {
			if m != "" {
				serving++
			}
			if m == "leader" {
				leader = i
				leaders++
			}
		}
		if serving > len(e.Servers)/2 && leaders == 1 {
			return leader, nil
		}
		if time.Now().After(deadline) {
			return -1, fmt.Errorf("zktest: ensemble %s has no serving majority after %v (modes %q)", e.ConnectString(), timeout, modes)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
