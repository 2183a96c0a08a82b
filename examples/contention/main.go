// Command contention is a service under lock contention with everything
// an operator looks at: Prometheus metrics (with exemplars) at /metrics,
// the debug page with its history at /debug/zklock, and the contention
// profile at /debug/zklock/contention. Workers lock accounts/N; a batch job
// holds some of them for long stretches; a cron-like caller only tries
// reports/daily, which the batch job holds part of the time; a caller with
// a short MaxWait gives up. Point a Prometheus at it and import the
// dashboard (docs/metrics.md):
//
//	ZKLOCK_SERVERS=127.0.0.1:2181 go run ./examples/contention -listen 127.0.0.1:8080
//
// Without ZKLOCK_SERVERS it starts a throwaway local ZooKeeper.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/zklockkit/zklockkit/internal/zkenv/zkstart"
	"github.com/zklockkit/zklockkit/tracing"
	"github.com/zklockkit/zklockkit/zkdebug"
	"github.com/zklockkit/zklockkit/zklock"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:8080", "where to serve /metrics and /debug/zklock")
	workers := flag.Int("workers", 4, "workers locking accounts/N")
	run := flag.Duration("for", 0, "stop after this long (0: until interrupted)")
	flag.Parse()
	log.SetFlags(0)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if *run > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, *run)
		defer cancel()
	}
	servers, stopZK, err := zkstart.ServersOrStart(os.Stderr)
	if err != nil {
		log.Fatal(err)
	}
	defer stopZK()
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("metrics at http://%s/metrics, the debug page at http://%s/debug/zklock\n", ln.Addr(), ln.Addr())
	if err := serve(ctx, ln, servers, *workers); err != nil && ctx.Err() == nil {
		log.Fatal(err)
	}
}

// service is the example's clients and what it serves.
type service struct {
	app, batch *zklock.Client
}

// serve connects to servers (a connection string), serves the service's
// endpoints on ln and runs the contention until ctx ends.
func serve(ctx context.Context, ln net.Listener, servers string, workers int) error {
	// Traces: every span sampled, so that every wait can have an exemplar.
	// A service exports them (otlptrace); this one keeps none.
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()))
	// Metrics: the Prometheus exporter reads the MeterProvider.
	registry := prometheus.NewRegistry()
	exporter, err := otelprom.New(otelprom.WithRegisterer(registry))
	if err != nil {
		return err
	}
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(exporter))
	defer func() {
		_ = tp.Shutdown(context.Background())
		_ = mp.Shutdown(context.Background())
	}()
	obs := tracing.NewObserver(tracing.WithTracerProvider(tp), tracing.WithMeterProvider(mp))
	hist := zkdebug.NewHistory()
	prof := zkdebug.NewContentionProfile()

	app, err := zklock.Open(ctx, servers, zklock.WithLabel("contention-example"),
		zklock.WithObserver(obs), zklock.WithObserver(hist), zklock.WithObserver(prof))
	if err != nil {
		return err
	}
	defer app.Close()
	// The batch job is another process in real life; its locks are
	// traced too.
	batch, err := zklock.Open(ctx, servers, zklock.WithLabel("batch-job"), zklock.WithObserver(obs), zklock.WithObserver(hist))
	if err != nil {
		return err
	}
	defer batch.Close()

	mux := http.NewServeMux()
	// OpenMetrics carries the wait histogram's exemplars.
	mux.Handle("/metrics", promhttp.HandlerFor(registry, promhttp.HandlerOpts{EnableOpenMetrics: true}))
	mux.Handle("/debug/zklock", zkdebug.Handler(app, zkdebug.WithHistory(hist)))
	mux.Handle("/debug/zklock/contention", prof)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	s := &service{app: app, batch: batch}
	errs := make(chan error, 1)
	go func() { errs <- s.contend(ctx, tp, workers) }()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return <-errs
}

// contend runs the callers until ctx ends.
func (s *service) contend(ctx context.Context, tp *sdktrace.TracerProvider, workers int) error {
	tracer := tp.Tracer("zklockkit/examples/contention")
	var wg sync.WaitGroup
	errs := make(chan error, workers+3)
	loop := func(f func() error) {
		wg.Go(func() {
			for ctx.Err() == nil {
				if err := f(); err != nil && ctx.Err() == nil {
					errs <- err
					return
				}
			}
		})
	}
	// hold takes r through c, as a request span, and keeps it for d; a
	// wait that ends with the lock busy, too long, or ZooKeeper away is an
	// answer, not an error.
	hold := func(c *zklock.Client, name, r string, d time.Duration, opts ...zklock.AcquireOption) error {
		rctx, span := tracer.Start(ctx, name)
		defer span.End()
		l, err := c.Acquire(rctx, r, opts...)
		switch {
		case errors.Is(err, zklock.ErrLocked), errors.Is(err, zklock.ErrWaitTimeout), errors.Is(err, zklock.ErrLeaseLost),
			errors.Is(err, zklock.ErrUnavailable): // ZooKeeper away: the caller retries later
			return nil
		case err != nil:
			return err
		}
		select {
		case <-time.After(d):
		case <-l.Done(): // lost: the lease's context would stop the work
		case <-ctx.Done():
		}
		if err := l.Release(context.WithoutCancel(ctx)); err != nil && !errors.Is(err, zklock.ErrLeaseLost) {
			return err
		}
		return nil
	}
	for range workers {
		loop(func() error {
			return hold(s.app, "transfer", fmt.Sprintf("accounts/%d", 40+rand.IntN(4)), time.Duration(5+rand.IntN(45))*time.Millisecond,
				zklock.MaxWait(2*time.Second))
		})
	}
	loop(func() error { // the batch job: long holds, now and then
		sleep(ctx, time.Duration(200+rand.IntN(800))*time.Millisecond)
		return hold(s.batch, "batch", fmt.Sprintf("accounts/%d", 40+rand.IntN(4)), time.Duration(300+rand.IntN(600))*time.Millisecond)
	})
	loop(func() error { // it also holds reports/daily half the time
		sleep(ctx, time.Second)
		return hold(s.batch, "batch-report", "reports/daily", time.Second)
	})
	loop(func() error { // cron-like: only tries; and an impatient caller
		sleep(ctx, 200*time.Millisecond)
		if err := hold(s.app, "report", "reports/daily", 20*time.Millisecond, zklock.Try()); err != nil {
			return err
		}
		return hold(s.app, "quick-check", fmt.Sprintf("accounts/%d", 40+rand.IntN(4)), time.Millisecond, zklock.MaxWait(50*time.Millisecond))
	})
	wg.Wait()
	close(errs)
	return <-errs
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-time.After(d):
	case <-ctx.Done():
	}
}
