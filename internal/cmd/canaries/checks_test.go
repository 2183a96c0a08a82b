package main

import (
	"os"
	"path/filepath"
	"testing"

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
// the test's time, another failure is not a catch, a pass is a survivor.
func TestJudgeTest(t *testing.T) {
	c := checks[0]
	judge := func(out string, ok bool) result {
		r := result{check: c, log: filepath.Join(t.TempDir(), "log")}
		if err := os.WriteFile(r.log, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
		r.judgeTest(ok)
		return r
	}
	caughtOut := "--- FAIL: TestIntegration_ModelScenarios (2.44s)\n" +
		"    model_run_test.go:397: model-based test failed on zookeeper: step 4: op2's lease [a#2] is still held, the model says it is lost (node_deleted) (2.014s without it, bound 2s)\n"
	if r := judge(caughtOut, false); r.status != caught || r.after != "step 4, 2.44 s into the test" {
		t.Errorf("caught: %s, after %q", r.status, r.after)
	}
	if r := judge("--- FAIL: TestIntegration_ModelScenarios (2.44s)\n    some other failure\n", false); r.status != otherVerdict {
		t.Errorf("another failure: %s", r.status)
	}
	if r := judge("ok  \tgithub.com/zklockkit/zklockkit/zklock\t3.1s\n", true); r.status != survived {
		t.Errorf("a pass: %s", r.status)
	}
	if r := judge("FAIL\tgithub.com/zklockkit/zklockkit/zklock [build failed]\n", false); r.status != errored {
		t.Errorf("a build failure: %s", r.status)
	}
}
