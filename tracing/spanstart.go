package tracing

import (
	"context"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
)

// spanStart gathers the attributes and options of one span start. Tracer.Start
// keeps none of them (trace.NewSpanStartConfig copies the attributes into
// the span's configuration), so the space is reused from one span to the
// next instead of being allocated for each: an uncontended cycle's hold
// span has nine attributes, more than half a kilobyte.
type spanStart struct {
	attrs []attribute.KeyValue
	opts  []trace.SpanStartOption
}

// maxPooledAttrs bounds the attribute space kept in the pool: a span start
// with many attributes of the user's (WithSpanAttributes) allocates its own.
const maxPooledAttrs = 32

var spanStarts = sync.Pool{New: func() any {
	return &spanStart{attrs: make([]attribute.KeyValue, 0, 16), opts: make([]trace.SpanStartOption, 0, 4)}
}}

// newSpanStart returns an empty spanStart from the pool.
func newSpanStart() *spanStart { return spanStarts.Get().(*spanStart) }

// start starts the span name, an internal span with the attributes and
// options gathered, and puts s back in the pool: s must not be used after.
func (s *spanStart) start(ctx context.Context, tracer trace.Tracer, name string) trace.Span {
	s.opts = append(s.opts, spanInternal, trace.WithAttributes(s.attrs...))
	_, span := tracer.Start(ctx, name, s.opts...)
	clear(s.attrs) // let go of the values and the contexts of links
	clear(s.opts)
	s.attrs, s.opts = s.attrs[:0], s.opts[:0]
	if cap(s.attrs) <= maxPooledAttrs {
		spanStarts.Put(s)
	}
	return span
}
