package zkdebug_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"time"

	"github.com/zklockkit/zklockkit/zkdebug"
	"github.com/zklockkit/zklockkit/zklock"
	"github.com/zklockkit/zklockkit/zktest"
)

// Serve a FlightRecorder's recordings from the debug listener, so that an
// operator reads the trace of a lost lease without the process's disk;
// here an operator's delete loses one.
func ExampleRecordings() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "zklock-flight")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	rec, err := zklock.NewFlightRecorder(dir)
	if err != nil {
		log.Fatal(err)
	}
	defer rec.Close()
	client, err := zklock.Connect(ctx, []string{zktest.Shared().Addr()}, zklock.WithRoot("/zkdebug-example"),
		zklock.WithFlightRecorder(rec))
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	mux := http.NewServeMux()
	mux.Handle("/debug/zklock/recordings", zkdebug.Recordings(rec))
	srv := httptest.NewServer(mux) // in a service: go http.ListenAndServe("127.0.0.1:6060", mux)
	defer srv.Close()

	lease, err := client.Acquire(ctx, "reports/nightly")
	if err != nil {
		log.Fatal(err)
	}
	_ = client.Conn().Delete(lease.Path(), -1) // an operator breaks the lock
	<-lease.Done()
	for rs, _ := rec.Recordings(); len(rs) == 0; rs, _ = rec.Recordings() {
		time.Sleep(50 * time.Millisecond) // written in the background, a moment after the loss
	}

	resp, err := http.Get(srv.URL + "/debug/zklock/recordings?latest=json")
	if err != nil {
		log.Fatal(err)
	}
	defer resp.Body.Close()
	var doc struct {
		Losses []struct{ Resource, Reason string }
	}
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil {
		log.Fatal(err)
	}
	fmt.Println(doc.Losses[0].Resource, doc.Losses[0].Reason)
	trace, err := http.Get(srv.URL + "/debug/zklock/recordings?latest=trace") // for go tool trace
	if err != nil {
		log.Fatal(err)
	}
	trace.Body.Close()
	fmt.Println(trace.Status, trace.Header.Get("Content-Type"))
	// Output:
	// reports/nightly node_deleted
	// 200 OK application/octet-stream
}
