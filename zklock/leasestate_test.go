package zklock

import (
	"context"
	"testing"
)

// A lease tells its holder (Done closed, its contexts cancelled) before
// Ended closes: a waiter of the same client behind its node holds only
// once Ended has closed (queue's TestAwaitLocalWaitsForTheLeaseToEnd), so
// the holder is told before the next one holds.
func TestLeaseEndTellsBeforeEnded(t *testing.T) {
	st := newLeaseState(nil, 1, []string{"r"}, Exclusive)
	derived, cancel := context.WithCancel(context.Background())
	defer cancel()
	l := &Lease{st: st}
	dctx := l.Context(derived)
	told := make(chan bool, 1)
	go func() {
		<-st.Ended()
		select {
		case <-l.Done():
			told <- dctx.Err() != nil
		default:
			told <- false
		}
	}()
	st.end(&LostError{Resource: "r", Reason: LossNodeDeleted})
	if !<-told {
		t.Fatal("Ended closed before Done closed and the lease's derived context was cancelled")
	}
}
