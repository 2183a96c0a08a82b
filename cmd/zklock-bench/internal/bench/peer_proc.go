package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/zklockkit/zklockkit/internal/procspawn"
)

// peerProc is a running peer process. It reads one command a line on its
// stdin and answers with JSON lines (peerReply) on its stdout; see
// testdata/peers/CuratorBench.java for the protocol. It is used by one
// goroutine at a time.
type peerProc struct {
	peer    Peer
	dir     string
	stdin   io.WriteCloser
	lines   chan string   // stdout, closed at its end
	exited  chan struct{} // closed when the process has exited
	stderr  *peerTail
	kill    func()
	ready   peerReply
	timeout time.Duration // PeerRunTimeout, shorter in tests
	broken  error         // set when the protocol is out of step: the process must go
}

// peerReply is one JSON line of a peer.
type peerReply struct {
	Event   string `json:"event"` // ready, holding, result or error
	Peer    string `json:"peer"`
	Version string `json:"version"`
	Runtime string `json:"runtime"`
	Error   string `json:"error"`
	Ops     int    `json:"ops"`
	Elapsed int64  `json:"elapsed_ns"`
	P50     int64  `json:"p50_ns"`
	P90     int64  `json:"p90_ns"`
	P99     int64  `json:"p99_ns"`
	Max     int64  `json:"max_ns"`
}

// startPeerProc starts p's process (compiling it first if need be) and
// waits for its ready line, within PeerStartTimeout.
func startPeerProc(ctx context.Context, p Peer, sessionTimeout time.Duration) (*peerProc, error) {
	if err := p.Installed(); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, PeerStartTimeout)
	defer cancel()
	dir, err := os.MkdirTemp("", "zklock-bench-"+p.name+"-")
	if err != nil {
		return nil, err
	}
	fail := func(err error) (*peerProc, error) {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("%w: %s: %v", ErrPeer, p.name, err)
	}
	cmd, err := p.command(ctx, dir, sessionTimeout)
	if err != nil {
		return fail(err)
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return fail(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return fail(err)
	}
	tail := &peerTail{}
	cmd.Stderr = tail
	if err := procspawn.Start(cmd, syscall.SIGKILL); err != nil {
		return fail(err)
	}
	pp := &peerProc{peer: p, dir: dir, stdin: stdin, lines: make(chan string, 4), exited: make(chan struct{}),
		stderr: tail, timeout: PeerRunTimeout}
	var once sync.Once
	pp.kill = func() { once.Do(func() { _ = cmd.Process.Kill() }) }
	go func() {
		s := bufio.NewScanner(stdout)
		s.Buffer(make([]byte, 64<<10), 1<<20)
		for s.Scan() {
			pp.lines <- s.Text()
		}
		close(pp.lines)
		_ = cmd.Wait()
		close(pp.exited)
	}()
	r, err := pp.next(ctx)
	if err == nil && r.Event != "ready" {
		err = fmt.Errorf("first line %+v, want a ready event", r)
	}
	if err != nil {
		pp.close()
		return nil, fmt.Errorf("%w: %s: starting: %v", ErrPeer, p.name, err)
	}
	if r.Version == "" {
		r.Version = p.version()
	}
	pp.ready = r
	return pp, nil
}

// send writes one command line.
func (pp *peerProc) send(line string) error {
	if pp.broken != nil {
		return pp.broken
	}
	if _, err := io.WriteString(pp.stdin, line+"\n"); err != nil {
		return pp.breakOff(fmt.Errorf("writing %q: %v", line, err))
	}
	return nil
}

// call sends line (unless empty) and waits, within the run's context, for
// a reply whose event is want. An error event is returned as an error and
// leaves the process in step; anything else unexpected breaks it off.
func (pp *peerProc) call(ctx context.Context, line, want string) (peerReply, error) {
	if line != "" {
		if err := pp.send(line); err != nil {
			return peerReply{}, err
		}
	}
	r, err := pp.next(ctx)
	if err != nil {
		return peerReply{}, pp.breakOff(err)
	}
	switch r.Event {
	case want:
		return r, nil
	case "error":
		return peerReply{}, fmt.Errorf("%w: %s: %s", ErrPeer, pp.peer.name, r.Error)
	}
	return peerReply{}, pp.breakOff(fmt.Errorf("answered %+v, want a %s event", r, want))
}

// next reads the next JSON line.
func (pp *peerProc) next(ctx context.Context) (peerReply, error) {
	select {
	case l, ok := <-pp.lines:
		if !ok {
			<-pp.exited
			return peerReply{}, fmt.Errorf("exited; its last output: %s", pp.stderr.last())
		}
		var r peerReply
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			return peerReply{}, fmt.Errorf("said %q: %v", l, err)
		}
		return r, nil
	case <-ctx.Done():
		return peerReply{}, context.Cause(ctx)
	}
}

// breakOff marks the process as out of step and kills it; the error
// returned wraps ErrPeer, or is the context's when the caller's ended.
func (pp *peerProc) breakOff(err error) error {
	if pp.broken == nil {
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			pp.broken = err
		} else {
			pp.broken = fmt.Errorf("%w: %s: %v", ErrPeer, pp.peer.name, err)
		}
		pp.kill()
	}
	return pp.broken
}

// runContext bounds one run by pp.timeout and ends it early when the
// process exits.
func (pp *peerProc) runContext(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithTimeoutCause(ctx, pp.timeout,
		fmt.Errorf("no answer within %v", pp.timeout))
	ctx, cancelExit := context.WithCancelCause(ctx)
	stop := make(chan struct{})
	go func() {
		select {
		case <-pp.exited:
			cancelExit(fmt.Errorf("exited; its last output: %s", pp.stderr.last()))
		case <-stop:
		}
	}()
	return ctx, func() { close(stop); cancelExit(nil); cancel() }
}

// close ends the process (EOF on its stdin, then a kill after 5 s) and
// removes its directory.
func (pp *peerProc) close() {
	_ = pp.stdin.Close()
	grace := time.NewTimer(5 * time.Second)
	defer grace.Stop()
	for {
		select {
		case _, ok := <-pp.lines:
			if !ok {
				<-pp.exited
				_ = os.RemoveAll(pp.dir)
				return
			}
		case <-grace.C:
			pp.kill()
		}
	}
}

// peerTail keeps the end of a peer's stderr for error messages.
type peerTail struct {
	mu  sync.Mutex
	buf []byte
}

const peerTailBytes = 4 << 10

func (t *peerTail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - peerTailBytes; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

func (t *peerTail) last() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := strings.TrimSpace(string(t.buf))
	if s == "" {
		return "(none)"
	}
	return s
}
