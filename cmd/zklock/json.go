package main

import (
	"time"

	"github.com/zklockkit/zklockkit/zklock"
)

// queueJSON is the machine-readable form of a queue ("show --json", "ls
// --json").
type queueJSON struct {
	Resource string     `json:"resource"`
	Path     string     `json:"path"`
	Holders  int        `json:"holders"`
	Waiting  int        `json:"waiting"`
	Nodes    []nodeJSON `json:"nodes"`
	Unknown  []string   `json:"unknown,omitempty"`
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
}

func toJSON(q *zklock.Queue, now time.Time) queueJSON {
	j := queueJSON{Resource: q.Resource, Path: q.Path, Holders: len(q.Holders()), Waiting: len(q.Waiters()),
		Nodes: make([]nodeJSON, 0, len(q.Nodes)), Unknown: q.Unknown}
	for _, n := range q.Nodes {
		j.Nodes = append(j.Nodes, toNodeJSON(n, now))
	}
	return j
}

func toNodeJSON(n zklock.QueueNode, now time.Time) nodeJSON {
	age := now.Sub(n.Created)
	if age < 0 {
		age = 0
	}
	return nodeJSON{Position: n.Position, State: state(n), Mode: n.Mode.String(),
		Host: n.Owner.Host, PID: n.Owner.PID, Label: n.Owner.Label, Token: n.Token, Created: n.Created.UTC(),
		AgeSeconds: age.Seconds(), Session: session(n.SessionID), Node: n.Name, Path: n.Path, Seq: n.Seq}
}
