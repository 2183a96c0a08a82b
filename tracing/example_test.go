package tracing_test

import (
	"context"
	"fmt"
	"log"
	"strings"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/zklockkit/zklockkit/tracing"
	"github.com/zklockkit/zklockkit/zklock"
	"github.com/zklockkit/zklockkit/zktest"
)

// One option at connect traces every lock taken through the Client. Here
// the spans go to an in-memory recorder; in a service, to the global
// TracerProvider (the default) set up with an OTLP exporter. The lock is
// free, so the acquire makes no span of its own: the hold span says it
// was taken at once.
func ExampleNewObserver() {
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	defer func() { _ = tp.Shutdown(context.Background()) }()

	ctx := context.Background()
	c, err := zklock.Connect(ctx, []string{zktest.Shared().Addr()}, // your ensemble
		zklock.WithRoot("/zktest/ExampleNewObserver"),
		zklock.WithObserver(tracing.NewObserver(tracing.WithTracerProvider(tp))))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	// A request handler: the lock spans are children of its span.
	ctx, request := tp.Tracer("example").Start(ctx, "POST /accounts/42/transfer")
	lease, err := c.Acquire(ctx, "accounts/42")
	if err != nil {
		log.Fatal(err)
	}
	// ... work under the lock ...
	if err := lease.Release(ctx); err != nil {
		log.Fatal(err)
	}
	request.End()

	for _, s := range spans.Ended() {
		var attrs []string
		for _, kv := range s.Attributes() {
			switch kv.Key {
			case tracing.ResourceNameKey, tracing.ResourceClassKey, tracing.QueuePositionKey, tracing.OutcomeKey:
				attrs = append(attrs, string(kv.Key)+"="+kv.Value.String())
			}
		}
		fmt.Println(s.Name(), strings.Join(attrs, " "))
	}
	// Output:
	// zklock.hold zklock.resource.name=accounts/42 zklock.resource.class=accounts/{id} zklock.queue.position=0 zklock.outcome=acquired
	// POST /accounts/42/transfer
}

// A resource class that keeps only the first segment: one time series per
// kind of resource, whatever the names look like.
func ExampleWithResourceClass() {
	first := func(resource string) string {
		kind, _, _ := strings.Cut(resource, "/")
		return kind
	}
	obs := tracing.NewObserver(tracing.WithResourceClass(first))
	_ = obs // zklock.Connect(ctx, servers, zklock.WithObserver(obs))

	fmt.Println(first("tenants/acme/invoices/2041"))
	// Output: tenants
}

func ExampleDefaultResourceClass() {
	for _, r := range []string{
		"accounts/42",
		"orders:7f3c2a9e-0b1d-4c5e-9f00-112233445566",
		"blobs/9f86d081884c7d65/meta",
		"accounts/1,accounts/2",
		"reports/daily",
	} {
		fmt.Println(tracing.DefaultResourceClass(r))
	}
	// Output:
	// accounts/{id}
	// orders:{id}
	// blobs/{id}/meta
	// accounts/{id},accounts/{id}
	// reports/daily
}
