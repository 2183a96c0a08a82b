package main

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/zklockkit/zklockkit/cmd/zklock-bench/internal/bench"
	"github.com/zklockkit/zklockkit/internal/zkenv"
	"github.com/zklockkit/zklockkit/zktest"
)

func TestMain(m *testing.M) { zktest.Main(m) }

func runCmd(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestBadUsage(t *testing.T) {
	for _, args := range [][]string{{"-rounds", "x"}, {"-nope"}, {"extra"}, {"-servers", "zk://"},
		{"-ensemble", "-servers", "127.0.0.1:2181"}} {
		if code, _, _ := runCmd(t, args...); code != 2 {
			t.Errorf("%q: exit %d, want 2", args, code)
		}
	}
	code, _, stderr := runCmd(t, "-h")
	if code != 0 || !strings.Contains(stderr, "-quick") || !strings.Contains(stderr, "-json") || !strings.Contains(stderr, "-ensemble") {
		t.Errorf("-h: exit %d, usage %q", code, stderr)
	}
}

func TestIntegration_ServersFlag(t *testing.T) {
	file := filepath.Join(t.TempDir(), "report.json")
	addr := zktest.Shared().Addr()
	code, stdout, stderr := runCmd(t, "-servers", addr, "-quick", "-rounds", "1", "-only", "uncontended,raw", "-json", file)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{addr, "external server", "uncontended", "zklock ops/s", "zk.Lock ops/s", "raw Create"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("table lacks %q:\n%s", want, stdout)
		}
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Servers   []string
		Settings  string
		Scenarios []struct{ Name string }
		Raw       []struct{ Width int }
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Servers) != 1 || rep.Servers[0] != addr || rep.Settings != "external server" ||
		len(rep.Scenarios) != 1 || rep.Scenarios[0].Name != "uncontended" || len(rep.Raw) != 2 {
		t.Errorf("JSON report = %+v", rep)
	}
}

// Without the raw rates the uncontended target cannot be met, so -strict
// fails the run.
func TestIntegration_Strict(t *testing.T) {
	t.Setenv(zkenv.EnvServers, zktest.Shared().Addr())
	args := []string{"-quick", "-rounds", "1", "-only", "uncontended"}
	if code, stdout, stderr := runCmd(t, args...); code != 0 || !strings.Contains(stdout, "FAIL") {
		t.Errorf("without -strict: exit %d, %s%s", code, stdout, stderr)
	}
	if code, _, stderr := runCmd(t, append(args, "-strict")...); code != 1 {
		t.Errorf("-strict: exit %d, want 1: %s", code, stderr)
	}
}

func TestIntegration_JSONStdout(t *testing.T) {
	t.Setenv(zkenv.EnvServers, "zk://"+zktest.Shared().Addr()+"/ignored")
	code, stdout, stderr := runCmd(t, "-quick", "-rounds", "1", "-only", "waiters", "-json", "-")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	i := strings.Index(stdout, "{")
	if i < 0 {
		t.Fatalf("no JSON in %q", stdout)
	}
	var rep struct {
		Memory []struct {
			Side          string
			Waiters       int
			HeapPerWaiter float64 `json:"heap_bytes_per_waiter"`
		}
	}
	if err := json.Unmarshal([]byte(stdout[i:]), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Memory) != 2 || rep.Memory[0].Waiters != 1000 || rep.Memory[0].HeapPerWaiter <= 0 {
		t.Errorf("memory = %+v", rep.Memory)
	}
}

// With no servers given, the command starts and stops its own ZooKeeper.
func TestIntegration_OwnServer(t *testing.T) {
	t.Setenv(zkenv.EnvServers, "")
	code, stdout, stderr := runCmd(t, "-quick", "-rounds", "1", "-only", "ping-pong", "-force-sync=false")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "started here by zktest") || !strings.Contains(stdout, "forceSync=no") ||
		!strings.Contains(stdout, "ping-pong") || !strings.Contains(stderr, "starting ZooKeeper") {
		t.Errorf("output:\n%s\n%s", stdout, stderr)
	}
}

// -ensemble starts a 3-node ensemble and pins the sessions to its
// followers.
func TestIntegration_Ensemble(t *testing.T) {
	t.Setenv(zkenv.EnvServers, "")
	file := filepath.Join(t.TempDir(), "report.json")
	code, stdout, stderr := runCmd(t, "-ensemble", "-quick", "-rounds", "1", "-only", "uncontended,raw,floor", "-json", file)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	rep, err := bench.ReadReport(file)
	if err != nil {
		t.Fatal(err)
	}
	// The floor's waiter, on the other follower, sees the holder's node;
	// a request forwarded by a follower to the leader counts once (three
	// per cycle, and a ping or two).
	if f := rep.Floor; f == nil || f.Listed.Rate <= 0 || len(f.Listed.Errors) > 0 {
		t.Errorf("floor = %+v", f)
	}
	if n := rep.Scenarios[0].ZKLib.RequestsPerOp; n < 3 || n > 3.05 {
		t.Errorf("zk.Lock: %.3f requests per uncontended cycle, want 3", n)
	}
	if !strings.Contains(stdout, "3-node ensemble started here") || !strings.Contains(stdout, "sessions connect to the followers") ||
		!strings.Contains(stdout, "uncontended") || !strings.Contains(stderr, "starting a 3-node ZooKeeper ensemble") {
		t.Errorf("output:\n%s\n%s", stdout, stderr)
	}
	// The table's header names the three servers.
	if header, _, _ := strings.Cut(stdout, "\n"); strings.Count(header, "127.0.0.1:") != 4 {
		t.Errorf("header %q: want the three servers and the leader", header)
	}
}

// -from prints a saved report, as plain text or markdown, and runs
// nothing.
func TestFrom(t *testing.T) {
	rep := &bench.Report{ZooKeeper: "3.8.0", GoVersion: "go1.26", Rounds: 3,
		Scenarios: []bench.ScenarioResult{{Name: "uncontended", Unit: "cycles/s", Target: 1, Ratio: 1.1,
			ZKLock: bench.SideResult{Rate: 1100, CPUPerOp: bench.Duration(90 * time.Microsecond)},
			ZKLib:  bench.SideResult{Rate: 1000, CPUPerOp: bench.Duration(100 * time.Microsecond)}}}}
	file := filepath.Join(t.TempDir(), "report.json")
	var js bytes.Buffer
	if err := rep.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, js.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args  []string
		write func(*bench.Report, io.Writer) error
	}{
		{[]string{"-from", file}, (*bench.Report).WriteTable},
		{[]string{"-from", file, "-markdown"}, (*bench.Report).WriteMarkdown},
	} {
		var want bytes.Buffer
		if err := tc.write(rep, &want); err != nil {
			t.Fatal(err)
		}
		code, stdout, stderr := runCmd(t, tc.args...)
		if code != 0 || stdout != want.String() || stderr != "" {
			t.Errorf("%q: exit %d, stderr %q, stdout:\n%s\nwant:\n%s", tc.args, code, stderr, stdout, want.String())
		}
	}
	bad := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(bad, []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{bad, filepath.Join(t.TempDir(), "missing.json")} {
		if code, _, stderr := runCmd(t, "-from", name); code != 2 || !strings.Contains(stderr, filepath.Base(name)) {
			t.Errorf("-from %s: exit %d, %q", name, code, stderr)
		}
	}
}

// -memprofile writes the two heap profiles of each side.
func TestIntegration_MemProfile(t *testing.T) {
	defer func(rate int) { runtime.MemProfileRate = rate }(runtime.MemProfileRate)
	t.Setenv(zkenv.EnvServers, zktest.Shared().Addr())
	prefix := filepath.Join(t.TempDir(), "heap")
	code, _, stderr := runCmd(t, "-quick", "-rounds", "1", "-only", "waiters", "-memprofile", prefix)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, side := range []string{"zklock", "zk.Lock"} {
		for _, suffix := range []string{"-before", ""} {
			b, err := os.ReadFile(prefix + "-" + side + suffix + ".pprof")
			if err != nil {
				t.Fatal(err)
			}
			if len(b) < 100 || b[0] != 0x1f || b[1] != 0x8b { // gzipped protobuf
				t.Errorf("%s%s: %d bytes, not a profile", side, suffix, len(b))
			}
		}
	}
}
