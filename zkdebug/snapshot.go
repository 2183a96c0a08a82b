package zkdebug

import (
	"fmt"
	"strings"
	"time"

	"github.com/zklockkit/zklockkit/zklock"
)

// snapshot is what the page shows; its JSON is the ?format=json answer.
type snapshot struct {
	Session string     `json:"session"`
	Root    string     `json:"root"`
	Time    time.Time  `json:"time"`
	Held    int        `json:"held"`
	Waiting int        `json:"waiting"`
	Locks   []lockView `json:"locks"`
}

// lockView is one lock node of the client.
type lockView struct {
	Resource   string    `json:"resource"`
	Mode       string    `json:"mode"`
	State      string    `json:"state"` // "held" or "waiting"
	Position   int       `json:"position"`
	Since      time.Time `json:"since"`
	AgeSeconds float64   `json:"age_seconds"`
	Token      int64     `json:"token"`
	Session    string    `json:"session"`
	Path       string    `json:"path"`

	age time.Duration
}

// Age is the time since the node joined the queue, rounded for people.
func (l lockView) Age() string { return formatAge(l.age) }

// Node is the name of the lock's znode (the last element of Path).
func (l lockView) Node() string { return l.Path[strings.LastIndexByte(l.Path, '/')+1:] }

// SinceText is the clock time the node joined the queue.
func (l lockView) SinceText() string { return l.Since.Local().Format("15:04:05.000") }

func take(c *zklock.Client, now time.Time) snapshot {
	s := snapshot{Session: session(c.SessionID()), Root: c.Root(), Time: now.UTC(), Locks: []lockView{}}
	for _, l := range c.Locks() {
		v := lockView{Resource: l.Resource, Mode: l.Mode.String(), State: "waiting", Position: l.Position,
			Since: l.Since.UTC(), Token: l.Token, Session: session(l.SessionID), Path: l.Path, age: max(now.Sub(l.Since), 0)}
		v.AgeSeconds = v.age.Seconds()
		if l.Held {
			v.State = "held"
			s.Held++
		} else {
			s.Waiting++
		}
		s.Locks = append(s.Locks, v)
	}
	return s
}

// session formats a ZooKeeper session id as ZooKeeper's tools do.
func session(id int64) string {
	if id == 0 {
		return "-"
	}
	return fmt.Sprintf("0x%x", uint64(id))
}

// formatAge rounds d to a precision that suits its size.
func formatAge(d time.Duration) string {
	switch {
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Minute:
		return d.Round(100 * time.Millisecond).String()
	case d < time.Hour:
		return d.Round(time.Second).String()
	}
	return strings.TrimSuffix(d.Round(time.Minute).String(), "0s")
}
