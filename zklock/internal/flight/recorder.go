package flight

import (
	"errors"
	"fmt"
	"os"
	"runtime/trace"
	"sync"
	"time"
)

// MaxLosses is the number of losses one recording lists; the losses past
// it count as suppressed.
const MaxLosses = 64

// ErrBusy is returned by Start when another flight recorder runs in the
// process: Go runs one at a time.
var ErrBusy = errors.New("another flight recorder runs in this process (Go runs one at a time)")

// Config is how a Recorder records.
type Config struct {
	Dir      string
	Window   time.Duration // the trace window asked of the runtime (FlightRecorderConfig.MinAge)
	MaxBytes uint64        // its size bound (FlightRecorderConfig.MaxBytes)
	Every    time.Duration // at most one recording begun per Every
	Keep     int           // recordings kept in Dir; older ones are removed
	// Trace, if set, is the program's own runtime flight recorder,
	// running: the Recorder snapshots it and neither starts nor stops it.
	Trace *trace.FlightRecorder
	// Settle is how long a recording waits after the loss that begins
	// it, so that the losses of one moment (every lease of a session)
	// share it.
	Settle time.Duration
}

// Source is a client whose side a recording tells; Report is called in
// the background when the recording is written.
type Source interface {
	Report(now time.Time) Client
}

// Recorder keeps the runtime's flight recorder running and writes a
// recording after a loss. It is safe for concurrent use.
type Recorder struct {
	cfg  Config
	fr   *trace.FlightRecorder
	own  bool // Start started fr; Close stops it
	host string
	pid  int

	writing sync.Mutex // one recording written at a time (WriteTo allows one)
	wg      sync.WaitGroup
	done    chan struct{} // closed by Close: a recording waiting to settle is written at once

	mu         sync.Mutex
	closed     bool
	collecting bool      // a recording is scheduled and takes the losses reported
	losses     []queued  // its losses
	last       time.Time // when the last recording was scheduled
	suppressed int
	lastErr    error
}

type queued struct {
	loss Loss
	src  Source
}

// Start checks that cfg.Dir can be written to (creating it if needed)
// and starts the runtime's flight recorder, unless cfg.Trace is given.
func Start(cfg Config) (*Recorder, error) {
	if cfg.Trace != nil && !cfg.Trace.Enabled() {
		return nil, errors.New("the runtime flight recorder given is not running (call its Start first)")
	}
	if err := os.MkdirAll(cfg.Dir, 0o750); err != nil {
		return nil, err
	}
	f, err := os.CreateTemp(cfg.Dir, tmpPattern)
	if err != nil {
		return nil, err
	}
	f.Close()
	os.Remove(f.Name())
	host, _ := os.Hostname()
	r := &Recorder{cfg: cfg, fr: cfg.Trace, host: host, pid: os.Getpid(), done: make(chan struct{})}
	if r.fr == nil {
		r.fr = trace.NewFlightRecorder(trace.FlightRecorderConfig{MinAge: cfg.Window, MaxBytes: cfg.MaxBytes})
		if err := r.fr.Start(); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrBusy, err)
		}
		r.own = true
	}
	return r, nil
}

// Lost tells the recorder of a lost lease of src. It never blocks: the
// recording is written in the background, Settle later, unless one was
// begun less than Every ago (the loss then counts as suppressed in the
// next one).
func (r *Recorder) Lost(l Loss, src Source) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case r.closed:
		return
	case r.collecting:
	case !r.last.IsZero() && time.Since(r.last) < r.cfg.Every:
		r.suppressed++
		return
	default:
		r.collecting, r.last = true, time.Now()
		r.wg.Add(1)
		go r.record()
	}
	if len(r.losses) >= MaxLosses {
		r.suppressed++
		return
	}
	r.losses = append(r.losses, queued{l, src})
}

// record waits for the losses of the moment, then writes the recording.
func (r *Recorder) record() {
	defer r.wg.Done()
	t := time.NewTimer(r.cfg.Settle)
	select {
	case <-t.C:
	case <-r.done:
		t.Stop()
	}
	r.mu.Lock()
	losses, suppressed := r.losses, r.suppressed
	r.losses, r.suppressed, r.collecting = nil, 0, false
	r.mu.Unlock()
	r.writing.Lock()
	_, err := r.write(losses, suppressed, time.Now())
	r.writing.Unlock()
	r.mu.Lock()
	r.lastErr = err
	r.mu.Unlock()
}

// Err returns the error of the last recording, nil if it was written.
func (r *Recorder) Err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lastErr
}

// Dir returns the directory recordings are written to.
func (r *Recorder) Dir() string { return r.cfg.Dir }

// Close writes a recording under way at once, waits for it, and stops the
// runtime's flight recorder if Start started it. Losses after Close are
// not recorded.
func (r *Recorder) Close() {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return
	}
	r.closed = true
	close(r.done)
	r.mu.Unlock()
	r.wg.Wait()
	if r.own {
		r.fr.Stop()
	}
}
