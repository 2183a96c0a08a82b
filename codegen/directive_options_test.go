package codegen

import (
	"strings"
	"testing"
)

// limit= makes a semaphore and label= labels the lease, as Rule.Limit and
// zklock.Label do in the other front ends; limit= excludes mode=read and
// mode=write, as Limit excludes a Mode in the HTTP middleware.
func TestParseLimitAndLabel(t *testing.T) {
	d, errs := parseLines(t, `//zklock:resource=jobs/{kind} limit=3 label="nightly export" wait=2s`)
	if len(errs) > 0 {
		t.Fatalf("errors: %v", errs)
	}
	if got := strings.Join(d.options("zk", "tm"), ", "); got != `zk.Limit(3), zk.MaxWait(2 * tm.Second), zk.LeaseLabel("nightly export")` {
		t.Errorf("options = %s", got)
	}
	for _, tc := range []struct{ line, want string }{
		{"//zklock:resource=a limit=0", "want limit=N"},
		{"//zklock:resource=a limit=x", "want limit=N"},
		{"//zklock:resource=a limit", "want limit=N"},
		{"//zklock:resource=a limit=2 limit=3", "duplicate option limit"},
		{"//zklock:resource=a label=", "want label=TEXT"},
		{"//zklock:resource=a limit=2 mode=read", "limit= and mode=read exclude each other"},
		{"//zklock:resource=a try wait=1s", "try and wait= exclude each other"},
		{"//zklock:resource=a/{x}-{y}", `must be separated by text containing "/"`},
	} {
		_, errs := parseLines(t, tc.line)
		if len(errs) != 1 || !strings.Contains(errs[0].Msg, tc.want) {
			t.Errorf("%s: %v; want one error saying %q", tc.line, errs, tc.want)
		}
	}
}
