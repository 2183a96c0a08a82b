package tracing

import "go.opentelemetry.io/otel/attribute"

// Attribute keys set on spans, span events and metrics. The package
// documentation lists where each one appears.
const (
	// ResourceNameKey is the resource as given to the acquire (for
	// AcquireAll, the names joined with ","). Spans only.
	ResourceNameKey = attribute.Key("zklock.resource.name")
	// ResourceClassKey is the resource's class (see WithResourceClass).
	ResourceClassKey = attribute.Key("zklock.resource.class")
	// LockKindKey is the kind of lock: one of the Kind* values.
	LockKindKey = attribute.Key("zklock.lock.kind")
	// QueuePositionKey is the number of lock nodes ahead in the queue.
	QueuePositionKey = attribute.Key("zklock.queue.position")
	// WaitDurationKey is the time the acquire waited, in seconds.
	WaitDurationKey = attribute.Key("zklock.wait.duration")
	// OutcomeKey is how the acquire ended: one of the Outcome* values.
	OutcomeKey = attribute.Key("zklock.outcome")
	// FencingTokenKey is the lease's fencing token (the czxid of its node).
	FencingTokenKey = attribute.Key("zklock.fencing_token")
	// ZnodePathKey is the znode path of the lock node.
	ZnodePathKey = attribute.Key("zklock.znode.path")
	// SessionIDKey is the ZooKeeper session id, in hex ("0x1000a2b3c4d0000")
	// as ZooKeeper's own logs and four-letter words print it.
	SessionIDKey = attribute.Key("zklock.session.id")
	// LostReasonKey says why a lease was lost (zklock.LossReason's String:
	// session_expired, session_unverified, node_deleted, client_closed,
	// partner_lost).
	LostReasonKey = attribute.Key("zklock.lost.reason")
	// ErrorTypeKey is the OpenTelemetry semantic conventions' error.type:
	// the class of error a failed acquire or a lost lease ended with, one
	// of the values ErrorType returns. Only failures carry it.
	ErrorTypeKey = attribute.Key("error.type")
	// AdapterKey is the adapter that refused a misconfigured request: one
	// of the Adapter* values. MetricMisconfigured only.
	AdapterKey = attribute.Key("zklock.adapter")
	// RouteKey is the route of a misconfigured request: the HTTP route's
	// pattern as registered ("/accounts/{id}"), RouteUnrouted when the
	// middleware could not know it, or the gRPC full method
	// ("/bank.v1.Bank/Transfer"). MetricMisconfigured only.
	RouteKey = attribute.Key("zklock.route")
)

// Values of AdapterKey.
const (
	AdapterHTTP = "http" // package middleware, for net/http
	AdapterEcho = "echo" // package zkecho, for Echo v4 and v5
	AdapterGRPC = "grpc" // package interceptor
)

// RouteUnrouted is the value of RouteKey for a request whose route the
// HTTP middleware could not know: never the request's path, which is
// unbounded and may carry secrets (the log of the misconfiguration has
// it).
const RouteUnrouted = "(unrouted)"

// Values of LockKindKey.
const (
	KindExclusive = "exclusive"
	KindRead      = "read"
	KindWrite     = "write"
	KindSemaphore = "semaphore"
	KindMulti     = "multi"
	KindElection  = "election" // a candidate of Client.Campaign
)

// Values of OutcomeKey.
const (
	OutcomeAcquired = "acquired"
	OutcomeTimeout  = "timeout"
	OutcomeCanceled = "canceled"
	OutcomeBusy     = "busy"
	OutcomeError    = "error"
)

// Span and span event names.
const (
	// SpanAcquire names the span of one acquire attempt.
	SpanAcquire = "zklock.acquire"
	// SpanHold names the span of a lease, from acquired to released or lost.
	SpanHold = "zklock.hold"
	// EventEnqueued names the span event for the lock node's creation.
	EventEnqueued = "zklock.enqueued"
	// EventPosition names the span event for a change of queue position.
	EventPosition = "zklock.position"
	// EventSuspended names the span event for a lost connection.
	EventSuspended = "zklock.suspended"
	// EventResumed names the span event for a reconnect to the same session.
	EventResumed = "zklock.resumed"
)
