package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/zklockkit/zklockkit/internal/canary"
)

// Every canary has a check, and every check a canary: a canary added
// without one would never be run by make canary.
func TestEveryCanaryHasACheck(t *testing.T) {
	for _, n := range canary.All {
		cs, err := selectChecks(string(n))
		if err != nil || len(cs) == 0 {
			t.Errorf("canary %s: no check (%v)", n, err)
		}
	}
	for _, c := range checks {
		if !canary.Known(c.canary) {
			t.Errorf("check %q is for %q, no canary", c.name, c.canary)
		}
		if !c.campaign && (c.pkg == "" || c.run == "") {
			t.Errorf("check %q names no test", c.name)
		}
	}
	if _, err := selectChecks("requeue-no-wach"); err == nil {
		t.Error("a misspelt canary was accepted")
	}
}

// A test's output is judged by the verdict line: caught with its step and
// the time from the test's start to the line, another failure is not a
// catch, a pass is a survivor, a build failure did not run.
func TestJudgeTest(t *testing.T) {
	c := checks[0]
	t0 := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	// events returns go test -json's events for lines, the first printed
	// 0.5 s after the test began, each a second after the one before.
	events := func(lines ...string) string {
		var b strings.Builder
		fmt.Fprintf(&b, `{"Time":%q,"Action":"start","Package":"p"}`+"\n", t0.Add(-time.Second).Format(time.RFC3339Nano))
		fmt.Fprintf(&b, `{"Time":%q,"Action":"run","Package":"p","Test":"TestX"}`+"\n", t0.Format(time.RFC3339Nano))
		for i, l := range lines {
			at := t0.Add(500*time.Millisecond + time.Duration(i)*time.Second)
			fmt.Fprintf(&b, `{"Time":%q,"Action":"output","Package":"p","Output":%q}`+"\n", at.Format(time.RFC3339Nano), l+"\n")
		}
		return b.String()
	}
	judge := func(out string, ok bool) (result, string) {
		var log strings.Builder
		tl := &testLog{w: &log}
		// in two writes cut mid-line, as a pipe may deliver them
		if _, err := tl.Write([]byte(out[:len(out)/2])); err != nil {
			t.Fatal(err)
		}
		if _, err := tl.Write([]byte(out[len(out)/2:])); err != nil {
			t.Fatal(err)
		}
		tl.Close()
		r := result{check: c}
		r.judgeTest(tl, ok)
		return r, log.String()
	}
	verdict := "    model_run_test.go:397: model-based test failed on zookeeper: step 4: op2's lease [a#2] is still held, the model says it is lost (node_deleted) (2.014s without it, bound 2s)"
	r, log := judge(events("=== RUN   TestX", verdict, "    model_run_test.go:400: later", "--- FAIL: TestX (9.44s)", "FAIL"), false)
	if r.status != caught || r.after != "step 4, 1.50 s into the test" {
		t.Errorf("caught: %s, after %q; want step 4, 1.50 s into the test (the verdict's line, not the test's 9.44 s)", r.status, r.after)
	}
	if !strings.Contains(log, "=== RUN   TestX\n"+verdict+"\n    model_run_test.go:400: later\n") {
		t.Errorf("the log does not hold the plain output:\n%s", log)
	}
	if r, _ := judge(events("--- FAIL: TestX (2.44s)", "    some other failure"), false); r.status != otherVerdict {
		t.Errorf("another failure: %s", r.status)
	}
	if r, _ := judge(events("ok  \tgithub.com/zklockkit/zklockkit/zklock\t3.1s"), true); r.status != survived {
		t.Errorf("a pass: %s", r.status)
	}
	if r, _ := judge("# github.com/zklockkit/zklockkit/zklock\nzklock/x.go:1: syntax error\n"+events("FAIL\tgithub.com/zklockkit/zklockkit/zklock [build failed]"), false); r.status != errored {
		t.Errorf("a build failure: %s", r.status)
	}
}
