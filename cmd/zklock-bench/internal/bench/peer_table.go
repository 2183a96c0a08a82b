package bench

import (
	"fmt"
	"strings"
)

// peerBlocks returns the comparison with the peers: one row per scenario
// they ran, with each measured peer's median rate, zklock's ratio to it
// and the range of the rounds' own ratios, and the peers' latencies; then
// the peers that were skipped, and why. It returns nothing when the peers
// were off.
func (r *Report) peerBlocks() []block {
	if len(r.Peers) == 0 {
		return nil
	}
	var measured, skipped []PeerInfo
	for _, p := range r.Peers {
		if p.Skipped != "" {
			skipped = append(skipped, p)
		} else {
			measured = append(measured, p)
		}
	}
	b := block{sub: true, title: []string{"against Apache Curator and kazoo: not measured"}}
	if len(measured) > 0 {
		var what []string
		for _, p := range measured {
			what = append(what, fmt.Sprintf("%s %s %s on %s", p.Name, orDash(p.Version), p.Recipe, orDash(p.Runtime)))
		}
		b.title = []string{"against Apache Curator and kazoo: " + strings.Join(what, "; "),
			"each a process of its own with as many sessions as zklock, on the same server with the same session timeout, warmed up,",
			"in the same rounds (zklock, zk.Lock, Curator, kazoo; the reverse every other round); ratio = zklock's rate / the peer's"}
		b.head = []string{"scenario", "unit", "zklock ops/s"}
		for _, p := range measured {
			b.head = append(b.head, p.Name+" ops/s", "zklock/"+p.Name, "per round (min-max)")
		}
		for _, p := range measured {
			b.head = append(b.head, p.Name+" p50/p99")
		}
		var none []string
		for _, s := range r.Scenarios {
			if len(s.Peers) == 0 {
				none = append(none, s.Name)
				continue
			}
			row := []string{s.Name, s.Unit, rate(s.ZKLock)}
			for _, p := range measured {
				pr := findPeer(s.Peers, p.Name)
				row = append(row, rate(pr.Result), ratio(pr.Ratio), roundRatios(pr.RoundRatios))
			}
			for _, p := range measured {
				pr := findPeer(s.Peers, p.Name)
				lat := latencies(pr.Result)
				if n := len(pr.Result.Errors); n > 0 {
					lat += fmt.Sprintf(" (%d failed runs)", n)
				}
				row = append(row, lat)
			}
			b.rows = append(b.rows, row)
		}
		if len(none) > 0 {
			b.notes = append(b.notes, "no peer side: "+strings.Join(none, ", "))
		}
	}
	for _, p := range skipped {
		b.notes = append(b.notes, fmt.Sprintf("%s skipped: %s", p.Name, p.Skipped))
	}
	return []block{b}
}

func findPeer(rs []PeerResult, name string) PeerResult {
	for _, r := range rs {
		if r.Peer == name {
			return r
		}
	}
	return PeerResult{Peer: name}
}
