package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/zklockkit/zklockkit/tracing"
)

// printTree prints spans as an indented tree: each line starts with the
// span's start time relative to the first root and its duration.
func printTree(w io.Writer, spans []sdktrace.ReadOnlySpan) {
	ids := make(map[trace.SpanID]bool, len(spans))
	for _, s := range spans {
		ids[s.SpanContext().SpanID()] = true
	}
	children := make(map[trace.SpanID][]sdktrace.ReadOnlySpan)
	var roots []sdktrace.ReadOnlySpan
	for _, s := range spans {
		if p := s.Parent().SpanID(); p.IsValid() && ids[p] {
			children[p] = append(children[p], s)
		} else {
			roots = append(roots, s)
		}
	}
	byStart := func(a, b sdktrace.ReadOnlySpan) int { return a.StartTime().Compare(b.StartTime()) }
	slices.SortFunc(roots, byStart)
	for _, cs := range children {
		slices.SortFunc(cs, byStart)
	}
	if len(roots) == 0 {
		return
	}
	t0 := roots[0].StartTime()
	fmt.Fprintln(w, "   start  duration")
	var walk func(s sdktrace.ReadOnlySpan, prefix, branch string)
	walk = func(s sdktrace.ReadOnlySpan, prefix, branch string) {
		fmt.Fprintf(w, "%8s  %8s  %s%s%s\n", ms(s.StartTime().Sub(t0)), ms(s.EndTime().Sub(s.StartTime())),
			prefix, branch, describe(s))
		next := prefix
		switch branch {
		case "├─ ":
			next += "│  "
		case "└─ ":
			next += "   "
		}
		kids := children[s.SpanContext().SpanID()]
		inner := next
		if len(kids) > 0 {
			inner += "│  "
		} else {
			inner += "   "
		}
		for _, e := range s.Events() {
			fmt.Fprintf(w, "%8s  %8s  %s· %s%s\n", ms(e.Time.Sub(t0)), "", inner, e.Name, attrs(e.Attributes))
		}
		for i, k := range kids {
			b := "├─ "
			if i == len(kids)-1 {
				b = "└─ "
			}
			walk(k, next, b)
		}
	}
	for _, r := range roots {
		walk(r, "", "")
	}
}

// describe is a span's name and its most telling attributes.
func describe(s sdktrace.ReadOnlySpan) string {
	var b strings.Builder
	b.WriteString(s.Name())
	kvs := s.Attributes()
	if s.Name() == tracing.SpanHold {
		kvs = slices.DeleteFunc(slices.Clone(kvs), func(kv attribute.KeyValue) bool { return kv.Key == tracing.LockKindKey })
	}
	b.WriteString(attrs(kvs))
	if st := s.Status(); st.Code == codes.Error {
		fmt.Fprintf(&b, "  ERROR: %s", st.Description)
	}
	if len(s.Links()) > 0 && s.Name() == tracing.SpanHold {
		b.WriteString("  (linked to its acquire)")
	}
	return b.String()
}

// shown lists the attributes printed, in order; the spans carry more
// (znode path, session id, class), see -json.
var shown = []attribute.Key{
	tracing.ResourceNameKey, tracing.LockKindKey, tracing.QueuePositionKey, tracing.OutcomeKey,
	tracing.WaitDurationKey, tracing.FencingTokenKey, tracing.LostReasonKey,
}

func attrs(kvs []attribute.KeyValue) string {
	var b strings.Builder
	for _, k := range shown {
		for i := len(kvs) - 1; i >= 0; i-- {
			if kvs[i].Key != k {
				continue
			}
			name := strings.TrimPrefix(string(k), "zklock.")
			switch k {
			case tracing.WaitDurationKey:
				fmt.Fprintf(&b, " %s=%s", name, ms(time.Duration(kvs[i].Value.AsFloat64()*float64(time.Second))))
			case tracing.ResourceNameKey:
				fmt.Fprintf(&b, " %s", kvs[i].Value.String())
			default:
				fmt.Fprintf(&b, " %s=%s", name, kvs[i].Value.String())
			}
			break
		}
	}
	return b.String()
}

func ms(d time.Duration) string {
	return fmt.Sprintf("%.1fms", float64(d)/float64(time.Millisecond))
}
