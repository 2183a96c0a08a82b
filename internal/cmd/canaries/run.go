package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/zklockkit/zklockkit/internal/canary"
)

// status is how a check ended.
type status string

const (
	caught        status = "CAUGHT"         // it failed with the verdict that names the defect
	survived      status = "SURVIVED"       // it passed
	otherVerdict  status = "OTHER VERDICT"  // it failed, but not with the defect's verdict
	passed        status = "passed"         // a control run (no canary) passed
	controlFailed status = "CONTROL FAILED" // a control run failed: the check proves nothing
	errored       status = "COULD NOT RUN"  // the check did not run (a build error, no report)
)

// result is what one run of a check showed.
type result struct {
	check
	status  status
	verdict string        // the first line (or violation) that matched
	after   string        // how far the check got before the verdict
	took    time.Duration // the whole run, build included
	log     string
}

// exec runs c with canary name on ("" for none), its output in dir.
func (c check) exec(dir, label string, name canary.Name) result {
	r := result{check: c, log: filepath.Join(dir, label+"-"+string(c.canary)+".log")}
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, canary.EnvVar+"=") })
	if name != "" {
		env = append(env, canary.EnvVar+"="+string(name))
	}
	var args []string
	campaignDir := filepath.Join(dir, label+"-"+string(c.canary)+"-campaign")
	if c.campaign {
		args = []string{"run", "-tags", canary.Tag, "./cmd/zklock-chaos", "-mode", "short", "-q",
			"-out", campaignDir, "-json", filepath.Join(campaignDir, "report.json")}
	} else {
		args = []string{"test", "-json", "-tags", canary.Tag, "-count=1", "-timeout", "20m", "-run", c.run, c.pkg}
	}
	f, err := os.Create(r.log)
	if err != nil {
		r.status, r.verdict = errored, err.Error()
		return r
	}
	defer f.Close()
	fmt.Fprintf(f, "$ %s=%s go %s\n", canary.EnvVar, name, strings.Join(args, " "))
	cmd := exec.Command("go", args...)
	cmd.Env, cmd.Stdout, cmd.Stderr = env, f, f
	tl := &testLog{w: f}
	if !c.campaign {
		cmd.Stdout = tl
	}
	start := time.Now()
	runErr := cmd.Run()
	r.took = time.Since(start)
	tl.Close()
	var exit *exec.ExitError
	if runErr != nil && !errors.As(runErr, &exit) {
		r.status, r.verdict = errored, runErr.Error()
		return r
	}
	if name == "" {
		r.status = passed
		if runErr != nil {
			r.status = controlFailed
		}
		return r
	}
	if c.campaign {
		r.judgeCampaign(campaignDir, runErr == nil)
	} else {
		r.judgeTest(tl, runErr == nil)
	}
	return r
}

var (
	failLine  = regexp.MustCompile(`^--- FAIL: (\S+) \(([0-9.]+)s\)`)
	stepOf    = regexp.MustCompile(`\bstep (\d+)\b`)
	roundOf   = regexp.MustCompile(`\bround (\d+)\b`)
	seedOf    = regexp.MustCompile(`^\s*seed (\d+) \(replay`)
	buildFail = regexp.MustCompile(`\[build failed\]|\[setup failed\]`)
)

// judgeTest reads a go test's output: the first line that matches the
// verdict, and how long after the test began it was printed (without
// times, the failed test's own time).
func (r *result) judgeTest(tl *testLog, ok bool) {
	var testTime, seed string
	built := true
	for _, line := range tl.lines {
		if m := seedOf.FindStringSubmatch(line.text); m != nil && seed == "" && r.verdict != "" {
			seed = m[1]
		}
		if m := failLine.FindStringSubmatch(line.text); m != nil && testTime == "" {
			testTime = m[2] + " s into the test"
		}
		if r.verdict == "" && r.check.verdict.MatchString(line.text) {
			r.verdict = strings.TrimSpace(line.text)
			if !tl.started.IsZero() && !line.at.IsZero() {
				testTime = fmt.Sprintf("%.2f s into the test", line.at.Sub(tl.started).Seconds())
			}
		}
		if buildFail.MatchString(line.text) {
			built = false
		}
	}
	switch {
	case ok:
		r.status = survived
		return
	case !built:
		r.status = errored
		return
	case r.verdict == "":
		r.status = otherVerdict
		return
	}
	r.status = caught
	var where []string
	if m := stepOf.FindStringSubmatch(r.verdict); m != nil {
		where = append(where, "step "+m[1])
	} else if m := roundOf.FindStringSubmatch(r.verdict); m != nil {
		where = append(where, "round "+m[1])
	}
	if seed != "" {
		where = append(where, "seed "+seed)
	}
	if testTime != "" {
		where = append(where, testTime)
	}
	r.after = strings.Join(where, ", ")
}

// judgeCampaign reads a campaign's report and history: the first
// violation (by the time the history shows it) whose kind and detail
// match the verdict, how long into the campaign that was, and how many
// leases had been granted by then.
func (r *result) judgeCampaign(dir string, ok bool) {
	var rep struct {
		Seed       uint64 `json:"seed"`
		Violations []struct {
			Kind   string `json:"kind"`
			Detail string `json:"detail"`
			At     int64  `json:"at"`
		} `json:"violations"`
	}
	b, err := os.ReadFile(filepath.Join(dir, "report.json"))
	if err == nil {
		err = json.Unmarshal(b, &rep)
	}
	if err != nil {
		r.status, r.verdict = errored, "no campaign report: "+err.Error()
		return
	}
	matches := func(kind, detail string) bool {
		if r.check.verdict == nil {
			return !zooKeepers[kind] // any verdict that fails the run
		}
		return r.check.verdict.MatchString(kind + ": " + detail)
	}
	first := -1
	kinds := map[string]int{}
	for i, v := range rep.Violations {
		if matches(v.Kind, v.Detail) {
			kinds[v.Kind]++
			if first < 0 || v.At < rep.Violations[first].At {
				first = i
			}
		}
	}
	switch {
	case ok:
		r.status = survived
		return
	case first < 0:
		r.status = otherVerdict
		for _, v := range rep.Violations {
			kinds[v.Kind]++
		}
		r.verdict = fmt.Sprintf("violations: %v", kinds)
		return
	}
	v := rep.Violations[first]
	r.status = caught
	r.verdict = fmt.Sprintf("%v; the first: %s: %s", kinds, v.Kind, v.Detail)
	start, acquired, err := historyUntil(filepath.Join(dir, "history.jsonl"), v.At)
	if err != nil {
		r.after = "history unreadable: " + err.Error()
		return
	}
	r.after = fmt.Sprintf("%d acquisitions, %.0f s into the campaign (seed %d)", acquired, time.Duration(v.At-start).Seconds(), rep.Seed)
}

// zooKeepers are the campaign's verdicts on ZooKeeper, which do not fail
// a run (docs/chaos.md, "When ZooKeeper diverges").
var zooKeepers = map[string]bool{"server-divergence": true, "diverged-lease": true}

// historyUntil returns when a campaign's history begins, and how many
// leases it granted up to at.
func historyUntil(path string, at int64) (start int64, acquired int, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var e struct {
			Kind string `json:"kind"`
			T    int64  `json:"t"`
		}
		if json.Unmarshal(sc.Bytes(), &e) != nil {
			continue
		}
		if start == 0 || e.T < start {
			start = e.T
		}
		if e.Kind == "acquired" && e.T <= at {
			acquired++
		}
	}
	return start, acquired, sc.Err()
}

// writeTable prints the results as a Markdown table.
func writeTable(w io.Writer, rs []result) {
	fmt.Fprintln(w, "| canary | check | result | verdict | caught after | run |")
	fmt.Fprintln(w, "|---|---|---|---|---|---:|")
	for _, r := range rs {
		v := r.verdict
		if len(v) > 200 {
			v = v[:200] + "…"
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s |\n", r.canary, r.name, r.status,
			strings.ReplaceAll(v, "|", `\|`), r.after, strconv.Itoa(int(r.took.Seconds()))+" s")
	}
}
