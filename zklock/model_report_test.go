package zklock_test

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/zklockkit/zklockkit/zklock"
)

// The runner's trace, figures and failure report.

func (r *runner) noteAnswer(o *realOp, x *mop, s opSnap) {
	if !s.done || o.noted {
		return
	}
	o.noted = true
	r.note("       op%d returned after %v: %s", x.id, s.at.Sub(s.issued).Round(time.Millisecond), answer(s))
	if x.onBlock == zklock.ErrLocked {
		r.stats.try(s.at.Sub(s.issued))
	}
	if s.err == nil {
		r.stats.acquires.Add(1)
		if x.waited {
			r.stats.handoff(s.at.Sub(x.since))
		}
	}
}

func (r *runner) note(format string, args ...any) {
	r.trace = append(r.trace, fmt.Sprintf(format, args...))
}

// fail stops the test with everything needed to replay and understand it.
func (r *runner) fail(format string, args ...any) {
	r.t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "model-based test failed on %s: %s\n", r.sys.name(), fmt.Sprintf(format, args...))
	if r.seed != 0 {
		fmt.Fprintf(&b, "seed %d (replay: go test -run 'TestIntegration_Model$' ./zklock -zklock.model.seed=%d)\n", r.seed, r.seed)
	}
	fmt.Fprintf(&b, "semaphore limit %d; steps (numbered), with what was seen:\n", r.setup.limit)
	for _, l := range r.trace {
		b.WriteString("  " + l + "\n")
	}
	b.WriteString("model:\n" + r.m.String())
	b.WriteString("observed:\n")
	for _, res := range r.m.resources() {
		fmt.Fprintf(&b, "  queue %s:", res)
		for _, n := range r.last.nodes[res] {
			fmt.Fprintf(&b, " op%d:%s#%d", r.opOf(n), modeLetter(n.mode), n.seq)
		}
		b.WriteByte('\n')
	}
	for _, x := range r.m.ops {
		if o := r.ops[x.id]; o != nil && x.step >= r.cur-20 {
			s := o.snap()
			fmt.Fprintf(&b, "  op%d: %s\n", x.id, answer(s))
		}
	}
	r.t.Fatal(b.String())
}

func answer(s opSnap) string {
	switch {
	case !s.done:
		return "waiting"
	case s.err != nil:
		return "error: " + s.err.Error()
	}
	st := "held"
	if err := s.lease.Err(); err != nil {
		st = "ended: " + err.Error()
	}
	return fmt.Sprintf("lease %v token %d, %s", shortPaths(paths(s.lease)), s.lease.Token(), st)
}

// shortPaths shows lock node paths as resource/sequence number.
func shortPaths(paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		dir, name := p[:strings.LastIndexByte(p, '/')], p[strings.LastIndexByte(p, '/')+1:]
		res := dir[strings.LastIndexByte(dir, '/')+1:]
		if len(name) > 10 {
			name = name[len(name)-10:]
		}
		out[i] = res + "#" + strings.TrimLeft(name[:len(name)-1], "0") + name[len(name)-1:]
	}
	return out
}

func errMatches(err, want error) bool {
	if want == nil {
		return err == nil
	}
	return errors.Is(err, want)
}

func errText(err error) string {
	if err == nil {
		return "nil"
	}
	return err.Error()
}
