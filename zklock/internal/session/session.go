package session

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zklockkit/zklockkit/zklock/internal/errs"
	"github.com/zklockkit/zklockkit/zklock/internal/gopool"
	"github.com/zklockkit/zklockkit/zklock/internal/wire"
)

// Nodes is what the session tells the lock nodes it holds (package queue
// implements it). Its methods are called in the order of the session's
// events; Event and Session may run on go-zookeeper's goroutines and must
// not block.
type Nodes interface {
	// Event passes on a watch event of a node: deleted, children
	// changed, data changed.
	Event(ev zk.Event)
	// Session says the client's session is now sid (0 when it expired and
	// no new one exists yet). Nodes of any other session are gone. It is
	// called under the session's lock, so that session changes arrive in
	// order: what must not run under it (telling leases they are lost) it
	// returns as then, which the session runs once the lock is released.
	Session(sid int64) (then func())
	// Closing says the client is closing: its nodes go with the session.
	Closing()
	// Unverified says the session can no longer be proven alive: held
	// locks must be given up now (see Session.LossDeadline).
	Unverified()
	// Busy reports whether there are lock nodes or creates in flight,
	// which the session then keeps proven (see prover).
	Busy() bool
}

// Conn is a change of the session's connection that the client reports.
type Conn int

// Connection changes reported to Config.OnConn.
const (
	ConnLost    Conn = iota + 1 // the connection was lost; the session may come back
	ConnResumed                 // reconnected to the same session in time
)

// Auth is authentication sent on every connect.
type Auth struct {
	Scheme string
	Auth   []byte
}

// Config is how a Session connects.
type Config struct {
	Servers        []string
	SessionTimeout time.Duration // asked of ZooKeeper
	LossMargin     time.Duration // 0: a quarter of the negotiated timeout
	Dialer         zk.Dialer
	// Hosts, if set, is how go-zookeeper picks the next server (its
	// default resolves names once, at Connect).
	Hosts  zk.HostProvider
	Auth   []Auth
	Logger *slog.Logger
	// OnConn, if set, is told of lost connections and resumptions, on a
	// goroutine of its own.
	OnConn func(c Conn, sid int64)
	// OnStatus, if set, is told of each change of the session's status
	// (see State), in order, on the goroutine that keeps it: it must not
	// block.
	OnStatus func(st Status, sid int64)
	// History, if set, keeps the recent past of the session's
	// connections (wire.History), and the session notes its own
	// transitions in it.
	History *wire.History
}

// Session is one ZooKeeper session. It is safe for concurrent use.
type Session struct {
	cfg    Config
	conn   *zk.Conn
	pool   *gopool.Pool // the goroutines of Spawn
	wire   *wire.Tracker
	log    *slog.Logger
	nodes  Nodes
	quorum quorum // proof that the leader, not only our server, heard from us

	bg       context.Context // cancelled by Close; background work uses it
	bgCancel context.CancelFunc
	wg       sync.WaitGroup
	wake     chan struct{} // nudges the loss watchdog
	proveNow chan struct{} // nudges the prover
	idle     atomic.Bool   // the watchdog sleeps until nudged
	state    stateWatch    // the status State publishes

	mu        sync.Mutex
	sid       int64
	ready     bool          // connected with a live session
	readyCh   chan struct{} // closed when ready becomes true
	downCh    chan struct{} // closed when ready becomes false
	suspended bool
	expired   bool // ZooKeeper expired sid; no new session yet
	closed    bool
	closeCh   chan struct{}
	// passed: statuses the session went through since watchState last
	// looked, so that it reports a brief one (an expiry followed at once
	// by a new session) too
	passed []Status
}

// New returns a Session that is not connected yet (see Connect).
func New(cfg Config) *Session {
	s := &Session{
		cfg:      cfg,
		wire:     wire.NewTracker(),
		log:      cfg.Logger,
		wake:     make(chan struct{}, 1),
		proveNow: make(chan struct{}, 1),
		readyCh:  make(chan struct{}),
		downCh:   make(chan struct{}),
		closeCh:  make(chan struct{}),
		pool:     gopool.New(poolIdle),
	}
	if cfg.History != nil {
		s.wire.Record(cfg.History)
	}
	s.wire.OnCommit(ProofInterval, s.committed)
	s.state.kick = make(chan struct{}, 1)
	s.state.cur.Store(&published{status: Suspended, changed: make(chan struct{})})
	s.bg, s.bgCancel = context.WithCancel(context.Background())
	return s
}

// Connect opens the session, with nodes told of its events, and waits
// until it is established. If ctx has no deadline, it gives up after
// twice the session timeout. An unreachable ensemble is an error matching
// errs.ErrUnavailable and the context's error; a refused authentication
// matches errs.ErrNoAuth. A Session is connected once.
func (s *Session) Connect(ctx context.Context, nodes Nodes) error {
	s.nodes = nodes
	cfg, tr := s.cfg, s.wire
	var lastDialErr atomic.Pointer[error] // errors of different types: not an atomic.Value
	dial := func(network, addr string, timeout time.Duration) (net.Conn, error) {
		nc, err := cfg.Dialer(network, addr, timeout)
		if err != nil {
			lastDialErr.Store(&err)
			return nil, err
		}
		return tr.Dial(nc), nil
	}
	hosts := cfg.Hosts
	if hosts == nil {
		hosts = &zk.DNSHostProvider{} // go-zookeeper's default
	}
	conn, _, err := zk.Connect(cfg.Servers, cfg.SessionTimeout, zk.WithDialer(dial), zk.WithHostProvider(hosts),
		zk.WithEventCallback(s.onEvent), zk.WithLogger(zkLogger{cfg.Logger}), zk.WithLogInfo(false))
	if err != nil {
		return fmt.Errorf("%w: %w", errs.ErrInvalidOption, err)
	}
	s.conn = conn
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, 2*cfg.SessionTimeout)
		defer cancel()
	}
	if _, err := s.Wait(ctx); err != nil {
		s.abort()
		if e := lastDialErr.Load(); e != nil {
			return errs.Errorf("connect %v: %w (last dial error: %v)", cfg.Servers, err, *e)
		}
		return errs.Errorf("connect %v: %w", cfg.Servers, err)
	}
	for _, a := range cfg.Auth {
		if _, err := Call(ctx, func() (struct{}, error) { return struct{}{}, conn.AddAuth(a.Scheme, a.Auth) }); err != nil {
			s.abort()
			if errors.Is(err, zk.ErrAuthFailed) || errors.Is(err, zk.ErrNoAuth) {
				return fmt.Errorf("%w: %s authentication failed: %v", errs.ErrNoAuth, a.Scheme, err)
			}
			return errs.Errorf("connect %v: adding %s auth: %w", cfg.Servers, a.Scheme, errs.Map(err))
		}
	}
	st, _ := s.status()
	s.publishQuietly(st) // established: State says so from now on; the first state is no change

	s.wg.Add(3)
	go s.watchdog()
	go s.prover()
	go s.watchState()
	return nil
}

// abort ends a Session whose Connect failed. go-zookeeper's Close waits up
// to a second after a failed handshake with a silent server: it runs in the
// background, so that Connect returns at its context's end.
func (s *Session) abort() {
	s.mu.Lock()
	s.closed = true
	close(s.closeCh)
	s.mu.Unlock()
	s.nodes.Closing()
	s.bgCancel()
	go s.conn.Close()
	s.publishClosed()
}

// Close ends the session: the nodes are told first (Nodes.Closing), then
// background work is cancelled, the connection closed (ZooKeeper deletes
// the session's ephemeral nodes), and Close waits for the background
// work. It reports whether this call closed it.
func (s *Session) Close() bool {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return false
	}
	s.closed = true
	close(s.closeCh)
	s.mu.Unlock()
	s.nodes.Closing()
	s.bgCancel()
	s.conn.Close()
	s.wg.Wait()
	s.pool.Close()
	s.publishClosed()
	return true
}

// poolIdle is how many goroutines of Spawn a session keeps parked: an
// acquire and release at a time uses three in turn (a step, a create's
// pipelined listing, a delete batch), at most two at once.
const poolIdle = 4

// Spawn runs fn on a goroutine of the session's pool (see package gopool):
// short work that must not run on its caller's goroutine. Unlike Go, it
// takes no context, Close does not wait for fn, and fn runs after Close
// too.
func (s *Session) Spawn(fn func()) { s.pool.Go(fn) }

// Conn returns the go-zookeeper connection.
func (s *Session) Conn() *zk.Conn { return s.conn }

// Wire returns what the wire tells of the session and of creates.
func (s *Session) Wire() *wire.Tracker { return s.wire }

// ID returns the current session id (0 before the first session).
func (s *Session) ID() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sid
}

// Current returns the current session id and whether it is usable:
// connected, and not closed.
func (s *Session) Current() (sid int64, ready bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sid, s.ready && !s.closed
}

// Closed reports whether Close (or a failed Connect) ended the session.
func (s *Session) Closed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// Done returns a channel closed by Close.
func (s *Session) Done() <-chan struct{} { return s.closeCh }

// Epoch returns the current connection epoch: a channel closed when the
// client next loses its connection (or now, if it has none).
func (s *Session) Epoch() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.downCh
}

// Wait waits until the client is connected with a live session and
// returns the session id. It fails with errs.ErrClosed once closed, and
// with the context's error (matching errs.ErrUnavailable) when ctx ends.
func (s *Session) Wait(ctx context.Context) (int64, error) {
	for {
		if err := ctx.Err(); err != nil {
			return 0, errs.CtxErr(ctx)
		}
		s.mu.Lock()
		closed, ready, sid, ch := s.closed, s.ready, s.sid, s.readyCh
		s.mu.Unlock()
		switch {
		case closed:
			return 0, errs.ErrClosed
		case ready:
			return sid, nil
		}
		select {
		case <-ch:
		case <-s.closeCh:
		case <-ctx.Done():
			if err := errs.CtxErr(ctx); errors.Is(err, errs.ErrUnavailable) {
				return 0, err // a try's bound: says so already
			}
			return 0, fmt.Errorf("%w: %w", errs.ErrUnavailable, errs.CtxErr(ctx))
		}
	}
}

// Go runs f on a goroutine that Close waits for; f's context is cancelled
// by Close. After Close it runs nothing.
func (s *Session) Go(f func(ctx context.Context)) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.wg.Add(1)
	s.mu.Unlock()
	go func() {
		defer s.wg.Done()
		f(s.bg)
	}()
}

// onEvent is go-zookeeper's event callback. It runs on go-zookeeper's
// goroutines (sometimes under its locks): it must not block or call back
// into the connection.
func (s *Session) onEvent(ev zk.Event) {
	switch ev.Type {
	case zk.EventSession:
		s.onSessionEvent(ev.State)
	case zk.EventNodeDeleted, zk.EventNodeChildrenChanged, zk.EventNodeDataChanged:
		s.nodes.Event(ev)
	}
}

func (s *Session) onSessionEvent(state zk.State) {
	var notify Conn
	var then func()
	s.mu.Lock()
	switch state {
	case zk.StateHasSession:
		sid := s.wire.SessionID()
		switch {
		case s.suspended && sid == s.sid:
			notify = ConnResumed
			s.note("session resumed", sid)
		case sid != s.sid:
			s.note("new session", sid)
		}
		s.sid = sid
		s.suspended = false
		s.expired = false
		if !s.ready {
			s.ready = true
			close(s.readyCh)
			s.downCh = make(chan struct{})
		}
		// Under mu, so that the nodes learn of session changes in order.
		then = s.nodes.Session(sid)
	case zk.StateDisconnected, zk.StateConnecting:
		if s.ready {
			s.ready = false
			s.suspended = true
			s.readyCh = make(chan struct{})
			close(s.downCh)
			notify = ConnLost
			s.passed = append(s.passed, Suspended)
			s.note("disconnected", s.sid)
		}
	case zk.StateExpired:
		if s.ready {
			s.ready = false
			s.readyCh = make(chan struct{})
			close(s.downCh)
		}
		s.expired = true
		s.passed = append(s.passed, Expired)
		s.note("session expired", s.sid)
		then = s.nodes.Session(0)
		s.log.Warn("zklock: session expired", "session", fmt.Sprintf("%#x", s.sid))
	case zk.StateAuthFailed:
		s.log.Error("zklock: authentication failed")
		s.note("authentication failed", s.sid)
	}
	sid := s.sid
	s.mu.Unlock()
	if then != nil {
		then()
	}
	s.nudgeState()
	if notify != 0 && s.cfg.OnConn != nil {
		go s.cfg.OnConn(notify, sid)
	}
	if notify == ConnLost {
		s.log.Warn("zklock: connection to ZooKeeper lost; leases suspended", "session", fmt.Sprintf("%#x", sid))
	}
	s.Kick()
}

// note records a moment of the session in the History, if there is one.
func (s *Session) note(what string, sid int64) {
	if h := s.cfg.History; h != nil {
		h.Note(what, sid)
	}
}

type zkLogger struct{ l *slog.Logger }

func (z zkLogger) Printf(format string, args ...any) {
	z.l.Debug("zookeeper: " + fmt.Sprintf(format, args...))
}
