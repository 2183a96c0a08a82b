package zklock_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/zklockkit/zklockkit/zklock"
)

// A process keeps one flight recorder for all its Clients. When a lease
// is lost, the recorder writes the last seconds of the execution trace
// and the client's wire history to its directory; here an operator
// deletes the holder's node.
func ExampleNewFlightRecorder() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "zklock-flight")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	rec, err := zklock.NewFlightRecorder(dir) // one a minute at most, the last 10 kept
	if err != nil {
		log.Fatal(err)
	}
	defer rec.Close()
	c, err := zklock.Connect(ctx, servers(), zklock.WithRoot("/example/flight"), zklock.WithFlightRecorder(rec))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	lease, err := c.Acquire(ctx, "reports/nightly")
	if err != nil {
		log.Fatal(err)
	}
	_ = c.Conn().Delete(lease.Path(), -1) // an operator breaks the lock
	<-lease.Done()
	fmt.Println("lost:", lease.Err())

	var rs []zklock.Recording
	for len(rs) == 0 { // written in the background, a moment after the loss
		time.Sleep(50 * time.Millisecond)
		rs, _ = rec.Recordings()
	}
	b, _ := os.ReadFile(rs[0].JSON)
	var doc struct {
		Trace  string
		Losses []struct{ Resource, Reason string }
	}
	_ = json.Unmarshal(b, &doc)
	fmt.Println("recorded:", doc.Losses[0].Resource, doc.Losses[0].Reason, "with a trace:", doc.Trace != "")
	// Output:
	// lost: zklock: lease on "reports/nightly" lost: node_deleted
	// recorded: reports/nightly node_deleted with a trace: true
}
