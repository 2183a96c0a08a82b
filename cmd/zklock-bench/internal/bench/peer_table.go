package bench

import (
	"fmt"
	"strings"
	"text/tabwriter"
)

// writePeers prints the comparison with the peers: one row per scenario
// they ran, with each measured peer's median rate, zklock's ratio to it
// and the range of the rounds' own ratios, and the peers' latencies; then
// the peers that were skipped, and why. It prints nothing when the peers
// were off.
func (r *Report) writePeers(b *strings.Builder) error {
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
	b.WriteString("\nagainst Apache Curator and kazoo")
	if len(measured) == 0 {
		b.WriteString(": not measured\n")
	} else {
		var what []string
		for _, p := range measured {
			what = append(what, fmt.Sprintf("%s %s %s on %s", p.Name, orDash(p.Version), p.Recipe, orDash(p.Runtime)))
		}
		fmt.Fprintf(b, ": %s\n", strings.Join(what, "; "))
		b.WriteString("each a process of its own with as many sessions as zklock, on the same server with the same session timeout, warmed up,\n" +
			"in the same rounds (zklock, zk.Lock, Curator, kazoo; the reverse every other round); ratio = zklock's rate / the peer's\n")
		tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
		head := "  scenario\tunit\tzklock ops/s\t"
		for _, p := range measured {
			head += fmt.Sprintf("%s ops/s\tzklock/%s\tper round (min-max)\t", p.Name, p.Name)
		}
		for _, p := range measured {
			head += p.Name + " p50/p99\t"
		}
		fmt.Fprintln(tw, head)
		var none []string
		for _, s := range r.Scenarios {
			if len(s.Peers) == 0 {
				none = append(none, s.Name)
				continue
			}
			row := fmt.Sprintf("  %s\t%s\t%s\t", s.Name, s.Unit, rate(s.ZKLock))
			for _, p := range measured {
				pr := findPeer(s.Peers, p.Name)
				row += fmt.Sprintf("%s\t%s\t%s\t", rate(pr.Result), ratio(pr.Ratio), roundRatios(pr.RoundRatios))
			}
			for _, p := range measured {
				pr := findPeer(s.Peers, p.Name)
				lat := latencies(pr.Result)
				if n := len(pr.Result.Errors); n > 0 {
					lat += fmt.Sprintf(" (%d failed runs)", n)
				}
				row += lat + "\t"
			}
			fmt.Fprintln(tw, row)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		if len(none) > 0 {
			fmt.Fprintf(b, "  no peer side: %s\n", strings.Join(none, ", "))
		}
	}
	for _, p := range skipped {
		fmt.Fprintf(b, "  %s skipped: %s\n", p.Name, p.Skipped)
	}
	return nil
}

func findPeer(rs []PeerResult, name string) PeerResult {
	for _, r := range rs {
		if r.Peer == name {
			return r
		}
	}
	return PeerResult{Peer: name}
}
