// Package interceptor provides gRPC server interceptors that run chosen
// methods under a distributed lock of a [zklock.Locker], with the resource
// taken from the request, and client interceptors that retry calls a
// server refused because their lock was busy.
//
// # Quick start
//
//	locker, err := zklock.Open(ctx, os.Getenv("ZKLOCK_SERVERS"))
//	...
//	opts := []interceptor.Option{
//		interceptor.WithMethod(bankpb.Bank_Transfer_FullMethodName,
//			interceptor.Resource("accounts/{transfer.from}", "accounts/{transfer.to}")),
//		interceptor.WithMethod(bankpb.Bank_GetBalance_FullMethodName,
//			interceptor.Resource("accounts/{account_id}"), interceptor.ReadLock()),
//		interceptor.WithMethod(bankpb.Bank_Watch_FullMethodName,
//			interceptor.Resource("watch/{account_id}"), interceptor.FromFirstMessage(), interceptor.Try()),
//	}
//	srv := grpc.NewServer(
//		grpc.ChainUnaryInterceptor(interceptor.UnaryServerInterceptor(locker, opts...)),
//		grpc.ChainStreamInterceptor(interceptor.StreamServerInterceptor(locker, opts...)),
//	)
//
// The handler runs with the lease's context: it is cancelled if the lease
// is lost, and zklock.LeaseFromContext(ctx).Token() gives the fencing token
// to hand to storage. When the handler returns (also when it panics), the
// lock is released, and the handler's context ends with the lease. A
// client that cancels cancels the handler's context; the lock goes when
// the handler returns, never while it still runs.
//
// # Selecting methods
//
// [WithMethod] names one method by its full name, [WithMatcher] selects
// methods with a [Matcher] ([MatchFunc], [MatchService]); WithMethod wins,
// then the first matching matcher. Methods selected by neither run without
// a lock. With no WithMethod or WithMatcher at all, every method is locked,
// each under its own method name (one call of a method at a time
// across all servers).
//
// # Resources
//
// The default resource of a method is its full method name without the
// leading slash ("bank.v1.Bank/Transfer"), as the HTTP middleware's
// default is the route's path without it: zklock refuses a name that
// starts with "/", which looks like a znode path (zklock.RawPath). [Resource] sets templates instead:
// literal text with placeholders that name request fields by their proto
// field names, dotted through nested messages ({transfer.from}), or an
// incoming metadata key ({metadata:x-tenant-id}). Fields are read with
// protoreflect; a placeholder must name a singular string, integer, bool or
// enum field (enums give their value name). Several templates lock all
// their resources at once (zklock AcquireAll, in a canonical order, so two
// transfers A→B and B→A cannot deadlock). [ResourceFrom] computes the
// resource with a function instead.
//
// Templates are zklockkit's one resource language, shared with the HTTP
// middleware and generated code: a template names the same resource
// through every front end. Values are checked and escaped: a message on
// the path that is not set, a field with presence that is not set, an
// empty string or missing metadata, and a result that
// zklock.ValidateResource refuses (control characters such as NUL, invalid
// UTF-8, more than zklock.MaxResourceLen bytes) end the call with
// InvalidArgument before ZooKeeper is contacted. '%' and '/' in values are
// written %25 and %2F, and placeholders must be separated by text
// containing '/', so for one template distinct values always give distinct
// resources; zklock then maps every resource name to a single znode under
// its root ("../" cannot leave it). "{{" and "}}" are literal braces. The
// InvalidArgument message says which field or placeholder and why, never
// the value: "zklock: invalid resource \"accounts/{transfer.from}\":
// value of {transfer.from}: contains a control character".
//
// A template given twice for one method, or Try with MaxWait, is a
// configuration error (the latter matches zklock.ErrInvalidOption), and so
// is a template that names a field the method's message lacks, or a
// stream's field without [FromFirstMessage], when [WithMethod] names a
// method of the global proto registry (where generated code registers its
// services): the interceptor constructors panic with it. What only a call
// can reveal (the methods of a [WithMatcher], or of a service not in the
// registry) is a server bug: the call is refused with Internal, the
// reason is logged once per method at Error level ([WithLogger]), and
// every such call is counted in the metric zklock.misconfigured, by method
// ([WithMeterProvider]).
//
// # Streams
//
// [StreamServerInterceptor] holds one lease for the stream's whole life.
// The resource comes from the method name and incoming metadata; with
// [FromFirstMessage] the interceptor first receives the stream's first
// message, computes the resource from its fields, takes the lock and then
// hands that message to the handler's first RecvMsg. The handler's stream
// Context is the lease's.
//
// # Modes
//
// Per method: exclusive (the default), [ReadLock] / [WriteLock] (readers of
// a resource share it, writers exclude everyone), [Try] (refuse at once
// when busy), [MaxWait] (refuse when the wait passes a limit; otherwise a
// call waits as long as its deadline allows), and any zklock option through
// [AcquireOptions] (a semaphore with zklock.Limit).
//
// # Status codes
//
// Each reason is quoted from the definition of the code in
// google.golang.org/grpc/codes.
//
//	| situation                            | code               | reason, from grpc/codes                                    |
//	|--------------------------------------|--------------------|------------------------------------------------------------|
//	| busy with Try; MaxWait passed        | ResourceExhausted  | "some resource has been exhausted"                         |
//	| caller's deadline passed waiting     | DeadlineExceeded   | "operation expired before completion"                      |
//	| caller cancelled while waiting       | Canceled           | "canceled (typically by the caller)"                       |
//	| ZooKeeper unreachable; Client closed | Unavailable        | "currently unavailable ... a transient condition"          |
//	| invalid key from the request         | InvalidArgument    | "problematic regardless of the state of the system"        |
//	| lease lost while the handler ran     | Aborted            | "aborted, typically due to a concurrency issue"            |
//	| read lease asked to write (nested)   | FailedPrecondition | "not in a state required for the operation's execution"    |
//	| template or configuration bug        | Internal           | "invariants expected by underlying system has been broken" |
//
// Busy is ResourceExhausted rather than Unavailable so that clients and
// dashboards can tell contention (the server is fine, the lock is taken)
// from an outage of ZooKeeper (Unavailable). The busy status carries an
// errdetails.RetryInfo with the delay set by [RetryDelay] (default
// [DefaultRetryDelay]). Every status sent because the lock was not
// acquired also carries an errdetails.ErrorInfo with reason
// [NotAcquiredReason] and domain [ErrorDomain], whose metadata names the
// refused method ([MethodMetadataKey]): the handler has not run, so a
// retry is safe even for a non-idempotent method ([NotAcquired] tells). A
// locked handler that passes on such a status from a call it made has run:
// its status goes without the mark. Aborted replaces whatever the handler returned: the handler may
// have worked without mutual exclusion, and the client should retry at a
// higher level.
//
// go-grpc-middleware's retry interceptor does not retry busy calls as it
// comes: its default is no retries at all (max 0), and it ignores
// RetryInfo; given retry.WithCodes(codes.ResourceExhausted) it would also
// retry a ResourceExhausted sent by a handler that ran. Use this package's
// client interceptors instead.
//
// Every locked call gets a trailer [WaitTrailerKey] ("zklock-wait-ms") with
// the time it waited for the lock, once the acquire was attempted; a call
// that ended with DeadlineExceeded or Canceled has no trailers to read
// (gRPC ends its stream). [WaitFromTrailer] reads it.
//
// # Client side
//
// [UnaryClientInterceptor] and [StreamClientInterceptor] retry a call
// that the server refused because its lock was busy (ResourceExhausted
// marked [NotAcquired]), after the delay of its RetryInfo (capped by
// [WithMaxRetryDelay]), while the call's deadline allows the retry to
// start, at most [WithMaxRetries] times, and only when the mark names the
// method called (an unlocked handler may pass on the refusal of another
// method it called). A call whose handler may have run is never retried. A stream is retried by opening it again and sending
// again the messages it sent before it learnt of the refusal (up to
// [WithStreamBuffer]):
//
//	cc, err := grpc.NewClient(addr, creds,
//		grpc.WithChainUnaryInterceptor(interceptor.UnaryClientInterceptor()),
//		grpc.WithChainStreamInterceptor(interceptor.StreamClientInterceptor()))
//
// [WithAttemptContext] adds outgoing metadata to every attempt, such as a
// fencing token (fencegrpc.OutgoingContext).
//
// # Reentrancy
//
// The handler's context carries the lease. An acquire of the same resource
// through the same Locker under that context (in the handler, or in code it
// calls) re-enters the lease instead of waiting for itself, as in zklock.
package interceptor
