// Command tracing shows the lock spans of package tracing: four workers
// contend for one resource under a root span, a fifth only tries, and the
// recorded spans are printed as a tree (or, with -json, as the
// OpenTelemetry stdout exporter writes them).
//
// It connects to $ZKLOCK_SERVERS, or starts a throwaway local ZooKeeper:
//
//	ZKLOCK_SERVERS=127.0.0.1:2181 go run ./examples/tracing
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"sync"
	"time"

	"github.com/zklockkit/zklockkit/internal/zkenv/zkstart"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/zklockkit/zklockkit/tracing"
	"github.com/zklockkit/zklockkit/zklock"
)

func main() {
	resource := flag.String("resource", "accounts/42", "the resource the workers contend for")
	workers := flag.Int("workers", 4, "how many workers queue for the resource")
	work := flag.Duration("work", 100*time.Millisecond, "how long each worker holds the lock")
	asJSON := flag.Bool("json", false, "print the spans with the stdouttrace exporter instead of a tree")
	flag.Parse()
	log.SetFlags(0)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	servers, stop, err := zkstart.ServersOrStart(os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	err = run(ctx, os.Stdout, servers, *resource, *workers, *work, *asJSON)
	stop()
	if err != nil {
		log.Fatal(err)
	}
}

// run connects to servers (a connection string), lets the workers contend
// for resource, and prints the spans and metrics to w.
func run(ctx context.Context, w io.Writer, servers, resource string, workers int, work time.Duration, asJSON bool) error {
	// What a service does once in main: set the global providers. Here
	// spans are kept in memory and printed at the end.
	spans := tracetest.NewSpanRecorder()
	opts := []sdktrace.TracerProviderOption{sdktrace.WithSpanProcessor(spans)}
	if asJSON {
		exp, err := stdouttrace.New(stdouttrace.WithWriter(w), stdouttrace.WithPrettyPrint())
		if err != nil {
			return err
		}
		opts = append(opts, sdktrace.WithSyncer(exp))
	}
	tp := sdktrace.NewTracerProvider(opts...)
	metrics := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(metrics))
	otel.SetTracerProvider(tp)
	otel.SetMeterProvider(mp)
	defer func() {
		_ = tp.Shutdown(context.Background())
		_ = mp.Shutdown(context.Background())
	}()

	// The one line that traces every lock taken through the client. The
	// second observer only lets the demo start each worker once the one
	// before it is in the queue, so that the positions come out 0, 1, 2, 3.
	enqueued := make(chan struct{}, workers+1)
	c, err := zklock.Open(ctx, servers,
		zklock.WithObserver(tracing.NewObserver()),
		zklock.WithObserver(zklock.ObserverFunc(func(_ context.Context, e zklock.Event) {
			if e.Kind == zklock.EventEnqueued {
				enqueued <- struct{}{}
			}
		})))
	if err != nil {
		return err
	}
	defer c.Close()

	tracer := otel.Tracer("zklockkit/examples/tracing")
	ctx, batch := tracer.Start(ctx, "transfer-batch")
	var wg sync.WaitGroup
	errs := make(chan error, workers+1)
	queued := make(chan struct{}) // closed once everyone is in the queue
	for i := range workers {
		wctx, span := tracer.Start(ctx, fmt.Sprintf("worker-%d", i))
		wg.Go(func() {
			defer span.End()
			lease, err := c.Acquire(wctx, resource)
			if err != nil {
				errs <- err
				return
			}
			if i == 0 {
				<-queued // the first holder is slow: everyone queues behind it
			}
			time.Sleep(work) // the work done under the lock
			if err := lease.Release(wctx); err != nil {
				errs <- err
			}
		})
		select {
		case <-enqueued:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	// One more caller only tries, and finds the lock busy.
	tctx, span := tracer.Start(ctx, "try-once")
	_, err = c.TryAcquire(tctx, resource)
	span.End()
	close(queued)
	wg.Wait()
	if err == nil {
		return fmt.Errorf("%s was free: is something else using it?", resource)
	}
	batch.End()
	close(errs)
	for err := range errs {
		return err
	}

	if asJSON {
		return nil // the exporter has printed every span
	}
	printTree(w, spans.Ended())
	return printMetrics(w, metrics)
}
