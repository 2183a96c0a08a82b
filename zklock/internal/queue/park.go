package queue

import (
	"errors"
	"reflect"

	"github.com/go-zookeeper/zk"
)

// Park is what an acquire waits for between two steps (see Waiter.Step):
// one of ev, done or evs, besides its node's end and its context's. Its
// zero value parks on nothing; the acquire shell keeps one per acquire,
// which each step fills in.
type Park struct {
	ev <-chan zk.Event // the watch on the node ahead (watch)
	// done: a node of ours ahead going, or its lease ending (awaitLocal);
	// with covered, the cover standing in for the watches on the node
	// ahead and on ours firing (cover.go): the waiter then lists its queue.
	// A cover fires when our node ends too, so a covered park has no gone.
	done    <-chan struct{}
	covered bool
	last    zk.Event          // the event on ev that ended the park (see Wait)
	evs     []<-chan zk.Event // the watches of a semaphore's first waiter (awaitSlot)
	gone    <-chan struct{}   // our node's end (its deletion, the session's, Close)
	end     <-chan struct{}   // the waiter's context's end
}

// Wake says what ended a park.
type Wake uint8

// What ends a park.
const (
	WokeNone      Wake = iota // no park yet
	WokeFired                 // the watched node went, or the awaited channel closed
	WokeChanged               // the watched node's data changed (or its watch channel closed)
	WokeUnwatched             // the watch was dropped (go-zookeeper's EventNotWatching)
	WokeClosing               // the watch was dropped as the client closes
	WokeGone                  // our own node is known gone
	WokeCover                 // the queue changed: the cover is spent
	WokeEnded                 // the context ended
)

// eventWake says what a watch event means for a park.
func eventWake(ev *zk.Event) Wake {
	switch {
	case ev.Type == zk.EventNodeDeleted:
		return WokeFired
	case ev.Type == zk.EventNotWatching && errors.Is(ev.Err, zk.ErrClosing):
		return WokeClosing
	case ev.Type == zk.EventNotWatching:
		return WokeUnwatched
	}
	return WokeChanged
}

// Wait waits, on the acquiring goroutine, for what p names, for our
// node's end, or for the context's. The event that ends it is received
// into p, not onto Wait's frame: the acquiring goroutine waits with the
// 2 KiB stack it started with only while its frames stay clear of that
// stack's end, and Go never shrinks a parked stack back to 2 KiB (see the
// shell's step.go in package zklock). With the event on the frame, 10,000 parked acquires
// measured 3.3 to 3.9 KiB of stack each instead of 2.2.
func (p *Park) Wait() Wake {
	if p.evs != nil {
		return parkAny(p)
	}
	select {
	case p.last = <-p.ev:
	case <-p.done:
		if p.covered {
			return WokeCover
		}
		return WokeFired
	case <-p.gone:
		return WokeGone
	case <-p.end:
		return WokeEnded
	}
	return eventWake(&p.last)
}

// parkAny parks on the watches of a semaphore's waiter (a few: one per
// holder of the semaphore), besides our node's end and the context's.
func parkAny(p *Park) Wake {
	cases := make([]reflect.SelectCase, 0, len(p.evs)+2)
	for _, ch := range p.evs {
		cases = append(cases, reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(ch)})
	}
	cases = append(cases,
		reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(p.gone)},
		reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(p.end)})
	i, v, _ := reflect.Select(cases)
	switch i - len(p.evs) {
	case 0:
		return WokeGone
	case 1:
		return WokeEnded
	}
	ev, _ := v.Interface().(zk.Event)
	return eventWake(&ev)
}
