package main

import (
	"time"

	"github.com/zklockkit/zklockkit/zklock"
)

// queueJSON is the machine-readable form of a queue ("show --json", "ls
// --json").
type queueJSON struct {
	Resource string `json:"resource"`
	Path     string `json:"path"`
	Holders  int    `json:"holders"`
	Waiting  int    `json:"waiting"`
	// HoldP50Seconds is the resource's recent hold-time median, from the
	// nodes' reports (zklock.Queue.HoldMedian); null when none reports.
	HoldP50Seconds *float64   `json:"hold_p50_seconds"`
	Nodes          []nodeJSON `json:"nodes"`
	Unknown        []string   `json:"unknown,omitempty"`
}

type nodeJSON struct {
	Position   int       `json:"position"`
	State      string    `json:"state"` // "holds" or "waiting"
	Mode       string    `json:"mode"`
	Host       string    `json:"host"`
	PID        int       `json:"pid"`
	Label      string    `json:"label"`
	Token      int64     `json:"token"`
	Created    time.Time `json:"created"`
	AgeSeconds float64   `json:"age_seconds"`
	Session    string    `json:"session"`
	Node       string    `json:"node"`
	Path       string    `json:"path"`
	Seq        int64     `json:"seq"`
	// Waiting you can see (zklock.QueueNode.EstimatedWait): the node's
	// turns, its acquire's deadline (null: none written), the hold-time
	// median its owner reported (null: none), its estimated wait (turns
	// × the queue's median; 0 for a holder, null when unknown), and
	// whether its deadline falls before that.
	Turns                int        `json:"turns"`
	Deadline             *time.Time `json:"deadline"`
	HoldP50Seconds       *float64   `json:"hold_p50_seconds"`
	EstimatedWaitSeconds *float64   `json:"estimated_wait_seconds"`
	GivesUpFirst         bool       `json:"gives_up_first"`
}

func toJSON(q *zklock.Queue, now time.Time) queueJSON {
	hold := q.HoldMedian()
	j := queueJSON{Resource: q.Resource, Path: q.Path, Holders: len(q.Holders()), Waiting: len(q.Waiters()),
		HoldP50Seconds: secondsIf(hold), Nodes: make([]nodeJSON, 0, len(q.Nodes)), Unknown: q.Unknown}
	for _, n := range q.Nodes {
		j.Nodes = append(j.Nodes, toNodeJSON(n, now, hold))
	}
	return j
}

// toNodeJSON is n's JSON at now, its wait estimated with hold, the
// resource's hold-time median (0: unknown).
func toNodeJSON(n zklock.QueueNode, now time.Time, hold time.Duration) nodeJSON {
	age := now.Sub(n.Created)
	if age < 0 {
		age = 0
	}
	j := nodeJSON{Position: n.Position, State: state(n), Mode: n.Mode.String(),
		Host: n.Owner.Host, PID: n.Owner.PID, Label: n.Owner.Label, Token: n.Token, Created: n.Created.UTC(),
		AgeSeconds: age.Seconds(), Session: session(n.SessionID), Node: n.Name, Path: n.Path, Seq: n.Seq,
		Turns: n.Turns, HoldP50Seconds: secondsIf(n.Owner.HoldMedian), GivesUpFirst: n.GivesUpFirst(now, hold)}
	if d := n.Owner.Deadline; !d.IsZero() {
		d = d.UTC()
		j.Deadline = &d
	}
	if w, ok := n.EstimatedWait(hold); ok {
		s := w.Seconds()
		j.EstimatedWaitSeconds = &s
	}
	return j
}

// secondsIf is d in seconds, nil for 0 (unknown).
func secondsIf(d time.Duration) *float64 {
	if d <= 0 {
		return nil
	}
	s := d.Seconds()
	return &s
}
