package zkdebug_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/zklockkit/zklockkit/zkdebug"
	"github.com/zklockkit/zklockkit/zklock"
	"github.com/zklockkit/zklockkit/zktest"
)

// A Kubernetes readiness probe on the client's session, and a liveness
// probe on its leadership: mount both on the pod's probe listener.
func ExampleReadyHandler() {
	ctx := context.Background()
	client, err := zklock.Connect(ctx, []string{zktest.Shared().Addr()}, zklock.WithRoot("/zkdebug-health"))
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	health := zkdebug.NewLeaderHealth(10 * time.Second)
	go client.Lead(ctx, "scheduler", nil, health.Wrap(func(ctx context.Context) error {
		<-ctx.Done() // lead until told to stop
		return ctx.Err()
	}))

	mux := http.NewServeMux()
	mux.Handle("/readyz", zkdebug.ReadyHandler(client))
	mux.Handle("/livez", health)
	srv := httptest.NewServer(mux)
	defer srv.Close()
	for _, p := range []string{"/readyz", "/livez"} {
		resp, err := http.Get(srv.URL + p)
		if err != nil {
			log.Fatal(err)
		}
		resp.Body.Close()
		fmt.Println(p, resp.StatusCode)
	}
	// Output:
	// /readyz 200
	// /livez 200
}

// A gRPC health service follows the session: SERVING while it is verified.
// setServing stands for grpc/health's (*Server).SetServingStatus.
func ExampleReady() {
	ctx := context.Background()
	client, err := zklock.Connect(ctx, []string{zktest.Shared().Addr()}, zklock.WithRoot("/zkdebug-health"))
	if err != nil {
		log.Fatal(err)
	}
	setServing := func(serving bool) { fmt.Println("serving:", serving) }
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			st, changed := client.State()
			setServing(zkdebug.Ready(client) == nil)
			if st == zklock.SessionClosed {
				return
			}
			<-changed
		}
	}()
	time.Sleep(100 * time.Millisecond)
	client.Close()
	<-done
	// Output:
	// serving: true
	// serving: false
}
