package zkdebug

import (
	"context"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zklockkit/zklockkit/zklock"
)

// maxDepth is the deepest call stack a sample keeps.
const maxDepth = 32

// ContentionProfile records how long acquires wait for their locks, by the
// acquire's call stack and its resource's class, and serves the record in
// pprof's format: it is to distributed locks what Go's mutex profile is to
// sync.Mutex. Install it as an observer of the Client and mount it:
//
//	prof := zkdebug.NewContentionProfile()
//	c, err := zklock.Connect(ctx, servers, zklock.WithObserver(prof))
//	mux.Handle("/debug/zklock/contention", prof)
//
// then
//
//	go tool pprof http://host/debug/zklock/contention
//	go tool pprof 'http://host/debug/zklock/contention?seconds=30'
//
// Each sample counts acquires (contentions) and the time they waited
// (delay), under the acquire's stack with zklock's own frames removed, so
// the call site is the first frame; its label resource_class is
// zklock.ResourceClass of the resource ("accounts/{id}"). Acquires that
// gave up (a try that found the lock busy, MaxWait, a context that ended)
// count too: their wait is contention as well.
//
// Recording costs a call stack walk and a map update per recorded acquire
// (measured: see BenchmarkContentionProfile); SetFraction samples 1 in n
// acquires (values are scaled back up), and SetFraction(0) turns it off,
// at no cost and no allocation per acquire.
type ContentionProfile struct {
	fraction atomic.Int64
	class    func(string) string
	start    time.Time

	mu      sync.Mutex
	buckets map[sampleKey]*sampleValue
}

type sampleKey struct {
	stack [maxDepth]uintptr
	class string
}

type sampleValue struct {
	count int64 // acquires, scaled by the fraction
	delay int64 // nanoseconds waited, scaled by the fraction
}

var _ zklock.Observer = (*ContentionProfile)(nil)

// ProfileOption configures a ContentionProfile.
type ProfileOption func(*ContentionProfile)

// WithResourceClass sets how resources are grouped in the profile's
// resource_class label (default zklock.ResourceClass). A class with one
// value per resource makes the profile grow with the resources.
func WithResourceClass(f func(resource string) string) ProfileOption {
	return func(p *ContentionProfile) {
		if f != nil {
			p.class = f
		}
	}
}

// NewContentionProfile returns a profile that records every acquire
// (fraction 1).
func NewContentionProfile(opts ...ProfileOption) *ContentionProfile {
	p := &ContentionProfile{class: zklock.ResourceClass, start: time.Now(), buckets: make(map[sampleKey]*sampleValue)}
	p.fraction.Store(1)
	for _, o := range opts {
		if o != nil {
			o(p)
		}
	}
	return p
}

// SetFraction records, on average, 1 in n acquires (n < 0 is taken as 0);
// 0 records none. It returns the previous fraction, as
// runtime.SetMutexProfileFraction does.
func (p *ContentionProfile) SetFraction(n int) int {
	return int(p.fraction.Swap(int64(max(n, 0))))
}

// Observe records the end of an acquire's wait: EventAcquired, or
// EventFailed. zklock calls it on the acquiring goroutine, so the call
// stack is the acquire's.
func (p *ContentionProfile) Observe(_ context.Context, e zklock.Event) {
	if e.Kind != zklock.EventAcquired && e.Kind != zklock.EventFailed {
		return
	}
	n := p.fraction.Load()
	if n <= 0 || n > 1 && rand.Int64N(n) != 0 {
		return
	}
	var key sampleKey
	runtime.Callers(2, key.stack[:])
	key.class = p.class(e.Resource)
	p.mu.Lock()
	v := p.buckets[key]
	if v == nil {
		v = new(sampleValue)
		p.buckets[key] = v
	}
	v.count += n
	v.delay += int64(e.Wait) * n
	p.mu.Unlock()
}

// snapshot copies the profile's samples.
func (p *ContentionProfile) snapshot() map[sampleKey]sampleValue {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(map[sampleKey]sampleValue, len(p.buckets))
	for k, v := range p.buckets {
		out[k] = *v
	}
	return out
}
