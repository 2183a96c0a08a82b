package zktest

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/zklockkit/zklockkit/internal/procspawn"
)

const (
	readyTimeout = 30 * time.Second
	stopTimeout  = 5 * time.Second
	logTailLines = 40
)

// Server is one ZooKeeper server process (a JVM) listening on 127.0.0.1.
// It keeps its port and data directory across Stop/Kill and Start.
type Server struct {
	cfg    config
	dir    string
	ownDir bool
	port   int
	tail   tailBuffer

	mu     sync.Mutex
	proc   *process // latest JVM; nil before the first launch
	closed bool
}

type process struct {
	cmd    *exec.Cmd
	done   chan struct{} // closed once the JVM has exited and been reaped
	paused atomic.Bool
}

// StartServer starts a standalone server on a free 127.0.0.1 port and waits
// up to 30s until it answers ruok with imok and serves requests.
func StartServer(opts ...Option) (*Server, error) {
	if err := Installed(); err != nil {
		return nil, err
	}
	cfg := newConfig(opts)
	dir, own, err := makeDir(cfg.dir, "zktest-server-")
	if err != nil {
		return nil, err
	}
	ports, err := freePorts(1)
	if err == nil {
		var s *Server
		if s, err = newServer(cfg, dir, own, ports[0], ""); err == nil {
			if err = s.Start(); err == nil {
				return s, nil
			}
			return nil, errors.Join(err, s.Close())
		}
	}
	if own {
		os.RemoveAll(dir)
	}
	return nil, err
}

// makeDir returns dir (created if needed) or, if dir is "", a new
// temporary directory; own reports whether it was made here.
func makeDir(dir, pattern string) (abs string, own bool, err error) {
	if dir == "" {
		dir, err = os.MkdirTemp("", pattern)
		own = true
	} else {
		err = os.MkdirAll(dir, 0o755)
	}
	if err != nil {
		return "", false, err
	}
	abs, err = filepath.Abs(dir)
	return abs, own, err
}

// freePorts returns n distinct ports that were free on 127.0.0.1. They are
// taken below the kernel's ephemeral range when it can be read: a server's
// port is free while Stop has it down, and no listener on port 0, no
// proxy and no outgoing connection of any process may take it meanwhile,
// which an ephemeral port would allow.
func freePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	lo, hi := fixedPortRange()
	for range n {
		l, err := listenFixed(lo, hi)
		if err != nil {
			l, err = net.Listen("tcp", "127.0.0.1:0")
		}
		if err != nil {
			return nil, err
		}
		defer l.Close() // hold all until done so ports are distinct
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// fixedPortRange returns the ports freePorts picks from: up to 12,000 ports
// just below the ephemeral range (Linux: ip_local_port_range), not below
// 10,000; hi is 0 when the range is unknown.
func fixedPortRange() (lo, hi int) {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 0, 0
	}
	f := strings.Fields(string(b))
	if len(f) != 2 {
		return 0, 0
	}
	start, err := strconv.Atoi(f[0])
	if err != nil || start <= 10000 {
		return 0, 0
	}
	return max(10000, start-12000), start
}

// listenFixed listens on a random free port in [lo, hi).
func listenFixed(lo, hi int) (net.Listener, error) {
	if hi <= lo {
		return nil, errors.New("zktest: no fixed port range")
	}
	var err error
	for range 50 {
		var l net.Listener
		if l, err = net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(lo+rand.IntN(hi-lo))); err == nil {
			return l, nil
		}
	}
	return nil, err
}

// newServer writes zoo.cfg; extra holds ensemble lines.
func newServer(cfg config, dir string, own bool, port int, extra string) (*Server, error) {
	s := &Server{cfg: cfg, dir: dir, ownDir: own, port: port}
	var b strings.Builder
	fmt.Fprintf(&b, "dataDir=%s\n", dir)
	fmt.Fprintf(&b, "clientPort=%d\n", port)
	b.WriteString("clientPortAddress=127.0.0.1\n")
	b.WriteString("maxClientCnxns=0\n")
	b.WriteString("admin.enableServer=false\n")
	b.WriteString("4lw.commands.whitelist=*\n")
	fmt.Fprintf(&b, "tickTime=%d\n", cfg.tickTime.Milliseconds())
	if cfg.minSession > 0 {
		fmt.Fprintf(&b, "minSessionTimeout=%d\n", cfg.minSession.Milliseconds())
	}
	if cfg.maxSession > 0 {
		fmt.Fprintf(&b, "maxSessionTimeout=%d\n", cfg.maxSession.Milliseconds())
	}
	b.WriteString(extra)
	if err := os.WriteFile(filepath.Join(dir, "zoo.cfg"), []byte(b.String()), 0o644); err != nil {
		return nil, err
	}
	return s, nil
}

// Addr returns the client address, "127.0.0.1:PORT".
func (s *Server) Addr() string { return "127.0.0.1:" + strconv.Itoa(s.port) }

// Port returns the client port.
func (s *Server) Port() int { return s.port }

// Dir returns the server's directory, holding zoo.cfg, its data and, by
// default, server.log.
func (s *Server) Dir() string { return s.dir }

// Start starts the server again after Stop or Kill, with the same port and
// data, and waits up to 30s until it serves requests. An ensemble member
// serves only once it has joined a quorum.
func (s *Server) Start() error {
	if err := s.launch(); err != nil {
		return err
	}
	return s.waitServing(readyTimeout)
}

// Restart stops the server gracefully and starts it again.
func (s *Server) Restart() error {
	if err := s.Stop(); err != nil {
		return err
	}
	return s.Start()
}

// Stop sends SIGTERM and waits for the JVM to exit, sending SIGKILL after
// 5s. The data directory is kept, so Start resumes existing sessions.
// Stop on a server that is not running does nothing.
func (s *Server) Stop() error {
	p := s.running()
	if p == nil {
		return nil
	}
	if err := p.signal(syscall.SIGTERM); err != nil {
		return err
	}
	_ = p.signal(syscall.SIGCONT) // a paused JVM must run to exit
	select {
	case <-p.done:
		return nil
	case <-time.After(stopTimeout):
		return p.kill()
	}
}

// Kill sends SIGKILL, like a crash, and waits for the JVM to exit.
func (s *Server) Kill() error {
	if p := s.running(); p != nil {
		return p.kill()
	}
	return nil
}

// Pause freezes the JVM with SIGSTOP: connections stay open but nothing
// is answered, as with a long GC pause.
func (s *Server) Pause() error {
	p := s.running()
	if p == nil {
		return fmt.Errorf("zktest: server %s is not running", s.Addr())
	}
	p.paused.Store(true)
	if err := p.signal(syscall.SIGSTOP); err != nil {
		return err
	}
	waitStopped(p.cmd.Process.Pid, 5*time.Second)
	return nil
}

// Resume continues a paused JVM with SIGCONT.
func (s *Server) Resume() error {
	p := s.running()
	if p == nil {
		return fmt.Errorf("zktest: server %s is not running", s.Addr())
	}
	err := p.signal(syscall.SIGCONT)
	p.paused.Store(false)
	return err
}

// Running reports whether the JVM is alive (it may be paused).
func (s *Server) Running() bool { return s.running() != nil }

// Close kills the server, waits for it to exit and removes its directory
// if StartServer made it. The server cannot be started again.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.mu.Unlock()
	err := s.Kill()
	if s.ownDir {
		err = errors.Join(err, os.RemoveAll(s.dir))
	}
	return err
}

// running returns the live process, or nil.
func (s *Server) running() *process {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc == nil || s.proc.exited() {
		return nil
	}
	return s.proc
}

// paused reports whether the server is alive but paused.
func (s *Server) paused() bool {
	p := s.running()
	return p != nil && p.paused.Load()
}

// launch starts the JVM without waiting for it to serve.
func (s *Server) launch() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return fmt.Errorf("zktest: server %s is closed", s.Addr())
	}
	if s.proc != nil && !s.proc.exited() {
		return fmt.Errorf("zktest: server %s is already running", s.Addr())
	}
	args := []string{"-Xmx256m", "-XX:+UseSerialGC", "-Djava.net.preferIPv4Stack=true"}
	args = append(args, stopLogArgs(s.dir)...)
	args = append(args, logTimeArgs...)
	if fs := s.cfg.forceSync; fs != nil {
		v := "yes"
		if !*fs {
			v = "no"
		}
		args = append(args, "-Dzookeeper.forceSync="+v)
	}
	args = append(args, "-cp", classPath,
		"org.apache.zookeeper.server.quorum.QuorumPeerMain", filepath.Join(s.dir, "zoo.cfg"))
	cmd := exec.Command("java", args...)
	cmd.Dir = s.dir

	out := s.cfg.logOutput
	var logFile *os.File
	if out == nil {
		f, err := os.OpenFile(filepath.Join(s.dir, "server.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return err
		}
		logFile, out = f, f
	}
	s.tail.Reset()
	w := logWriter{out: out, tail: &s.tail}
	cmd.Stdout, cmd.Stderr = w, w

	if err := procspawn.Start(cmd, syscall.SIGKILL); err != nil {
		if logFile != nil {
			logFile.Close()
		}
		return fmt.Errorf("zktest: starting server %s: %w", s.Addr(), err)
	}
	p := &process{cmd: cmd, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait() // exit status is expected to be non-zero after a signal
		if logFile != nil {
			logFile.Close()
		}
		close(p.done)
	}()
	s.proc = p
	return nil
}

// waitServing waits until the server answers ruok with imok and srvr with
// a Mode, failing early if the JVM exits.
func (s *Server) waitServing(timeout time.Duration) error {
	s.mu.Lock()
	p := s.proc
	s.mu.Unlock()
	deadline := time.Now().Add(timeout)
	for {
		err := s.serving()
		if err == nil {
			return nil
		}
		if p == nil || p.exited() {
			return s.logError("exited before serving")
		}
		if time.Now().After(deadline) {
			return s.logError(fmt.Sprintf("not serving after %v: %v", timeout, err))
		}
		select {
		case <-p.done:
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (s *Server) serving() error {
	out, err := fourLetter(s.Addr(), "ruok", time.Second)
	if err != nil {
		return err
	}
	if out != "imok" {
		return fmt.Errorf("ruok answered %q", out)
	}
	if _, err = mode(s.Addr(), time.Second); err != nil {
		return err
	}
	// A port freed by Stop can be taken by another process before Start
	// binds it again: make sure the server answering is this one.
	conf, err := fourLetter(s.Addr(), "conf", time.Second)
	if err != nil {
		return err
	}
	for _, line := range strings.Split(conf, "\n") {
		if d, ok := strings.CutPrefix(strings.TrimSpace(line), "dataDir="); ok {
			if d == s.dir || strings.HasPrefix(d, s.dir+string(filepath.Separator)) {
				return nil
			}
			return fmt.Errorf("port %d is answered by another server (dataDir %s)", s.port, d)
		}
	}
	return fmt.Errorf("conf answered without a dataDir: %q", strings.TrimSpace(conf))
}

// LogTail returns at most n final lines of the server's output since it was
// last started, for test failure messages.
func (s *Server) LogTail(n int) string { return s.tail.lastLines(n) }

func (s *Server) logError(msg string) error {
	return fmt.Errorf("zktest: server %s %s; last %d lines of its log:\n%s",
		s.Addr(), msg, logTailLines, s.tail.lastLines(logTailLines))
}

func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// signal signals the JVM's process group.
func (p *process) signal(sig syscall.Signal) error {
	if p.exited() {
		return nil
	}
	err := syscall.Kill(-p.cmd.Process.Pid, sig)
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
}

func (p *process) kill() error {
	err := p.signal(syscall.SIGKILL)
	<-p.done
	return err
}
