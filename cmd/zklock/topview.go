package main

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/zklockkit/zklockkit/zklock"
)

// topSort is the order of top's rows, hottest first.
type topSort int

const (
	sortWaiters topSort = iota // most waiters first
	sortLongest                // longest wait first
	sortHeld                   // oldest holder first
)

// topSorts are the orders by name (--sort, and "sort" in --json), with
// the key that picks each on the live view: the name's initial.
var topSorts = []struct {
	name  string
	words string // for the header: "sorted by ..."
}{
	sortWaiters: {"waiters", "waiters"},
	sortLongest: {"longest", "longest wait"},
	sortHeld:    {"held", "hold age"},
}

func (k topSort) String() string { return topSorts[k].name }

// key is the key that picks k on the live view.
func (k topSort) key() byte { return topSorts[k].name[0] }

// parseTopSort returns the order named s.
func parseTopSort(s string) (topSort, bool) {
	for i, o := range topSorts {
		if o.name == s {
			return topSort(i), true
		}
	}
	return 0, false
}

// topSortNames is "waiters, longest or held", for messages.
func topSortNames() string {
	names := make([]string, len(topSorts))
	for i, o := range topSorts {
		names[i] = o.name
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// sortRows orders rows by key, hottest first; ties go to the row with
// more waiters, then by name.
func sortRows(rows []topRow, key topSort, now time.Time) {
	slices.SortStableFunc(rows, func(a, b topRow) int {
		c := 0
		switch key {
		case sortLongest:
			c = cmp.Compare(b.longestWait(now), a.longestWait(now))
		case sortHeld:
			c = cmp.Compare(b.held(now), a.held(now))
		}
		if c == 0 {
			c = cmp.Compare(b.waiting(), a.waiting())
		}
		if c == 0 {
			c = strings.Compare(a.resource, b.resource)
		}
		return c
	})
}

// topHeader is the first lines of a refresh's output: what is shown, and
// what it cost.
func topHeader(w io.Writer, s *topSnapshot, o *topOpts, key topSort) {
	where := o.root
	if o.prefix != "" {
		where += fmt.Sprintf(", names starting with %q", clean(o.prefix))
	}
	fmt.Fprintf(w, "zklock top: %d in use of %d %s under %s, sorted by %s\n", len(s.rows), s.total,
		plural(s.total, "resource", "resources"), where, topSorts[key].words)
	fmt.Fprintf(w, "%s  %d ZooKeeper reads (at most %d)", s.time.Format("15:04:05"), s.reads, o.maxReads)
	if s.unread > 0 {
		fmt.Fprintf(w, "; %d not read (--max-reads)", s.unread)
	}
	if s.empty > 0 {
		fmt.Fprintf(w, "; %d empty not shown", s.empty)
	}
	if !o.once {
		fmt.Fprintf(w, "; on change, at least every %v", o.interval)
	}
	fmt.Fprintln(w)
}

// writeTopTable writes at most limit rows (all when limit < 0) of s in
// the order of key, and says how many more there are.
func writeTopTable(w io.Writer, s *topSnapshot, key topSort, limit int) error {
	rows := slices.Clone(s.rows)
	sortRows(rows, key, s.time)
	more := 0
	if limit >= 0 && len(rows) > limit {
		more, rows = len(rows)-limit, rows[:limit]
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "RESOURCE\tHOLDERS\tWAITING\tLONGEST-WAIT\tHELD\tHOLDER")
	for _, r := range rows {
		if r.queue == nil {
			fmt.Fprintf(tw, "%s\t?\t~%d\t?\t?\t(%d nodes: not read, over --max-reads)\n", clean(r.resource), r.waiting(), r.nodes)
			continue
		}
		longest, held := "-", "-"
		if len(r.queue.Waiters()) > 0 {
			longest = formatAge(r.longestWait(s.time))
		}
		hs := r.queue.Holders()
		if len(hs) > 0 {
			held = formatAge(r.held(s.time))
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\t%s\n", clean(r.resource), len(hs), r.waiting(), longest, held, holderText(hs))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if more > 0 {
		_, err := fmt.Fprintf(w, "... %d more\n", more)
		return err
	}
	return nil
}

// topJSON is one refresh as "zklock top --json" prints it (one object per
// line). docs/operations.md shows it; TestTopOnceJSON holds the two
// together.
type topJSON struct {
	Time      time.Time    `json:"time"`
	Root      string       `json:"root"`
	Prefix    string       `json:"prefix"`
	Sort      string       `json:"sort"`
	Total     int          `json:"total"`
	Empty     int          `json:"empty"`
	Unread    int          `json:"unread"`
	Reads     int          `json:"reads"`
	MaxReads  int          `json:"max_reads"`
	Resources []topRowJSON `json:"resources"`
}

// topRowJSON is a resource of topJSON. The counts, ages and holder are
// null for a queue not inspected (over --max-reads).
type topRowJSON struct {
	Resource           string    `json:"resource"`
	Path               string    `json:"path"`
	Nodes              int       `json:"nodes"`
	Inspected          bool      `json:"inspected"`
	Holders            *int      `json:"holders"`
	Waiting            *int      `json:"waiting"`
	LongestWaitSeconds *float64  `json:"longest_wait_seconds"`
	HeldSeconds        *float64  `json:"held_seconds"`
	Holder             *nodeJSON `json:"holder"`
}

func toTopJSON(s *topSnapshot, o *topOpts, key topSort) topJSON {
	j := topJSON{Time: s.time.UTC(), Root: o.root, Prefix: o.prefix, Sort: key.String(), Total: s.total, Empty: s.empty,
		Unread: s.unread, Reads: s.reads, MaxReads: o.maxReads, Resources: make([]topRowJSON, 0, len(s.rows))}
	rows := slices.Clone(s.rows)
	sortRows(rows, key, s.time)
	for _, r := range rows {
		row := topRowJSON{Resource: r.resource, Path: r.path, Nodes: r.nodes, Inspected: r.queue != nil}
		if r.queue != nil {
			hs, waiting := len(r.queue.Holders()), r.waiting()
			longest, held := r.longestWait(s.time).Seconds(), r.held(s.time).Seconds()
			row.Holders, row.Waiting, row.LongestWaitSeconds, row.HeldSeconds = &hs, &waiting, &longest, &held
			if h := r.queue.Holders(); len(h) > 0 {
				n := toNodeJSON(h[0], s.time, r.queue.HoldMedian())
				row.Holder = &n
			}
		}
		j.Resources = append(j.Resources, row)
	}
	return j
}

// holderText is the first of holders in a few words, with how many more
// there are: "worker-3 (box-1, pid 27461) +2"; "-" for none.
func holderText(holders []zklock.QueueNode) string {
	if len(holders) == 0 {
		return "-"
	}
	s := ownerText(holders[0].Owner)
	if len(holders) > 1 {
		s += " +" + strconv.Itoa(len(holders)-1)
	}
	return s
}
