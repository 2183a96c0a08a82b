package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/zklockkit/zklockkit/zklock"
)

var lsCommand = &command{
	name:         "ls",
	args:         "[PREFIX]",
	summary:      "resources in use (names starting with PREFIX), with holder and queue length",
	interspersed: true,
	help: `
Ls lists the resources in use under the root (a queue with at least one
lock node), with how many hold and wait, the first holder and how long it
has held. An empty queue (its last node gone; ZooKeeper deletes the empty
queue's container node within a minute or so) is not listed unless --all
asks for it; it then shows as "(empty)". Queues at raw znode paths (show
--raw) are not listed.

Example:
  zklock ls
  zklock ls billing/ --json`,
	setup: func(fs *flag.FlagSet, cf *connFlags) func(*env, []string) error {
		asJSON := registerJSON(fs)
		all := fs.Bool("all", false, "list empty queues too (no holder, no waiter), marked (empty)")
		return func(e *env, args []string) error {
			if len(args) > 1 {
				return usageErrorf("ls", "at most one PREFIX expected, got %d arguments: %q", len(args), args)
			}
			prefix := ""
			if len(args) == 1 {
				prefix = args[0]
			}
			ctx := context.Background()
			c, err := cf.open(ctx, "ls")
			if err != nil {
				return err
			}
			defer c.Close()
			queues, err := listQueues(ctx, c, prefix, cf.connectTimeout)
			if err != nil {
				return err
			}
			inUse := slices.DeleteFunc(slices.Clone(queues), emptyQueue)
			empty := len(queues) - len(inUse)
			if !*all {
				queues = inUse
			}
			now := time.Now()
			if *asJSON {
				out := struct {
					Root      string      `json:"root"`
					Prefix    string      `json:"prefix"`
					Resources []queueJSON `json:"resources"`
				}{Root: c.Root(), Prefix: prefix, Resources: make([]queueJSON, 0, len(queues))}
				for _, q := range queues {
					out.Resources = append(out.Resources, toJSON(q, now))
				}
				enc := json.NewEncoder(e.stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(out)
			}
			if len(queues) == 0 {
				what := "no resources in use"
				if prefix != "" {
					what += fmt.Sprintf(" starting with %q", clean(prefix))
				}
				note := ""
				if empty > 0 {
					note = fmt.Sprintf(" (%d empty %s: --all lists them)", empty, plural(empty, "queue", "queues"))
				}
				_, err = fmt.Fprintf(e.stdout, "%s under %s%s\n", what, c.Root(), note)
				return err
			}
			tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "RESOURCE\tHOLDERS\tWAITING\tHOLDER\tTOKEN\tAGE")
			for _, q := range queues {
				hs, ws := q.Holders(), q.Waiters()
				holder, token, age := holderText(hs), "-", "-"
				if emptyQueue(q) {
					holder = "(empty)"
				}
				if len(hs) > 0 {
					token = strconv.FormatInt(hs[0].Token, 10)
					age = formatAge(now.Sub(hs[0].Created))
				}
				fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\t%s\n", clean(q.Resource), len(hs), len(ws), holder, token, age)
			}
			return tw.Flush()
		}
	},
}

// listQueues inspects every resource under the root that starts with
// prefix, a few at a time.
func listQueues(ctx context.Context, c *zklock.Client, prefix string, timeout time.Duration) ([]*zklock.Queue, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	names, err := c.Resources(ctx, prefix)
	if err != nil {
		return nil, opError(err, timeout)
	}
	queues := make([]*zklock.Queue, len(names))
	errs := make([]error, len(names))
	sem := make(chan struct{}, 8)
	var wg sync.WaitGroup
	for i, name := range names {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			queues[i], errs[i] = c.Inspect(ctx, name)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, opError(err, timeout)
		}
	}
	return queues, nil
}

// emptyQueue reports whether q has no node at all: no holder, no waiter,
// and no child of a layout zklock does not know.
func emptyQueue(q *zklock.Queue) bool { return len(q.Nodes) == 0 && len(q.Unknown) == 0 }

// plural is one when n is 1, else many.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// ownerText is an owner in a few words: "label (host, pid N)".
func ownerText(o zklock.Owner) string {
	where := clean(o.Host)
	if o.PID != 0 {
		if where != "" {
			where += ", "
		}
		where += "pid " + strconv.Itoa(o.PID)
	}
	switch {
	case o.Label != "" && where != "":
		return clean(o.Label) + " (" + where + ")"
	case o.Label != "":
		return clean(o.Label)
	case where != "":
		return where
	}
	return "?"
}
