package zklock

import (
	"errors"
	"fmt"
	"runtime/trace"
	"time"

	"github.com/zklockkit/zklockkit/zklock/internal/flight"
	"github.com/zklockkit/zklockkit/zklock/internal/wire"
)

// Defaults of a FlightRecorder.
const (
	// DefaultFlightWindow is the trace window asked of Go's runtime:
	// twice DefaultSessionTimeout, so that a recording reaches back past
	// the last answer ZooKeeper gave before a loss.
	DefaultFlightWindow = 2 * DefaultSessionTimeout
	// DefaultFlightMaxBytes bounds the window's size; it takes precedence
	// over the window's length (a busy process keeps fewer seconds).
	DefaultFlightMaxBytes = 16 << 20
	// DefaultFlightEvery is the rate limit: at most one recording begun
	// a minute.
	DefaultFlightEvery = time.Minute
	// DefaultFlightKeep is the number of recordings kept in the directory.
	DefaultFlightKeep = 10
)

// flightSettle is how long a recording waits after the loss that begins
// it, so that the losses of one moment (every lease of a session) share
// it.
const flightSettle = 250 * time.Millisecond

// ErrFlightRecorderBusy is returned by NewFlightRecorder when another
// flight recorder already runs in the process: Go runs one
// runtime/trace.FlightRecorder at a time. Share one FlightRecorder among
// Clients, or give the program's own to FlightTrace.
var ErrFlightRecorderBusy = flight.ErrBusy

// FlightRecorder keeps the last seconds of the process's execution trace
// in memory (Go's runtime/trace.FlightRecorder) and, each time a lease of
// a Client given it (WithFlightRecorder) is lost, writes a recording to
// its directory: the trace window, which `go tool trace` opens, and a JSON
// document (NAME.json beside NAME.trace) with the lost leases (resource,
// mode, token, nodes, reason) and, for each Client involved, its recent
// wire history: pings and syncs with their round trips, the other
// requests, the connections and the session's transitions, when it last
// heard from ZooKeeper and when it would give its leases up. Together they
// answer a post-mortem's questions: what the process was doing, whether
// the garbage collector or the scheduler stopped it, what the round trips
// were and when ZooKeeper last answered.
//
// A loss is told to the lease's holder first (its Done channel, its
// contexts); the recording is written in the background, 250 ms after the
// loss so that every lease lost at that moment shares it. Recordings are
// rate-limited (FlightEvery, default one a minute; the losses in between
// are counted in the next one as suppressed) and the oldest are removed
// past FlightKeep (default 10). A loss of LossClientClosed is not
// recorded.
//
// Go runs one runtime flight recorder per process: share one
// FlightRecorder among every Client of the process. While one runs,
// NewFlightRecorder fails with ErrFlightRecorderBusy; a program that runs
// its own runtime/trace.FlightRecorder gives it with FlightTrace, and the
// FlightRecorder snapshots that one. Close stops it.
//
// docs/operations.md says what a recording holds and what it costs.
type FlightRecorder struct {
	r *flight.Recorder
}

// flightConfig is what FlightOptions set.
type flightConfig struct {
	flight.Config
	err error
}

// FlightOption configures a FlightRecorder.
type FlightOption func(*flightConfig)

// FlightWindow sets how far back the trace window reaches (default
// DefaultFlightWindow); FlightMaxBytes may cut it shorter. Make it longer
// than the session timeout, so that it covers the last answer from
// ZooKeeper before a loss.
func FlightWindow(d time.Duration) FlightOption {
	return func(c *flightConfig) {
		if d <= 0 {
			c.setErr(fmt.Errorf("%w: flight window %v must be positive", ErrInvalidOption, d))
			return
		}
		c.Window = d
	}
}

// FlightMaxBytes bounds the size of the trace window kept in memory
// (default DefaultFlightMaxBytes). Go's runtime takes it as a hint.
func FlightMaxBytes(n uint64) FlightOption {
	return func(c *flightConfig) {
		if n == 0 {
			c.setErr(fmt.Errorf("%w: flight max bytes must be positive", ErrInvalidOption))
			return
		}
		c.MaxBytes = n
	}
}

// FlightEvery sets the rate limit: at most one recording begun per d
// (default DefaultFlightEvery). 0 records every loss, one recording at a
// time.
func FlightEvery(d time.Duration) FlightOption {
	return func(c *flightConfig) {
		if d < 0 {
			c.setErr(fmt.Errorf("%w: negative flight rate limit %v", ErrInvalidOption, d))
			return
		}
		c.Every = d
	}
}

// FlightKeep sets how many recordings the directory keeps (default
// DefaultFlightKeep); after each recording the oldest past n are removed.
func FlightKeep(n int) FlightOption {
	return func(c *flightConfig) {
		if n < 1 {
			c.setErr(fmt.Errorf("%w: flight keep %d must be at least 1", ErrInvalidOption, n))
			return
		}
		c.Keep = n
	}
}

// FlightTrace gives the FlightRecorder the program's own runtime flight
// recorder, already started: it snapshots that one (its window and size)
// and neither starts nor stops it. FlightWindow and FlightMaxBytes then do
// nothing.
func FlightTrace(fr *trace.FlightRecorder) FlightOption {
	return func(c *flightConfig) {
		if fr == nil {
			c.setErr(fmt.Errorf("%w: nil runtime flight recorder", ErrInvalidOption))
			return
		}
		c.Trace = fr
	}
}

func (c *flightConfig) setErr(err error) {
	if c.err == nil {
		c.err = err
	}
}

// NewFlightRecorder starts a FlightRecorder that writes its recordings to
// dir, creating dir if needed. It fails with ErrInvalidOption when an
// option is invalid or dir cannot be written to, and with
// ErrFlightRecorderBusy when a flight recorder already runs in the
// process.
func NewFlightRecorder(dir string, opts ...FlightOption) (*FlightRecorder, error) {
	cfg := flightConfig{Config: flight.Config{Dir: dir, Window: DefaultFlightWindow, MaxBytes: DefaultFlightMaxBytes,
		Every: DefaultFlightEvery, Keep: DefaultFlightKeep, Settle: flightSettle}}
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	if cfg.err != nil {
		return nil, cfg.err
	}
	if dir == "" {
		return nil, fmt.Errorf("%w: empty flight recorder directory", ErrInvalidOption)
	}
	r, err := flight.Start(cfg.Config)
	switch {
	case err == nil:
		return &FlightRecorder{r: r}, nil
	case errors.Is(err, flight.ErrBusy):
		return nil, err
	}
	return nil, fmt.Errorf("%w: flight recorder directory %q: %w", ErrInvalidOption, dir, err)
}

// Close writes a recording under way at once and waits for it, then stops
// the runtime flight recorder (unless it was given with FlightTrace).
// Losses after Close are not recorded. A program that exits on a loss
// should Close its FlightRecorder first, or the loss's recording may not
// be written.
func (r *FlightRecorder) Close() error {
	r.r.Close()
	return nil
}

// Dir returns the directory the recordings are written to.
func (r *FlightRecorder) Dir() string { return r.r.Dir() }

// Err returns why the last recording could not be written, or nil. A
// recording whose trace could not be taken is still written, and says
// why in its JSON (trace_error).
func (r *FlightRecorder) Err() error { return r.r.Err() }

// Recording is one recording in a FlightRecorder's directory.
type Recording struct {
	Name  string    // the files are Name.json and Name.trace
	Time  time.Time // when it was written
	JSON  string    // the path of its JSON document
	Trace string    // the path of its trace window; "" when it has none
}

// Recordings lists the recordings in the directory, newest first.
func (r *FlightRecorder) Recordings() ([]Recording, error) {
	es, err := flight.List(r.r.Dir())
	if err != nil {
		return nil, err
	}
	rs := make([]Recording, len(es))
	for i, e := range es {
		rs[i] = Recording(e)
	}
	return rs, nil
}

// WithFlightRecorder makes the Client tell r of each lease it loses, and
// keeps the Client's recent wire history, in bounded rings
// (docs/operations.md gives their size), for r's recordings. Several
// Clients may share r.
func WithFlightRecorder(r *FlightRecorder) Option {
	return func(c *clientConfig) {
		if r == nil {
			c.setErr(fmt.Errorf("%w: nil flight recorder", ErrInvalidOption))
			return
		}
		c.flight = r
	}
}

// flightSource is a Client as its FlightRecorder sees it.
type flightSource struct {
	c    *Client
	hist *wire.History
}

// Report says what the client knows of its session, and its wire history
// (flight.Source).
func (s *flightSource) Report(now time.Time) flight.Client {
	anchor, timeout := s.c.sess.Wire().Snapshot()
	return flight.Report(s.hist.Snapshot(), flight.Session{ID: s.c.sess.ID(), State: s.c.sess.Published().String(),
		Timeout: timeout, Anchor: anchor, LossDeadline: s.c.sess.LossDeadline()}, now)
}

// recordLoss tells the Client's FlightRecorder, if it has one, of a
// lease it lost. It does not block.
func (c *Client) recordLoss(st *leaseState, reason LossReason, err error) {
	if c.flightSrc == nil || reason == LossClientClosed {
		return
	}
	now := time.Now()
	l := flight.Loss{Time: now, Resource: st.resource, Mode: st.mode.String(), Reason: reason.String(), Error: err.Error()}
	st.mu.Lock()
	l.Acquired, l.HeldSeconds = st.acquired, now.Sub(st.acquired).Seconds()
	for _, h := range st.holds {
		l.Nodes = append(l.Nodes, flight.Node{Resource: h.resource, Path: h.path, Token: h.token, Session: flight.SessionText(h.sessionID)})
		l.Token = max(l.Token, h.token)
	}
	st.mu.Unlock()
	c.cfg.flight.r.Lost(l, c.flightSrc)
}
