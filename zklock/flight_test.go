package zklock_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/exp/trace"

	"github.com/zklockkit/zklockkit/zklock"
	"github.com/zklockkit/zklockkit/zktest"
)

// flightChildEnv carries a flightSpec (JSON) to the re-executed test
// binary, which then runs flightHolder instead of the tests.
const flightChildEnv = "ZKLOCK_TEST_FLIGHT_HOLDER"

type flightSpec struct {
	ZK       string `json:"zk"`
	Root     string `json:"root"`
	Resource string `json:"resource"`
	Dir      string `json:"dir"`
}

// flightHolder takes the lock with a flight recorder running, says HELD,
// and waits for the loss (the test pauses it past its loss deadline);
// then it waits for the recording, written in the background, and names
// it.
func flightHolder(s flightSpec) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rec, err := zklock.NewFlightRecorder(s.Dir, zklock.FlightWindow(time.Minute))
	if err != nil {
		return err
	}
	defer rec.Close()
	c, err := zklock.Connect(ctx, []string{s.ZK}, zklock.WithRoot(s.Root), zklock.WithSessionTimeout(time.Second),
		zklock.WithFlightRecorder(rec))
	if err != nil {
		return err
	}
	defer c.Close()
	l, err := c.Acquire(ctx, s.Resource)
	if err != nil {
		return err
	}
	fmt.Println("HELD", l.Token())
	select {
	case <-l.Done():
	case <-ctx.Done():
		return errors.New("the lease was never lost")
	}
	fmt.Println("LOST", l.Err())
	for {
		rs, err := rec.Recordings()
		if err != nil {
			return err
		}
		if len(rs) > 0 {
			fmt.Println("RECORDED", rs[0].JSON)
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("no recording: %v", rec.Err())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// recordingJSON is a recording's JSON document, as docs/operations.md
// describes it (the fields this test reads).
type recordingJSON struct {
	Version int    `json:"version"`
	Trace   string `json:"trace"`
	Losses  []struct {
		Resource string `json:"resource"`
		Reason   string `json:"reason"`
		Token    int64  `json:"token"`
		Nodes    []struct {
			Path  string `json:"path"`
			Token int64  `json:"token"`
		} `json:"nodes"`
		Client int `json:"client"`
	} `json:"losses"`
	Clients []struct {
		LastHeard      *time.Time `json:"last_heard"`
		LossDeadline   *time.Time `json:"loss_deadline"`
		LongestSilence *struct {
			From    time.Time `json:"from"`
			To      time.Time `json:"to"`
			Seconds float64   `json:"seconds"`
		} `json:"longest_silence"`
		Beats []struct {
			Sent       time.Time `json:"sent"`
			Op         string    `json:"op"`
			RTTSeconds *float64  `json:"rtt_seconds"`
		} `json:"beats"`
		Marks []struct {
			Time time.Time `json:"time"`
			What string    `json:"what"`
		} `json:"marks"`
	} `json:"clients"`
}

// A holder paused (SIGSTOP) past its loss deadline loses its lease when it
// resumes and leaves a recording in which the pause shows: in the wire
// history, a silence as long as the pause with no answer from ZooKeeper
// (pings answered before it, none during it); in the trace window, which
// Go's trace parser and `go tool trace` both read, a gap of the same
// length at the same wall-clock time, with no event of any thread.
func TestIntegration_FlightRecorderPausedHolder(t *testing.T) {
	const pause = 3 * time.Second // the session timeout is 1s
	spec := flightSpec{ZK: zktest.Shared().Addr(), Root: zktest.UniqueRoot(t), Resource: "flight/paused", Dir: t.TempDir()}
	child := zktest.StartChild(t, flightChildEnv, spec)
	token, err := strconv.ParseInt(child.Next(t, "HELD"), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond) // pings and syncs answered before the pause
	stopAt := time.Now()
	if err := zktest.PauseProcess(child.Cmd.Process); err != nil {
		t.Fatal(err)
	}
	time.Sleep(pause)
	contAt := time.Now()
	if err := zktest.ResumeProcess(child.Cmd.Process); err != nil {
		t.Fatal(err)
	}
	t.Logf("holder: %s", child.Next(t, "LOST"))
	path := child.Next(t, "RECORDED")

	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc recordingJSON
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Losses) != 1 || len(doc.Clients) != 1 {
		t.Fatalf("%d losses, %d clients; want 1 and 1:\n%s", len(doc.Losses), len(doc.Clients), b)
	}
	l, c := doc.Losses[0], doc.Clients[0]
	// The reason is whichever signal the resumed process handles first:
	// its watchdog's passed deadline (session_unverified), the server's
	// answer that the session expired, or, seen once in a CI rehearsal at
	// load 12, its node found gone (node_deleted). Each is a loss the
	// pause caused; the recording is what this test is about.
	if l.Resource != spec.Resource || l.Token != token || !slices.Contains([]string{"session_unverified", "session_expired", "node_deleted"}, l.Reason) ||
		len(l.Nodes) != 1 || !strings.HasPrefix(l.Nodes[0].Path, spec.Root+"/") || l.Nodes[0].Token != token {
		t.Fatalf("loss %+v; want %s, token %d, a loss the pause caused, its node", l, spec.Resource, token)
	}
	if c.LastHeard == nil || c.LossDeadline == nil || c.LongestSilence == nil {
		t.Fatalf("client: last heard %v, loss deadline %v, longest silence %v", c.LastHeard, c.LossDeadline, c.LongestSilence)
	}
	// The wire: answers before the pause, then nothing for its length.
	const slack = 300 * time.Millisecond
	s := c.LongestSilence
	t.Logf("longest silence %.3fs, from %v to %v (paused %v to %v)", s.Seconds, s.From.Sub(stopAt), s.To.Sub(stopAt), 0, contAt.Sub(stopAt))
	if s.Seconds < (pause-slack).Seconds() || s.From.After(stopAt.Add(slack)) || s.To.Before(contAt.Add(-slack)) {
		t.Fatalf("longest silence %.3fs from %v to %v; want the pause, %v from %v", s.Seconds, s.From, s.To, pause, stopAt)
	}
	pings := 0
	for _, bt := range c.Beats {
		if bt.RTTSeconds == nil {
			continue
		}
		read := bt.Sent.Add(time.Duration(*bt.RTTSeconds * float64(time.Second)))
		if bt.Op == "ping" && read.Before(stopAt) {
			pings++
		}
		if read.After(stopAt.Add(slack)) && read.Before(contAt.Add(-slack)) {
			t.Fatalf("a %s answered at %v, within the pause", bt.Op, read.Sub(stopAt))
		}
	}
	if pings == 0 {
		t.Fatalf("no ping answered before the pause: %+v", c.Beats)
	}

	// The trace: Go's parser reads it, and it has a gap as long as the
	// pause, at the pause.
	if doc.Trace == "" {
		t.Fatalf("no trace in the recording:\n%s", b)
	}
	tracePath := filepath.Join(filepath.Dir(path), doc.Trace)
	from, to := traceGap(t, tracePath)
	t.Logf("longest gap in the trace: %v, from %v to %v after the pause began", to.Sub(from), from.Sub(stopAt), to.Sub(stopAt))
	if to.Sub(from) < pause-slack || from.After(stopAt.Add(slack)) || to.Before(contAt.Add(-slack)) {
		t.Fatalf("longest gap in the trace %v, from %v to %v; want the pause, %v from %v", to.Sub(from), from, to, pause, stopAt)
	}
	out, err := exec.Command("go", "tool", "trace", "-d=parsed", tracePath).CombinedOutput()
	if err != nil {
		t.Fatalf("go tool trace: %v\n%.2000s", err, out)
	}
}

// traceGap reads a trace file with Go's trace parser and returns the
// longest interval with no event, in wall-clock time.
func traceGap(t *testing.T, path string) (from, to time.Time) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := trace.NewReader(bufio.NewReader(f))
	if err != nil {
		t.Fatal(err)
	}
	var snap *trace.ClockSnapshot
	var prev, gapFrom, gapTo trace.Time
	events := 0
	for {
		ev, err := r.ReadEvent()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("reading the trace after %d events: %v", events, err)
		}
		events++
		if ev.Kind() == trace.EventSync && snap == nil {
			snap = ev.Sync().ClockSnapshot
		}
		if prev != 0 && ev.Time().Sub(prev) > gapTo.Sub(gapFrom) {
			gapFrom, gapTo = prev, ev.Time()
		}
		prev = ev.Time()
	}
	if snap == nil {
		t.Fatalf("no clock snapshot in %d events", events)
	}
	wall := func(at trace.Time) time.Time { return snap.Wall.Add(at.Sub(snap.Trace)) }
	return wall(gapFrom), wall(gapTo)
}

// An operator's delete of a held node is recorded (node_deleted); a
// lease lost because its Client closed is not.
// Options are checked; Go's one flight recorder per process makes a
// second FlightRecorder fail with ErrFlightRecorderBusy.
func TestIntegration_FlightRecorderNodeDeleted(t *testing.T) {
	ctx := testCtx(t)
	if _, err := zklock.NewFlightRecorder(t.TempDir(), zklock.FlightKeep(0)); !errors.Is(err, zklock.ErrInvalidOption) {
		t.Fatalf("FlightKeep(0): %v; want ErrInvalidOption", err)
	}
	if _, err := zklock.NewFlightRecorder(""); !errors.Is(err, zklock.ErrInvalidOption) {
		t.Fatalf("empty directory: %v; want ErrInvalidOption", err)
	}
	if _, err := zklock.Connect(ctx, []string{zktest.Shared().Addr()}, zklock.WithFlightRecorder(nil)); !errors.Is(err, zklock.ErrInvalidOption) {
		t.Fatalf("WithFlightRecorder(nil): %v; want ErrInvalidOption", err)
	}
	rec, err := zklock.NewFlightRecorder(t.TempDir(), zklock.FlightEvery(0), zklock.FlightWindow(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close()
	if _, err := zklock.NewFlightRecorder(t.TempDir()); !errors.Is(err, zklock.ErrFlightRecorderBusy) {
		t.Fatalf("a second FlightRecorder: %v; want ErrFlightRecorderBusy", err)
	}
	root := zktest.UniqueRoot(t)
	c := newClient(t, root, zklock.WithFlightRecorder(rec))
	l, err := c.Acquire(ctx, "flight/deleted")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Conn().Delete(l.Path(), -1); err != nil {
		t.Fatal(err)
	}
	<-l.Done()
	var rs []zklock.Recording
	eventually(t, "a recording", func() bool { rs, _ = rec.Recordings(); return len(rs) == 1 })
	b, err := os.ReadFile(rs[0].JSON)
	if err != nil {
		t.Fatal(err)
	}
	var doc recordingJSON
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Losses) != 1 || doc.Losses[0].Reason != "node_deleted" || doc.Losses[0].Nodes[0].Path != l.Path() || rs[0].Trace == "" {
		t.Fatalf("recording %s:\n%s", rs[0].Name, b)
	}
	if _, err := c.Acquire(ctx, "flight/closed"); err != nil {
		t.Fatal(err)
	}
	c.Close()
	time.Sleep(500 * time.Millisecond) // more than the recording's settling
	if rs, _ = rec.Recordings(); len(rs) != 1 {
		t.Fatalf("%d recordings after Close; a closed client's losses are not recorded", len(rs))
	}
}
