package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"

	"github.com/zklockkit/zklockkit/zklock"
)

// WriteQueue writes q the way "zklock show" prints it: a header naming the
// resource, its queue znode, a count and the resource's recent hold-time
// median (from the nodes' reports), then one row per node in queue order
// (holders first) with owner, fencing token, age, estimated wait and
// deadline. Ages are measured from the nodes' creation times on the
// server to now. Strings read from ZooKeeper are escaped, so a label
// cannot send terminal control sequences.
func WriteQueue(w io.Writer, q *zklock.Queue, now time.Time) error {
	return writeQueue(w, q, now, q.HoldMedian(), "")
}

// writeQueue is WriteQueue with the waits estimated from hold, a
// hold-time median that source names ("": the nodes' reports).
func writeQueue(w io.Writer, q *zklock.Queue, now time.Time, hold time.Duration, source string) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "resource\t%s\n", clean(q.Resource))
	fmt.Fprintf(tw, "queue\t%s\n", clean(q.Path))
	fmt.Fprintf(tw, "state\t%s\n", summary(q))
	if len(q.Waiters()) > 0 {
		fmt.Fprintf(tw, "hold p50\t%s\n", holdText(q, hold, source))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(q.Nodes) > 0 {
		fmt.Fprintln(w)
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "POS\tSTATE\tMODE\tHOST\tPID\tLABEL\tTOKEN\tAGE\tWAIT≈\tDEADLINE\tSESSION\tNODE")
		for _, n := range q.Nodes {
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\n", n.Position, state(n), n.Mode,
				orDash(clean(n.Owner.Host)), pid(n.Owner.PID), orDash(clean(n.Owner.Label)), n.Token,
				formatAge(now.Sub(n.Created)), waitText(n, hold), deadlineText(n, now, hold), session(n.SessionID), clean(n.Name))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if len(q.Unknown) > 0 {
		names := make([]string, len(q.Unknown))
		for i, u := range q.Unknown {
			names[i] = clean(u)
		}
		_, err := fmt.Fprintf(w, "\nnote: %d child node(s) match no lock layout and are not part of the queue: %s\n",
			len(q.Unknown), strings.Join(names, ", "))
		return err
	}
	return nil
}

// summary says in words who holds the lock and how many wait.
func summary(q *zklock.Queue) string {
	h, w := len(q.Holders()), len(q.Waiters())
	if h == 0 && w == 0 {
		return fmt.Sprintf("free: no holder, no waiters (nobody holds %q now; 'zklock ls' lists resources in use)", clean(q.Resource))
	}
	holders := "1 holder"
	if h != 1 {
		holders = fmt.Sprintf("%d holders", h)
	}
	return fmt.Sprintf("%s, %d waiting", holders, w)
}

func state(n zklock.QueueNode) string {
	if n.Holder {
		return "holds"
	}
	return "waiting"
}

func pid(p int) string {
	if p == 0 {
		return "-"
	}
	return strconv.Itoa(p)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// session formats a ZooKeeper session id the way ZooKeeper's tools do.
func session(id int64) string {
	if id == 0 {
		return "-"
	}
	return fmt.Sprintf("0x%x", uint64(id))
}

// formatAge rounds d to a precision that suits its size.
func formatAge(d time.Duration) string {
	switch {
	case d < 0:
		return "0s" // clocks differ between this host and ZooKeeper
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Minute:
		return d.Round(100 * time.Millisecond).String()
	case d < time.Hour:
		return d.Round(time.Second).String()
	}
	return strings.TrimSuffix(d.Round(time.Minute).String(), "0s")
}

// clean escapes characters that are not printable (control characters,
// terminal escape sequences, invalid UTF-8) in strings read from ZooKeeper.
func clean(s string) string {
	for _, r := range s {
		if r == unicode.ReplacementChar || !unicode.IsPrint(r) {
			q := strconv.Quote(s)
			return q[1 : len(q)-1]
		}
	}
	return s
}
