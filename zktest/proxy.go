package zktest

import (
	"bytes"
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Proxy is a TCP proxy that injects faults between a client and a server.
// Point the client at Addr; each accepted connection is forwarded to the
// current target. All methods are safe for concurrent use.
type Proxy struct {
	ln     net.Listener
	reject atomic.Bool
	delay  atomic.Int64 // time.Duration
	wg     sync.WaitGroup

	mu     sync.Mutex
	target string
	open   chan struct{} // closed while traffic flows; open while blackholed
	conns  map[*proxyConn]struct{}
	closed bool
	losses []*replyLoss // armed LoseReply calls, oldest first

	// rewrite, if set, rewrites the first message a client sends on each
	// connection (see linkrewrite.go); set before the proxy is used.
	rewrite func([]byte) (out []byte, complete bool)
}

// proxyConn is one proxied client connection and its server connection.
type proxyConn struct {
	client, server net.Conn
	done           chan struct{}
	once           sync.Once
}

func (c *proxyConn) close() {
	c.once.Do(func() {
		close(c.done)
		c.client.Close()
		c.server.Close()
	})
}

type chunk struct {
	data []byte
	due  time.Time // forward no earlier than this
}

// NewProxy starts a proxy listening on 127.0.0.1:0 that forwards to target.
func NewProxy(target string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	open := make(chan struct{})
	close(open)
	p := &Proxy{ln: ln, target: target, open: open, conns: map[*proxyConn]struct{}{}}
	p.wg.Add(1)
	go p.serve()
	return p, nil
}

// Addr returns the address clients should connect to.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// SetTarget makes connections accepted from now on go to addr; current
// connections keep their server.
func (p *Proxy) SetTarget(addr string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.target = addr
}

// Blackhole, while on, forwards nothing in either direction: connections
// stay open and new ones are accepted, but bytes (and closes) are held, so
// peers see silence and their read deadlines fire. When turned off, held
// bytes are delivered in order, as after a healed network partition.
func (p *Proxy) Blackhole(on bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.open: // flowing
		if on {
			p.open = make(chan struct{})
		}
	default: // blackholed
		if !on {
			close(p.open)
		}
	}
}

// DropAll closes every current connection, both the client and the server
// side, at once.
func (p *Proxy) DropAll() {
	p.mu.Lock()
	conns := p.conns
	p.conns = map[*proxyConn]struct{}{}
	p.mu.Unlock()
	for c := range conns {
		c.close()
	}
}

// RejectNew, while on, accepts new connections and closes them at once.
func (p *Proxy) RejectNew(on bool) { p.reject.Store(on) }

// SetDelay delays each forwarded chunk by d in both directions, keeping
// the order of bytes. Zero turns the delay off.
func (p *Proxy) SetDelay(d time.Duration) { p.delay.Store(int64(d)) }

// Conns returns the number of open proxied connections.
func (p *Proxy) Conns() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.conns)
}

// Close stops listening, closes all connections and waits for the proxy's
// goroutines to end.
func (p *Proxy) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	p.mu.Unlock()
	err := p.ln.Close()
	p.DropAll()
	p.wg.Wait()
	return err
}

func (p *Proxy) serve() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if errors.Is(err, net.ErrClosed) {
			return
		}
		if err != nil {
			time.Sleep(10 * time.Millisecond)
			continue
		}
		if p.reject.Load() {
			c.Close()
			continue
		}
		p.wg.Add(1)
		go p.handle(c)
	}
}

func (p *Proxy) handle(client net.Conn) {
	defer p.wg.Done()
	p.mu.Lock()
	target, rewrite := p.target, p.rewrite
	p.mu.Unlock()
	server, err := net.DialTimeout("tcp", target, 5*time.Second)
	if err != nil {
		client.Close()
		return
	}
	if rewrite != nil {
		client = &rewritingConn{Conn: client, rewrite: rewrite}
	}
	c := &proxyConn{client: client, server: server, done: make(chan struct{})}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		c.close()
		return
	}
	p.conns[c] = struct{}{}
	p.mu.Unlock()

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); p.pipe(c, client, server, p.requests(c)) }()
	go func() { defer wg.Done(); p.pipe(c, server, client, p.replies(c)) }()
	wg.Wait()
	c.close()
	p.connEnded(c)
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
}

// pipe forwards src to dst until src ends. A reader queues chunks so that
// delays apply per chunk without reordering. EOF is passed on as a
// half-close; any other failure closes the whole connection. Before a
// chunk is forwarded, cut may end the connection at an offset in it.
func (p *Proxy) pipe(c *proxyConn, src, dst net.Conn, cut func([]byte) (int, bool)) {
	q := make(chan chunk, 64)
	var readErr error
	go func() {
		defer close(q)
		buf := make([]byte, 32<<10)
		for {
			n, err := src.Read(buf)
			if n > 0 {
				q <- chunk{bytes.Clone(buf[:n]), time.Now().Add(time.Duration(p.delay.Load()))}
			}
			if err != nil {
				readErr = err
				return
			}
		}
	}()
	failed := false
	for ch := range q { // keep draining after a failure so the reader ends
		if failed {
			continue
		}
		if !c.sleepUntil(ch.due) || !p.waitFlowing(c) {
			failed = true
			continue
		}
		data := ch.data
		at, lose := cut(data)
		if lose {
			data = data[:at]
		}
		if _, err := dst.Write(data); err != nil || lose {
			failed = true
			c.close()
		}
	}
	if failed || !p.waitFlowing(c) {
		c.close()
		return
	}
	if tc, ok := dst.(*net.TCPConn); ok && errors.Is(readErr, io.EOF) {
		_ = tc.CloseWrite()
		return
	}
	c.close()
}

// requests follows the request headers a client sends on c.
func (p *Proxy) requests(c *proxyConn) func([]byte) (int, bool) {
	s := &frameScanner{hdrLen: 8}
	return func(data []byte) (int, bool) {
		return s.scan(data, func(xid int32, op Op) bool {
			p.sawRequest(c, xid, op)
			return false
		})
	}
}

// replies finds, in the server's replies on c, one that LoseReply targets.
func (p *Proxy) replies(c *proxyConn) func([]byte) (int, bool) {
	s := &frameScanner{hdrLen: 4}
	return func(data []byte) (int, bool) {
		return s.scan(data, func(xid int32, _ Op) bool { return p.loseReply(c, xid) })
	}
}

// waitFlowing waits while the proxy is blackholed; false if c was closed.
func (p *Proxy) waitFlowing(c *proxyConn) bool {
	p.mu.Lock()
	open := p.open
	p.mu.Unlock()
	select {
	case <-open:
		return true
	case <-c.done:
		return false
	}
}

// sleepUntil waits until t; false if c was closed first.
func (c *proxyConn) sleepUntil(t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return true
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-c.done:
		return false
	}
}
