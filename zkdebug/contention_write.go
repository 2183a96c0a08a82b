package zkdebug

import (
	"io"
	"runtime"
	"strings"
	"time"

	"github.com/google/pprof/profile"
)

// ownFrames are the packages whose frames are cut from the top of a
// sample's stack, so that its first frame is the acquire's call site.
var ownFrames = []string{
	"github.com/zklockkit/zklockkit/zklock.",
	"github.com/zklockkit/zklockkit/zkdebug.",
}

// Write writes the profile, everything recorded since it was made, in
// pprof's protobuf format (gzipped), as runtime/pprof profiles are.
func (p *ContentionProfile) Write(w io.Writer) error {
	return p.build(p.snapshot(), p.start, time.Now()).Write(w)
}

// delta returns what was recorded in after and not in before.
func delta(before, after map[sampleKey]sampleValue) map[sampleKey]sampleValue {
	out := make(map[sampleKey]sampleValue)
	for k, a := range after {
		b := before[k]
		if d := (sampleValue{a.count - b.count, a.delay - b.delay}); d.count > 0 {
			out[k] = d
		}
	}
	return out
}

// build makes a pprof profile of samples recorded between start and end.
func (p *ContentionProfile) build(samples map[sampleKey]sampleValue, start, end time.Time) *profile.Profile {
	prof := &profile.Profile{
		SampleType: []*profile.ValueType{
			{Type: "contentions", Unit: "count"},
			{Type: "delay", Unit: "nanoseconds"},
		},
		DefaultSampleType: "delay",
		PeriodType:        &profile.ValueType{Type: "contentions", Unit: "count"},
		Period:            max(p.fraction.Load(), 1),
		TimeNanos:         start.UnixNano(),
		DurationNanos:     end.Sub(start).Nanoseconds(),
	}
	locs := map[uintptr]*profile.Location{}
	funcs := map[string]*profile.Function{}
	for k, v := range samples {
		s := &profile.Sample{
			Value: []int64{v.count, v.delay},
			Label: map[string][]string{"resource_class": {k.class}},
		}
		for _, pc := range callSite(k.stack[:]) {
			loc := locs[pc]
			if loc == nil {
				loc = location(prof, funcs, pc)
				locs[pc] = loc
			}
			s.Location = append(s.Location, loc)
		}
		prof.Sample = append(prof.Sample, s)
	}
	return prof
}

// callSite returns the stack without its zero tail and without the frames
// of zklock and zkdebug at its top.
func callSite(stack []uintptr) []uintptr {
	n := 0
	for n < len(stack) && stack[n] != 0 {
		n++
	}
	stack = stack[:n]
	for len(stack) > 0 {
		fn := runtime.FuncForPC(stack[0] - 1)
		if fn == nil || !ownFrame(fn.Name()) {
			break
		}
		stack = stack[1:]
	}
	return stack
}

// ownFrame reports whether a function belongs to zklock or zkdebug (not
// to their tests, whose package names end in _test).
func ownFrame(name string) bool {
	for _, p := range ownFrames {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// location adds the location of return address pc (with its inlined
// frames) to prof.
func location(prof *profile.Profile, funcs map[string]*profile.Function, pc uintptr) *profile.Location {
	loc := &profile.Location{ID: uint64(len(prof.Location) + 1), Address: uint64(pc)}
	frames := runtime.CallersFrames([]uintptr{pc})
	for {
		f, more := frames.Next()
		fn := funcs[f.Function]
		if fn == nil {
			fn = &profile.Function{ID: uint64(len(prof.Function) + 1), Name: f.Function, SystemName: f.Function, Filename: f.File}
			funcs[f.Function] = fn
			prof.Function = append(prof.Function, fn)
		}
		loc.Line = append(loc.Line, profile.Line{Function: fn, Line: int64(f.Line)})
		if !more {
			break
		}
	}
	prof.Location = append(prof.Location, loc)
	return loc
}
