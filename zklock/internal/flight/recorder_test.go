package flight

import (
	"encoding/json"
	"errors"
	"os"
	"runtime/trace"
	"testing"
	"time"

	"github.com/zklockkit/zklockkit/zklock/internal/wire"
)

// client is a Source that reports a fixed session.
type client struct{ id int64 }

func (c *client) Report(now time.Time) Client {
	return Report(wire.HistorySnapshot{}, Session{ID: c.id, State: "verified"}, now)
}

func start(t *testing.T, cfg Config) *Recorder {
	t.Helper()
	if cfg.Dir == "" {
		cfg.Dir = t.TempDir()
	}
	if cfg.Keep == 0 {
		cfg.Keep = 10
	}
	r, err := Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	return r
}

func read(t *testing.T, e Entry) Document {
	t.Helper()
	b, err := os.ReadFile(e.JSON)
	if err != nil {
		t.Fatal(err)
	}
	var d Document
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	return d
}

// waitFor polls List until it finds n recordings.
func waitFor(t *testing.T, dir string, n int) []Entry {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		es, err := List(dir)
		if err != nil {
			t.Fatal(err)
		}
		if len(es) >= n || time.Now().After(deadline) {
			if len(es) != n {
				t.Fatalf("%d recordings; want %d", len(es), n)
			}
			return es
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// The losses of one moment share a recording, with one entry per client
// involved; the losses the rate limit refuses are counted in the next
// recording. Lost never waits for the recording.
func TestRecorderCoalescesAndRateLimits(t *testing.T) {
	r := start(t, Config{Window: time.Second, Every: 300 * time.Millisecond, Settle: 100 * time.Millisecond})
	a, b := &client{id: 1}, &client{id: 2}
	began := time.Now()
	r.Lost(Loss{Resource: "x"}, a)
	r.Lost(Loss{Resource: "y"}, a)
	r.Lost(Loss{Resource: "z"}, b)
	if d := time.Since(began); d > 50*time.Millisecond {
		t.Fatalf("Lost took %v", d)
	}
	es := waitFor(t, r.Dir(), 1)
	d := read(t, es[0])
	if len(d.Losses) != 3 || len(d.Clients) != 2 || d.Losses[1].Client != 0 || d.Losses[2].Client != 1 || d.Clients[1].Session != "0x2" {
		t.Fatalf("recording: %d losses, %d clients: %+v", len(d.Losses), len(d.Clients), d)
	}
	if d.Trace == "" || es[0].Trace == "" {
		t.Fatalf("no trace: %q", d.TraceError)
	}
	r.Lost(Loss{Resource: "w"}, a) // within Every of the first: suppressed
	time.Sleep(400 * time.Millisecond)
	r.Lost(Loss{Resource: "v"}, a)
	es = waitFor(t, r.Dir(), 2)
	if d := read(t, es[0]); d.Suppressed != 1 || len(d.Losses) != 1 || d.Losses[0].Resource != "v" {
		t.Fatalf("second recording: suppressed %d, losses %+v; want 1 suppressed, the loss of v", d.Suppressed, d.Losses)
	}
}

// A recording lists at most MaxLosses losses; the others of its moment
// count as suppressed.
func TestRecorderCapsLosses(t *testing.T) {
	r := start(t, Config{Window: time.Second, Settle: time.Hour})
	c := &client{id: 1}
	for range MaxLosses + 3 {
		r.Lost(Loss{Resource: "x"}, c)
	}
	r.Close() // writes the recording at once
	es := waitFor(t, r.Dir(), 1)
	if d := read(t, es[0]); len(d.Losses) != MaxLosses || d.Suppressed != 3 || len(d.Clients) != 1 {
		t.Fatalf("%d losses, %d suppressed, %d clients; want %d, 3, 1", len(d.Losses), d.Suppressed, len(d.Clients), MaxLosses)
	}
}

// The directory keeps the newest Keep recordings.
func TestRecorderKeeps(t *testing.T) {
	r := start(t, Config{Window: time.Second, Keep: 2})
	for i := range 4 {
		r.Lost(Loss{Resource: "x"}, &client{id: int64(i + 1)})
		want := SessionText(int64(i + 1))
		deadline := time.Now().Add(10 * time.Second)
		for {
			es, _ := List(r.Dir())
			if len(es) > 0 && read(t, es[0]).Clients[0].Session == want {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("no recording of session %s", want)
			}
			time.Sleep(10 * time.Millisecond)
		}
		time.Sleep(2 * time.Millisecond) // distinct names
	}
	waitFor(t, r.Dir(), 2)
	ents, _ := os.ReadDir(r.Dir())
	if len(ents) != 4 {
		t.Fatalf("%d files; want 2 recordings of 2 files", len(ents))
	}
}

// Close writes the recording that waits to settle at once.
func TestRecorderCloseWrites(t *testing.T) {
	r := start(t, Config{Window: time.Second, Settle: time.Hour})
	r.Lost(Loss{Resource: "x"}, &client{id: 1})
	began := time.Now()
	r.Close()
	if d := time.Since(began); d > 5*time.Second {
		t.Fatalf("Close took %v", d)
	}
	if es, _ := List(r.Dir()); len(es) != 1 {
		t.Fatalf("%d recordings after Close; want 1", len(es))
	}
	r.Lost(Loss{Resource: "y"}, &client{id: 1}) // after Close: ignored
}

// Go runs one flight recorder at a time: a second Start fails with
// ErrBusy; a Recorder given the program's own snapshots it and leaves it
// running.
func TestRecorderOnePerProcess(t *testing.T) {
	r := start(t, Config{Window: time.Second})
	if _, err := Start(Config{Dir: t.TempDir(), Window: time.Second}); !errors.Is(err, ErrBusy) {
		t.Fatalf("second Start: %v; want ErrBusy", err)
	}
	r.Close()
	fr := trace.NewFlightRecorder(trace.FlightRecorderConfig{MinAge: time.Second})
	if _, err := Start(Config{Dir: t.TempDir(), Trace: fr}); err == nil {
		t.Fatal("Start with a runtime flight recorder not started: no error")
	}
	if err := fr.Start(); err != nil {
		t.Fatal(err)
	}
	defer fr.Stop()
	own := start(t, Config{Trace: fr, Keep: 1})
	own.Lost(Loss{Resource: "x"}, &client{id: 1})
	own.Close()
	es := waitFor(t, own.Dir(), 1)
	if es[0].Trace == "" {
		t.Fatal("no trace from the program's own flight recorder")
	}
	if !fr.Enabled() {
		t.Fatal("Close stopped the program's own flight recorder")
	}
}

// Start refuses a directory it cannot write to.
func TestRecorderDirUnwritable(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "file")
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, err := Start(Config{Dir: f.Name() + "/sub"}); err == nil {
		t.Fatal("Start under a file: no error")
	}
}

// The longest silence is the longest interval between two answers read,
// the last one to now included.
func TestLongestSilence(t *testing.T) {
	t0 := time.Unix(1000, 0)
	ns := func(d time.Duration) int64 { return t0.Add(d).UnixNano() }
	h := wire.HistorySnapshot{
		Beats: []wire.Trip{{Sent: ns(0), RTT: int64(time.Millisecond)}, {Sent: ns(time.Second), RTT: -1}, {Sent: ns(5 * time.Second), RTT: 0}},
		Trips: []wire.Trip{{Sent: ns(500 * time.Millisecond), RTT: int64(time.Millisecond)}},
	}
	s := longestSilence(h, t0.Add(6*time.Second))
	if s == nil || !s.From.Equal(t0.Add(501*time.Millisecond)) || !s.To.Equal(t0.Add(5*time.Second)) {
		t.Fatalf("silence %+v; want from 0.501s to 5s", s)
	}
	if s := longestSilence(h, t0.Add(20*time.Second)); !s.To.Equal(t0.Add(20 * time.Second)) {
		t.Fatalf("silence %+v; want it to run to now", s)
	}
}
