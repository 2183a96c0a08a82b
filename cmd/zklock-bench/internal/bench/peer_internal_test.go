package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zklockkit/zklockkit/zktest"
)

// testHarness returns a harness on the shared server, closed when t ends,
// and a context for the test.
func testHarness(t *testing.T) (context.Context, *Harness) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	h, err := NewHarness(ctx, []string{zktest.Shared().Addr()}, zktest.UniqueRoot(t), 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := h.Close(); err != nil {
			t.Error(err)
		}
	})
	return ctx, h
}

// startTestPeer starts p or fails the test with the install command, as
// the interoperability tests do.
func startTestPeer(ctx context.Context, t *testing.T, p Peer) *peerProc {
	t.Helper()
	if err := p.Installed(); err != nil {
		t.Fatal(err)
	}
	pp, err := startPeerProc(ctx, p, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pp.close)
	return pp
}

// rawResult sends a command and decodes the JSON line the peer answers
// into a map, so that the test sees exactly what the peer printed.
func rawResult(ctx context.Context, t *testing.T, pp *peerProc, line string) map[string]any {
	t.Helper()
	if err := pp.send(line); err != nil {
		t.Fatal(err)
	}
	select {
	case l, ok := <-pp.lines:
		if !ok {
			t.Fatalf("%s exited: %s", pp.peer.name, pp.stderr.last())
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("%s printed %q, not a JSON object: %v", pp.peer.name, l, err)
		}
		return m
	case <-ctx.Done():
		t.Fatalf("%s: no answer to %q", pp.peer.name, line)
	}
	return nil
}

// checkResult checks a result line: its keys, integer values, ops, and
// that the figures hang together.
func checkResult(t *testing.T, what string, m map[string]any, ops int, serial bool) {
	t.Helper()
	keys := []string{"event", "ops", "elapsed_ns", "p50_ns", "p90_ns", "p99_ns", "max_ns"}
	var got []string
	for k := range m {
		got = append(got, k)
	}
	slices.Sort(got)
	want := slices.Clone(keys)
	slices.Sort(want)
	if !slices.Equal(got, want) || m["event"] != "result" {
		t.Fatalf("%s: printed %v; want the keys %v and event result", what, m, keys)
	}
	n := map[string]int64{}
	for _, k := range keys[1:] {
		f, ok := m[k].(float64)
		if !ok || f != float64(int64(f)) || f < 0 {
			t.Fatalf("%s: %s = %v, want a non-negative integer", what, k, m[k])
		}
		n[k] = int64(f)
	}
	if n["ops"] != int64(ops) {
		t.Errorf("%s: ops %d, want %d", what, n["ops"], ops)
	}
	if !(0 < n["p50_ns"] && n["p50_ns"] <= n["p90_ns"] && n["p90_ns"] <= n["p99_ns"] && n["p99_ns"] <= n["max_ns"]) {
		t.Errorf("%s: percentiles out of order: %v", what, m)
	}
	// Every latency lies within the clock, and in a serial run at least
	// half the operations took p50 or more, one after another.
	if el := n["elapsed_ns"]; n["max_ns"] > el || (serial && n["p50_ns"]*int64((ops+1)/2) > el) {
		t.Errorf("%s: latencies do not fit in elapsed %v: %v", what, time.Duration(el), m)
	}
	// A lock cycle on a real server takes well over a microsecond and
	// well under a second: the unit is nanoseconds.
	if p := time.Duration(n["p50_ns"]); p < 10*time.Microsecond || p > time.Second {
		t.Errorf("%s: p50 %v is not a lock cycle in nanoseconds", what, p)
	}
}

// Each peer runs each of its scenarios for a few cycles against the real
// server and prints the JSON the bench reads.
func TestIntegration_PeerProtocol(t *testing.T) {
	for _, p := range Peers() {
		t.Run(p.Name(), func(t *testing.T) {
			ctx, h := testHarness(t)
			pp := startTestPeer(ctx, t, p)
			if pp.ready.Event != "ready" || pp.ready.Version == "" || pp.ready.Runtime == "" {
				t.Errorf("ready line %+v lacks the version or runtime", pp.ready)
			}
			servers := strings.Join(h.servers, ",")
			mk := func(name string) string {
				root := h.newRoot(name)
				path := root + "/p"
				if err := mkdirs(h.admin, path, p.container); err != nil {
					t.Fatal(err)
				}
				return path
			}

			m := rawResult(ctx, t, pp, fmt.Sprintf("uncontended %s 6 %s", mk("u"), servers))
			checkResult(t, "uncontended", m, 6, true)

			// 3 sessions, 7 acquisitions shared: 3 each, rounded up.
			m = rawResult(ctx, t, pp, fmt.Sprintf("contenders %s 7 %s %s %s", mk("c"), servers, servers, servers))
			checkResult(t, "contenders", m, 9, false)

			q := mk("q")
			if m := rawResult(ctx, t, pp, fmt.Sprintf("queue %s 5 %s %s", q, servers, servers)); m["event"] != "holding" {
				t.Fatalf("queue: %v, want holding", m)
			}
			if err := pp.send("enqueue"); err != nil {
				t.Fatal(err)
			}
			if err := h.waitQueued(ctx, q, 6); err != nil {
				t.Fatal(err)
			}
			m = rawResult(ctx, t, pp, "go")
			checkResult(t, "queue", m, 5, false)

			// An unknown command gets an error line and leaves the peer
			// in step: the next run works.
			if m := rawResult(ctx, t, pp, "juggle /x"); m["event"] != "error" || !strings.Contains(fmt.Sprint(m["error"]), "juggle") {
				t.Errorf("unknown command: %v", m)
			}
			s, err := pp.run(ctx, h, peerJob{kind: "contenders", n: 4, sessions: 2})
			if err != nil || s.Ops != 4 || s.Elapsed <= 0 || s.P50 <= 0 || s.P99 < s.P50 {
				t.Errorf("run after an error: %+v, %v", s, err)
			}
			s, err = pp.run(ctx, h, peerJob{kind: "queue", n: 7})
			if err != nil || s.Ops != 7 {
				t.Errorf("queue run: %+v, %v", s, err)
			}
		})
	}
}

// A peer that dies mid-run fails the run with ErrPeer at once, not after
// PeerRunTimeout, and is replaced for the next run.
func TestIntegration_PeerDies(t *testing.T) {
	ctx, h := testHarness(t)
	p := KazooPeer()
	pp := startTestPeer(ctx, t, p)
	pp.timeout = time.Minute
	st := &peerState{peer: p, proc: pp, runs: map[string]*peerRuns{}}
	ps := &peerSet{h: h, sessionTimeout: 10 * time.Second}
	go func() {
		time.Sleep(300 * time.Millisecond)
		pp.kill()
	}()
	start := time.Now()
	_, err := st.run(ctx, ps, peerJob{kind: "uncontended", n: 1_000_000})
	if !errors.Is(err, ErrPeer) || !strings.Contains(err.Error(), "exited") {
		t.Fatalf("run of a killed peer = %v, want ErrPeer, exited", err)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("the failure took %v", d)
	}
	if st.proc != nil {
		t.Fatal("the broken process was kept")
	}
	s, err := st.run(ctx, ps, peerJob{kind: "uncontended", n: 3})
	if err != nil || s.Ops != 3 {
		t.Fatalf("run after the restart: %+v, %v", s, err)
	}
	st.proc.close()
}

// A peer that does not answer within its bound is killed and its run
// fails with ErrPeer.
func TestIntegration_PeerTimeout(t *testing.T) {
	ctx, h := testHarness(t)
	pp := startTestPeer(ctx, t, KazooPeer())
	pp.timeout = 500 * time.Millisecond
	_, err := pp.run(ctx, h, peerJob{kind: "uncontended", n: 1_000_000})
	if !errors.Is(err, ErrPeer) || !strings.Contains(err.Error(), "no answer within") || pp.broken == nil {
		t.Fatalf("run past its bound = %v (broken %v)", err, pp.broken)
	}
	select {
	case <-pp.exited:
	case <-time.After(10 * time.Second):
		t.Fatal("the peer was not killed")
	}
}

func TestPeerModeSet(t *testing.T) {
	for in, want := range map[string]PeerMode{"auto": PeersAuto, "true": PeersAuto, "on": PeersAuto,
		"required": PeersRequired, "off": PeersOff, "false": PeersOff, "OFF": PeersOff} {
		var m PeerMode
		if err := m.Set(in); err != nil || m != want {
			t.Errorf("Set(%q) = %v, %v; want %v", in, m, err, want)
		}
	}
	var m PeerMode
	if err := m.Set("sometimes"); err == nil {
		t.Error("Set(sometimes) succeeded")
	}
	for m, want := range map[PeerMode]string{PeersOff: "off", PeersAuto: "auto", PeersRequired: "required"} {
		var back PeerMode
		if m.String() != want || back.Set(m.String()) != nil || back != m {
			t.Errorf("%d: String %q, want %q, round trip %v", m, m.String(), want, back)
		}
	}
}

// Every peer job names a scenario of the suite, for every set of sizes.
func TestPeerJobsNameScenarios(t *testing.T) {
	for _, sz := range []Sizes{FullSizes(), QuickSizes(), {Uncontended: 3, Contenders: []int{2, 5}, ContenderOps: 9, QueueDepth: 4}} {
		var names []string
		for _, s := range Scenarios(sz) {
			names = append(names, s.Name)
		}
		jobs := peerJobs(sz)
		if len(jobs) != 2+len(sz.Contenders) {
			t.Errorf("%d jobs for %v", len(jobs), names)
		}
		for name, j := range jobs {
			if !slices.Contains(names, name) {
				t.Errorf("peer job %q (%+v) names no scenario of %v", name, j, names)
			}
		}
	}
}
