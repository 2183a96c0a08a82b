package tracing

import (
	"sync"
	"sync/atomic"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// series is one resource class and lock kind as the metrics see it: the
// attribute sets its measurements carry, built once (building a set sorts
// and allocates, and an uncontended cycle records with the same sets every
// time), and its counts of acquires in progress and leases held, which
// the instruments' callback reports.
type series struct {
	kv       []attribute.KeyValue     // class, kind and the user's metric attributes
	base     metric.MeasurementOption // kv
	acquired metric.MeasurementOption // kv and outcome acquired

	// The options of the measurements of every cycle, as slices that a
	// Record call takes as they are (a variadic argument of its own would
	// be allocated on each call).
	baseOpts, acquiredOpts []metric.RecordOption

	waiting atomic.Int64 // zklock.acquire.active
	held    atomic.Int64 // zklock.hold.active

	mu   sync.Mutex
	sets map[extraKey]metric.MeasurementOption // the rarer sets, built when first needed
}

// extraKey names the attributes that a rarer set adds to kv: a failed
// acquire's outcome and error type, a loss's reason and error type.
type extraKey struct {
	key1, val1, key2, val2 string
}

func newSeries(kv []attribute.KeyValue) *series {
	s := &series{kv: kv}
	s.base = metric.WithAttributeSet(attribute.NewSet(kv...))
	s.acquired = s.with(OutcomeKey.String(OutcomeAcquired))
	s.baseOpts = []metric.RecordOption{s.base}
	s.acquiredOpts = []metric.RecordOption{s.acquired}
	return s
}

// with returns a new set: kv and extra.
func (s *series) with(extra ...attribute.KeyValue) metric.MeasurementOption {
	kv := make([]attribute.KeyValue, 0, len(s.kv)+len(extra))
	kv = append(kv, s.kv...)
	kv = append(kv, extra...)
	return metric.WithAttributeSet(attribute.NewSet(kv...))
}

// extra returns the set kv plus a and b (b may be empty), cached.
func (s *series) extra(a, b attribute.KeyValue) metric.MeasurementOption {
	k := extraKey{string(a.Key), a.Value.String(), string(b.Key), b.Value.String()}
	s.mu.Lock()
	defer s.mu.Unlock()
	if opt, ok := s.sets[k]; ok {
		return opt
	}
	var opt metric.MeasurementOption
	if b.Key == "" {
		opt = s.with(a)
	} else {
		opt = s.with(a, b)
	}
	if s.sets == nil {
		s.sets = make(map[extraKey]metric.MeasurementOption)
	}
	if len(s.sets) < maxExtraSets {
		s.sets[k] = opt
	}
	return opt
}

// failed returns the set of a failed acquire.
func (s *series) failed(outcome, errType string) metric.MeasurementOption {
	return s.extra(OutcomeKey.String(outcome), ErrorTypeKey.String(errType))
}

// lostHold returns the set of the hold time of a lost lease.
func (s *series) lostHold() metric.MeasurementOption {
	return s.extra(ErrorTypeKey.String(errorTypeLeaseLost), attribute.KeyValue{})
}

// lost returns the set of a loss.
func (s *series) lost(reason string) metric.MeasurementOption {
	return s.extra(LostReasonKey.String(reason), ErrorTypeKey.String(errorTypeLeaseLost))
}

// maxSeries bounds the number of series, in case a resource class function
// returns unboundedly many values: past it, new classes share one series
// labelled otel.metric.overflow=true, as the SDK labels the series past its
// own cardinality limit (2000 by default, so the SDK's limit comes first).
// maxExtraSets bounds the rarer sets cached per series (outcomes × error
// types, and loss reasons); past it they are built for each measurement.
const (
	maxSeries    = 4096
	maxExtraSets = 64
)

// registry holds the series of an Observer.
type registry struct {
	user     []attribute.KeyValue // the user's metric attributes
	onNew    func(*series)        // called with each new series, r.mu held
	mu       sync.RWMutex
	byKey    map[seriesKey]*series
	all      []*series // byKey's values, and overflow once used, in order of creation
	overflow *series
}

type seriesKey struct{ class, kind string }

func newRegistry(user []attribute.KeyValue) *registry {
	return &registry{user: user, byKey: make(map[seriesKey]*series)}
}

// get returns the series of class and kind.
func (r *registry) get(class, kind string) *series {
	k := seriesKey{class, kind}
	r.mu.RLock()
	s := r.byKey[k]
	r.mu.RUnlock()
	if s != nil {
		return s
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if s = r.byKey[k]; s != nil {
		return s
	}
	if len(r.byKey) >= maxSeries {
		if r.overflow == nil {
			r.overflow = newSeries(append([]attribute.KeyValue{attribute.Bool("otel.metric.overflow", true)}, r.user...))
			r.all = append(r.all, r.overflow)
			r.announce(r.overflow)
		}
		return r.overflow
	}
	kv := make([]attribute.KeyValue, 0, 2+len(r.user))
	kv = append(kv, ResourceClassKey.String(class), LockKindKey.String(kind))
	s = newSeries(append(kv, r.user...))
	r.byKey[k] = s
	r.all = append(r.all, s)
	r.announce(s)
	return s
}

func (r *registry) announce(s *series) {
	if r.onNew != nil {
		r.onNew(s)
	}
}

// each calls f for every series.
func (r *registry) each(f func(*series)) {
	r.mu.RLock()
	all := r.all
	r.mu.RUnlock()
	for _, s := range all {
		f(s)
	}
}
