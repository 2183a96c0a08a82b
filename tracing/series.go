package tracing

import (
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// series holds the metric attribute sets of one resource class and lock
// kind, built once: building a set sorts and allocates, and an
// uncontended cycle records with the same sets every time.
type series struct {
	class, kind string
	kv          []attribute.KeyValue     // class, kind and the user's metric attributes
	base        metric.MeasurementOption // kv
	acquired    metric.MeasurementOption // kv and outcome acquired

	mu   sync.Mutex
	sets map[extraKey]metric.MeasurementOption // the rarer sets, built when first needed
}

// extraKey names the attributes that a rarer set adds to kv: a failed
// acquire's outcome and error type, a loss's reason and error type.
type extraKey struct {
	key1, val1, key2, val2 string
}

func newSeries(class, kind string, user []attribute.KeyValue) *series {
	s := &series{class: class, kind: kind}
	s.kv = make([]attribute.KeyValue, 0, 2+len(user))
	s.kv = append(s.kv, ResourceClassKey.String(class), LockKindKey.String(kind))
	s.kv = append(s.kv, user...)
	s.base = metric.WithAttributeSet(attribute.NewSet(s.kv...))
	s.acquired = s.with(OutcomeKey.String(OutcomeAcquired))
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
	k := extraKey{string(a.Key), a.Value.Emit(), string(b.Key), b.Value.Emit()}
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

// Bounds of the caches of attribute sets, in case a resource class
// function returns unboundedly many values. Past them, sets are built
// for each measurement: correct, only slower.
const (
	maxSeries    = 4096
	maxExtraSets = 64 // per series: outcomes × error types, and reasons
)

// seriesOf returns the series of class and kind.
func (o *Observer) seriesOf(class, kind string) *series {
	k := seriesKey{class, kind}
	o.seriesMu.RLock()
	s := o.series[k]
	o.seriesMu.RUnlock()
	if s != nil {
		return s
	}
	o.seriesMu.Lock()
	defer o.seriesMu.Unlock()
	if s = o.series[k]; s != nil {
		return s
	}
	s = newSeries(class, kind, o.metricAttrs)
	if len(o.series) < maxSeries {
		o.series[k] = s
	}
	return s
}

type seriesKey struct{ class, kind string }
