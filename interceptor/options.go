package interceptor

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"go.opentelemetry.io/otel/metric"

	"github.com/zklockkit/zklockkit/zklock"
)

// Defaults for options.
const (
	// DefaultRetryDelay is the delay suggested in RetryInfo when a call is
	// refused because its lock is busy (see RetryDelay).
	DefaultRetryDelay = 100 * time.Millisecond
	// DefaultReleaseTimeout is how long the interceptor waits for ZooKeeper
	// to confirm a release before it lets the response go (see
	// WithReleaseTimeout).
	DefaultReleaseTimeout = 5 * time.Second
)

// ScopeName is the instrumentation scope name of the meter of the
// misconfiguration metric (see WithMeterProvider): this package's import
// path.
const ScopeName = "github.com/zklockkit/zklockkit/interceptor"

// Option configures UnaryServerInterceptor and StreamServerInterceptor.
// Options are applied in order over the documented defaults.
type Option func(*options)

type options struct {
	exact          map[string]*methodConfig
	matchers       []matcherRule
	releaseTimeout time.Duration
	logger         *slog.Logger
	meterProvider  metric.MeterProvider
	err            error
}

type matcherRule struct {
	m   Matcher
	cfg *methodConfig
}

func newOptions(opts []Option) *options {
	o := &options{exact: map[string]*methodConfig{}, releaseTimeout: DefaultReleaseTimeout}
	for _, opt := range opts {
		if opt != nil {
			opt(o)
		}
	}
	return o
}

func (o *options) setErr(err error) {
	if o.err == nil {
		o.err = err
	}
}

// selective reports whether any method was selected explicitly; when none
// was, every method is locked with the default method options.
func (o *options) selective() bool { return len(o.exact) > 0 || len(o.matchers) > 0 }

// WithMethod locks the method named fullMethod, as gRPC names it
// ("/bank.v1.Bank/Transfer"), with opts. WithMethod takes precedence over
// WithMatcher; given twice for one method, the last one wins.
func WithMethod(fullMethod string, opts ...MethodOption) Option {
	return func(o *options) {
		if !validFullMethod(fullMethod) {
			o.setErr(fmt.Errorf("interceptor: WithMethod(%q): want a full method name like \"/pkg.Service/Method\"", fullMethod))
			return
		}
		cfg, err := newMethodConfig(opts)
		if err != nil {
			o.setErr(fmt.Errorf("interceptor: WithMethod(%q): %w", fullMethod, err))
			return
		}
		o.exact[fullMethod] = cfg
	}
}

// WithMatcher locks every method that m matches and that no WithMethod
// names, with opts. Matchers are tried in the order given; the first that
// matches decides. A nil Matcher is ignored.
func WithMatcher(m Matcher, opts ...MethodOption) Option {
	return func(o *options) {
		if m == nil {
			return
		}
		cfg, err := newMethodConfig(opts)
		if err != nil {
			o.setErr(fmt.Errorf("interceptor: WithMatcher: %w", err))
			return
		}
		o.matchers = append(o.matchers, matcherRule{m, cfg})
	}
}

// WithReleaseTimeout sets how long the interceptor waits, after the handler
// returned, for ZooKeeper to confirm the release before it lets the
// response go (default DefaultReleaseTimeout). If the confirmation takes
// longer, the release goes on in the background (see zklock.Lease.Release).
func WithReleaseTimeout(d time.Duration) Option {
	return func(o *options) {
		if d <= 0 {
			o.setErr(fmt.Errorf("interceptor: WithReleaseTimeout(%v): must be positive", d))
			return
		}
		o.releaseTimeout = d
	}
}

// WithLogger sets the logger of misconfigurations that only a call can
// reveal (a template naming a field the message lacks, for a method
// WithMethod's check at construction cannot look up): once per method, at
// Error level, with the method and the reason, as the call is refused
// with Internal. Default: slog.Default().
func WithLogger(l *slog.Logger) Option {
	return func(o *options) { o.logger = l }
}

// WithMeterProvider sets the provider of the counter of calls refused
// for a misconfiguration that only a call can reveal (see WithLogger):
// zklock.misconfigured (Prometheus: zklock_misconfigured_total), labelled
// zklock.adapter "grpc" and zklock.route, the full method. Every such call
// counts, not only the first, which is what is logged. The default, also
// used when mp is nil, is the global provider (otel.GetMeterProvider),
// which follows one set later.
func WithMeterProvider(mp metric.MeterProvider) Option {
	return func(o *options) { o.meterProvider = mp }
}

// Matcher selects the methods WithMatcher applies to, by full method name
// ("/bank.v1.Bank/Transfer"). Its answer for a name must not change: the
// interceptor asks once per method and remembers.
type Matcher interface {
	Match(fullMethod string) bool
}

// MatchFunc adapts a function to Matcher.
type MatchFunc func(fullMethod string) bool

// Match calls f(fullMethod).
func (f MatchFunc) Match(fullMethod string) bool { return f(fullMethod) }

var _ Matcher = MatchFunc(nil)

// MatchService matches every method of the named services, given by their
// full proto names ("bank.v1.Bank").
func MatchService(services ...string) Matcher {
	set := make(map[string]bool, len(services))
	for _, s := range services {
		set[strings.TrimPrefix(s, "/")] = true
	}
	return MatchFunc(func(fullMethod string) bool {
		svc, _, ok := splitFullMethod(fullMethod)
		return ok && set[svc]
	})
}

// MethodOption configures the lock of the methods selected by WithMethod or
// WithMatcher.
type MethodOption func(*methodConfig)

// ResourceFunc computes the resource a call locks. req is the request
// message of a unary call; for a stream it is the first message when
// FromFirstMessage is set, and nil otherwise (read incoming metadata from
// ctx). A returned error that carries a gRPC status is sent as is; any
// other error is sent as InvalidArgument, and so is a resource that
// zklock.ValidateResource refuses (one that starts with "/", as fullMethod
// does, among others).
type ResourceFunc func(ctx context.Context, fullMethod string, req any) (string, error)

type methodConfig struct {
	templates    []*template
	fn           ResourceFunc
	mode         zklock.Mode
	try          bool
	maxWait      time.Duration
	retryDelay   time.Duration
	firstMessage bool
	extra        []zklock.AcquireOption
	acquireOpts  []zklock.AcquireOption // built from the above
	err          error
}

func newMethodConfig(opts []MethodOption) (*methodConfig, error) {
	c := &methodConfig{mode: zklock.Exclusive, retryDelay: DefaultRetryDelay}
	for _, o := range opts {
		if o != nil {
			o(c)
		}
	}
	if c.err != nil {
		return nil, c.err
	}
	if c.try && c.maxWait > 0 {
		return nil, fmt.Errorf("%w: Try and MaxWait exclude each other", zklock.ErrInvalidOption)
	}
	c.acquireOpts = append(c.acquireOpts, c.mode)
	if c.try {
		c.acquireOpts = append(c.acquireOpts, zklock.Try())
	}
	if c.maxWait > 0 {
		c.acquireOpts = append(c.acquireOpts, zklock.MaxWait(c.maxWait))
	}
	c.acquireOpts = append(c.acquireOpts, c.extra...)
	return c, nil
}

func (c *methodConfig) setErr(err error) {
	if c.err == nil {
		c.err = err
	}
}

// Resource sets the resource a call locks from templates over the request's
// fields, named by their proto field names, and incoming metadata:
//
//	Resource("accounts/{account_id}")
//	Resource("accounts/{transfer.from}", "accounts/{transfer.to}")
//	Resource("tenants/{metadata:x-tenant-id}/reports")
//
// With several templates the call locks every resulting resource, all or
// nothing (zklock.Locker.AcquireAll); templates that name the same
// resource for a call (a transfer from an account to itself) lock it once.
// A template given twice is a configuration error. The default,
// without Resource or ResourceFrom, is the method name. See the package
// documentation for the template rules.
func Resource(templates ...string) MethodOption {
	return func(c *methodConfig) {
		if len(templates) == 0 {
			c.setErr(fmt.Errorf("Resource: no template given"))
			return
		}
		c.templates = c.templates[:0]
		for i, s := range templates {
			if slices.Contains(templates[:i], s) {
				c.setErr(fmt.Errorf("resource template %q is listed twice", s))
				return
			}
			t, err := parseTemplate(s)
			if err != nil {
				c.setErr(err)
				return
			}
			c.templates = append(c.templates, t)
		}
		c.fn = nil
	}
}

// ResourceFrom sets a function that computes the resource a call locks,
// instead of a template.
func ResourceFrom(f ResourceFunc) MethodOption {
	return func(c *methodConfig) {
		if f == nil {
			c.setErr(fmt.Errorf("ResourceFrom: nil function"))
			return
		}
		c.fn = f
		c.templates = nil
	}
}

// ReadLock takes a shared read lock: calls of methods with ReadLock on the
// same resource run together, and exclude WriteLock and exclusive calls.
func ReadLock() MethodOption { return func(c *methodConfig) { c.mode = zklock.Read } }

// WriteLock takes the write side of a read/write lock: it excludes every
// other holder, like the default exclusive lock, and is what ReadLock
// methods of the same resource wait for.
func WriteLock() MethodOption { return func(c *methodConfig) { c.mode = zklock.Write } }

// Try refuses the call at once with ResourceExhausted when the lock is
// busy, instead of waiting. Try and MaxWait exclude each other: the
// interceptor panics at construction with an error matching
// zklock.ErrInvalidOption, as the HTTP middleware and codegen refuse the
// pair.
func Try() MethodOption { return func(c *methodConfig) { c.try = true } }

// MaxWait bounds the wait for the lock; when it passes, the call is refused
// with ResourceExhausted. Without it, or with 0, a call waits as long as
// its own deadline allows. A negative d is a configuration error matching
// zklock.ErrInvalidOption, as in the HTTP middleware and zklock.
func MaxWait(d time.Duration) MethodOption {
	return func(c *methodConfig) {
		if d < 0 {
			c.setErr(fmt.Errorf("%w: negative MaxWait %v", zklock.ErrInvalidOption, d))
			return
		}
		c.maxWait = d
	}
}

// RetryDelay sets the delay suggested to clients in the RetryInfo detail of
// a ResourceExhausted status (default DefaultRetryDelay).
func RetryDelay(d time.Duration) MethodOption {
	return func(c *methodConfig) {
		if d < 0 {
			c.setErr(fmt.Errorf("RetryDelay(%v): must not be negative", d))
			return
		}
		c.retryDelay = d
	}
}

// FromFirstMessage makes a stream's resource depend on its first message:
// the interceptor receives that message before the handler runs, computes
// the resource from it, takes the lock, and hands the message to the
// handler's first RecvMsg. The message type is found in the global proto
// registry (protoregistry.GlobalTypes), where generated code registers
// itself. It has no effect on unary methods.
func FromFirstMessage() MethodOption { return func(c *methodConfig) { c.firstMessage = true } }

// AcquireOptions adds zklock acquire options, for what the options above do
// not cover (zklock.Limit for a semaphore, zklock.RawPath,
// zklock.LeaseLabel). They apply after the ones this package derives.
func AcquireOptions(opts ...zklock.AcquireOption) MethodOption {
	return func(c *methodConfig) { c.extra = append(c.extra, opts...) }
}

func splitFullMethod(fullMethod string) (service, method string, ok bool) {
	if !strings.HasPrefix(fullMethod, "/") {
		return "", "", false
	}
	service, method, ok = strings.Cut(fullMethod[1:], "/")
	return service, method, ok && service != "" && method != "" && !strings.Contains(method, "/")
}

func validFullMethod(fullMethod string) bool {
	_, _, ok := splitFullMethod(fullMethod)
	return ok
}
