package queue

import (
	"testing"

	"github.com/zklockkit/zklockkit/zklock/internal/layout"
)

// A step gives its listing room back cleared: a pooled room keeps no
// names of the listing it held alive.
func TestDropKidsClears(t *testing.T) {
	w := &Waiter{}
	room := make([]layout.Child, 3, 8)
	room[0].Name, room[1].Name, room[2].Name = "a", "b", "c"
	room = room[:1] // a later, shorter listing: names remain past its end
	w.kids = &room
	kept := w.kids
	w.dropKids()
	if w.kids != nil {
		t.Fatal("the waiter kept its room")
	}
	for i, c := range (*kept)[:cap(*kept)] {
		if c != (layout.Child{}) {
			t.Fatalf("room[%d] = %+v after it was given back", i, c)
		}
	}
	big := make([]layout.Child, 0, maxPooledKids+1)
	w.kids = &big
	w.dropKids()
	if w.kids != nil {
		t.Fatal("the waiter kept a long listing's room")
	}
}
