// Package tracing turns zklock's lock events into OpenTelemetry spans and
// metrics, so that a trace of a slow request shows that it waited 840 ms
// for "accounts/42" behind three others, and dashboards show wait and hold
// times per kind of resource.
//
// # Quick start
//
// Pass an [Observer] to the [zklock.Client] once, at connect:
//
//	c, err := zklock.Connect(ctx, servers, zklock.WithObserver(tracing.NewObserver()))
//
// That one line turns tracing on everywhere: the Echo middleware, the gRPC
// interceptors and generated code all acquire through the Client with the
// request's context, so their lock spans are children of the request spans
// (which otelecho and otelgrpc create; this package adds lock spans only).
//
// The Observer uses the global TracerProvider and MeterProvider unless
// [WithTracerProvider] and [WithMeterProvider] say otherwise. There is no
// WithPropagators: lock events never cross a process boundary. The
// instrumentation scope is [ScopeName], at version [Version]. One Observer
// may serve several Clients: zklock's event IDs are unique in the process.
//
// # Spans
//
// A lease is one span named "zklock.hold" ([SpanHold]), of kind internal,
// a child of the span in the acquire's context, from acquired to released
// or lost. A lost lease ends it with an error status, the error, and the
// reason.
//
// Most acquires take their lock at once, and that hold span is all they
// make: it also carries the acquire's wait, queue position and outcome.
// An acquire that waits, fails, or is under way while the connection to
// ZooKeeper is down has a span of its own as well, named "zklock.acquire"
// ([SpanAcquire]), of kind internal and with the same parent, from the
// start of the acquire to the lock held or the failure; the hold span that
// follows it starts at the same instant and links to it. A failure sets
// the acquire span's status to error and records the error; a failed
// acquire has no hold span.
//
// An acquire span has a span event "zklock.enqueued" when the lock node is
// created, carrying the queue position, and an event "zklock.position"
// whenever the acquire learns that its position changed; the hand-off to
// this waiter is the event with position 0. Because each waiter watches
// only the node just ahead of it (no herd effect), a waiter learns of its
// position only when that node goes: the waiter third in line typically
// shows positions 2 and then 0, not 1. A node ahead does not by itself
// mean a wait (a reader behind readers, or a semaphore with a free slot,
// holds at once): an acquire is known to have waited when its position
// changes, or when it has to enqueue again.
//
// The read lease made by [zklock.Lease.Downgrade] has a hold span without
// an acquire's attributes or a link: it never waits.
//
// While the connection to ZooKeeper is down, open spans get the events
// "zklock.suspended" and "zklock.resumed".
//
// zklock reports events as they happen, and a span that starts or ends,
// or a span event added, as its event is reported takes the SDK's clock.
// What is recorded later takes the event's own [zklock.Event].Time: an
// acquire span, opened when the acquire turns out to wait, starts when
// the acquire started and gets the queue events reported before it; a
// hold span whose loss was reported before its acquire ended starts and
// ends at the acquire's end.
//
// A re-entrant acquire (under a context that carries a lease of the same
// resource, see [zklock.Lease.Context]) makes no span: it neither waits nor
// touches ZooKeeper.
//
// # Attributes
//
// All names are in the zklock namespace and follow the OpenTelemetry
// attribute naming rules; the keys are exported ([ResourceNameKey] and the
// rest) for use in queries and tests.
//
//	Attribute              Type    Where                         Value
//	zklock.resource.name   string  spans, multi events           the resource as given; AcquireAll: names joined by ","
//	zklock.resource.class  string  spans, all metrics            WithResourceClass (default DefaultResourceClass)
//	zklock.lock.kind       string  spans, all metrics            exclusive, read, write, semaphore, multi, election
//	zklock.queue.position  int     acquire's span, queue events  nodes ahead in the queue: on the span, at enqueue
//	zklock.wait.duration   double  acquire's span                seconds from the start of the acquire to its end
//	zklock.outcome         string  acquire's span, wait metric   acquired, timeout, canceled, busy, error
//	zklock.fencing_token   int     hold span                     the lease's fencing token (czxid of its node)
//	zklock.znode.path      string  hold span, failed acquire     the lock node's path (also on a queue event
//	                                                             when the acquire had to enqueue again)
//	zklock.session.id      string  hold span, failed acquire,    the ZooKeeper session id in hex ("0x100a2b3c4d0000")
//	                               session events
//	zklock.lost.reason     string  hold span, lost metric        session_expired, session_unverified, node_deleted,
//	                                                             client_closed, partner_lost
//	error.type             string  failures only: see below      locked, wait_timeout, unavailable, canceled, ...
//	zklock.adapter         string  misconfigured metric          http, echo, grpc
//	zklock.route           string  misconfigured metric          the HTTP route's pattern, (unrouted), or the gRPC full method
//
// The acquire's span is its acquire span if it has one, otherwise its
// hold span. Each fact is on one span of a trace: a lease's node, session
// and token are on its hold span, which does not repeat the queue
// position, wait and outcome of a linked acquire span; a failed acquire
// has no hold span, so its acquire span names the node it queued with and
// the session.
//
// The outcome of a failed acquire is busy for [zklock.ErrLocked] (a try
// that found the lock taken), timeout for [zklock.ErrWaitTimeout] and
// [context.DeadlineExceeded], canceled for [context.Canceled], and error
// for anything else. The kind is multi when the acquire names more than one
// resource ([zklock.Event].Resources: a single name may itself contain a
// comma), otherwise the mode:
// election for [zklock.Client.Campaign], whose acquire span (if it
// waited) is the wait to lead and whose hold span is the leadership.
//
// # Errors
//
// Failures carry error.type ([ErrorTypeKey]), the OpenTelemetry semantic
// conventions' attribute for the class of an error, and successes never
// do: a failed acquire's span and its zklock.acquire.duration point, a
// lost lease's hold span, its zklock.hold.duration point and its
// zklock.hold.lost point. The value is one of a small fixed set, named
// after the zklock sentinel error it matches ("locked" for
// [zklock.ErrLocked], "canceled" for [context.Canceled], "lease_lost" for
// every lost lease; [ErrorType] lists them all), or "_OTHER". zklock.outcome
// stays the coarse answer a dashboard groups by; error.type says which
// error it was (a timeout while ZooKeeper was unreachable is outcome
// timeout, error.type unavailable).
//
// # Metrics
//
//	Metric                   Instrument                    Unit       Attributes
//	zklock.acquire.duration  Float64Histogram              s          class, kind, outcome, error.type (failures)
//	zklock.hold.duration     Float64Histogram              s          class, kind, error.type (lost leases)
//	zklock.acquire.active    Int64ObservableUpDownCounter  {acquire}  class, kind
//	zklock.hold.active       Int64ObservableUpDownCounter  {lease}    class, kind
//	zklock.hold.lost         Int64Counter                  {lease}    class, kind, reason, error.type
//	zklock.misconfigured     Int64Counter                  {request}  zklock.adapter, zklock.route
//
// The last one is not the Observer's: the adapters (package middleware,
// its Echo adapters, package interceptor) record it, through their own
// WithMeterProvider option, once for every request or call they refuse
// because its lock is misconfigured ([MetricMisconfigured]). This package
// holds its names with the others'.
//
// The two active counts are kept by the Observer (an atomic add per
// change) and reported by a callback when the reader collects: several
// Observers on one MeterProvider add up. An Observer that is dropped stops
// reporting. zklock.hold.lost starts at 0 for every reason with the first
// acquire of a class and kind (five series each), so that a rate or
// increase in Prometheus counts the first loss. docs/metrics.md shows the
// names as Prometheus spells them.
//
// The histograms' bucket boundaries suit 1 ms to 60 s: 1, 2.5, 5, 10, 25,
// 50, 100, 250, 500 ms, 1, 2.5, 5, 10, 30, 60 s. An SDK View can change
// them.
//
// # Exemplars
//
// A wait recorded in zklock.acquire.duration carries the trace context of
// the acquire, so that the OpenTelemetry SDK can keep it as an exemplar
// (trace and span id) and a spike on a dashboard leads to the trace of an
// acquire that made it. An acquire that waited or failed is recorded under
// its own zklock.acquire span; one that took its lock at once under the
// span of its caller's context (its hold span, in the same trace, starts
// after). The SDK (go.opentelemetry.io/otel/sdk/metric v1.28 and later)
// keeps exemplars of measurements made under a sampled span by default
// (OTEL_METRICS_EXEMPLAR_FILTER=trace_based; always_off turns them off),
// one per histogram bucket and collection. The Prometheus exporter writes
// them in the OpenMetrics text format only: serve it with
// promhttp.HandlerOpts{EnableOpenMetrics: true}. docs/metrics.md says
// where exemplars do not reach a dashboard.
//
// # Cardinality
//
// Metrics are labelled with the resource class, never the resource name,
// so that "accounts/42" and "accounts/43" are one time series. By default
// ([DefaultResourceClass]) identifier-like path segments are collapsed into
// "{id}": "accounts/42" becomes "accounts/{id}". [WithResourceClass] replaces
// that function, for instance with one that keeps only the first segment.
// Spans always carry the full name as well. Past 4096 classes, new ones
// share one series labelled otel.metric.overflow=true (the SDK's own limit,
// 2000 series per instrument by default, applies first).
//
// # Overhead
//
// An uncontended acquire and release makes one span, no span event and
// two histogram measurements. BenchmarkAcquireRelease measures what that
// adds to a cycle against a real ZooKeeper; docs/metrics.md gives the
// figures. Spans that the sampler drops cost little: the Observer builds
// no event or late attribute for a span that is not recording, and the
// metrics stay exact whatever the sampler.
package tracing
