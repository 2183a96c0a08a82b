package pgtest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/zklockkit/zklockkit/internal/procspawn"
)

const (
	readyTimeout = 30 * time.Second
	stopTimeout  = 10 * time.Second
	logTailBytes = 4 << 10
)

// Cluster is one throwaway PostgreSQL server (a postmaster and its data
// directory) on 127.0.0.1.
type Cluster struct {
	dir  string // temporary directory: data/, sock/, server.log
	port int
	cmd  *exec.Cmd
	done chan struct{} // closed once the server has exited and been reaped
	log  *tail

	closeOnce sync.Once
	closeErr  error
}

// Option configures Start.
type Option func(*config)

type config struct {
	fsync bool
}

// WithFsync turns fsync, synchronous commit and full-page writes on
// (default off: a throwaway cluster need not survive a power cut, and the
// machine is shared). Benchmarks that quote commit latency turn it on.
func WithFsync(on bool) Option { return func(c *config) { c.fsync = on } }

// Start creates and starts a cluster, and waits up to 30s until it accepts
// connections. The caller must Close it.
func Start(opts ...Option) (*Cluster, error) {
	var cfg config
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	bin, err := binDir()
	if err != nil {
		return nil, err
	}
	cred, err := credential()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "pgtest-")
	if err != nil {
		return nil, err
	}
	if err := prepare(dir, cred); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	if err := initdb(bin, dir, cred); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	// A port found free can be taken by another process before postgres
	// binds it: try a few.
	var errs []error
	for range 3 {
		c, err := launch(bin, dir, cred, cfg)
		if err == nil {
			return c, nil
		}
		errs = append(errs, err)
	}
	os.RemoveAll(dir)
	return nil, errors.Join(errs...)
}

// credential returns who runs initdb and postgres: nil (the current user)
// unless running as root, then the "postgres" user.
func credential() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("pgtest: running as root, PostgreSQL must run as the \"postgres\" user (the Debian package creates it): %w", err)
	}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err := errors.Join(err1, err2); err != nil {
		return nil, fmt.Errorf("pgtest: user postgres: %w", err)
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), NoSetGroups: true}, nil
}

// prepare makes the socket directory and hands the tree to cred's user.
func prepare(dir string, cred *syscall.Credential) error {
	if err := os.Mkdir(filepath.Join(dir, "sock"), 0o700); err != nil {
		return err
	}
	if cred == nil {
		return nil
	}
	for _, p := range []string{dir, filepath.Join(dir, "sock")} {
		if err := os.Chown(p, int(cred.Uid), int(cred.Gid)); err != nil {
			return fmt.Errorf("pgtest: chown %s to postgres: %w", p, err)
		}
	}
	return nil
}

func command(bin, dir string, cred *syscall.Credential, name string, args ...string) *exec.Cmd {
	cmd := exec.Command(filepath.Join(bin, name), args...)
	cmd.Dir = dir // a directory the postgres user can enter
	cmd.Env = []string{"PATH=" + bin + ":/usr/bin:/bin", "LC_ALL=C", "TZ=UTC"}
	if cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	}
	return cmd
}

func initdb(bin, dir string, cred *syscall.Credential) error {
	cmd := command(bin, dir, cred, "initdb", "-D", filepath.Join(dir, "data"), "-U", "postgres",
		"--auth=trust", "--encoding=UTF8", "--locale=C", "--no-sync", "--no-instructions")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("pgtest: initdb: %w\n%s", err, out)
	}
	return nil
}

func launch(bin, dir string, cred *syscall.Credential, cfg config) (*Cluster, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	sync := "off"
	if cfg.fsync {
		sync = "on"
	}
	cmd := command(bin, dir, cred, "postgres", "-D", filepath.Join(dir, "data"),
		"-p", strconv.Itoa(port), "-k", filepath.Join(dir, "sock"),
		"-c", "listen_addresses=127.0.0.1",
		"-c", "fsync="+sync, "-c", "synchronous_commit="+sync, "-c", "full_page_writes="+sync,
		"-c", "shared_buffers=32MB", "-c", "max_connections=100")
	logf, err := os.OpenFile(filepath.Join(dir, "server.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	c := &Cluster{dir: dir, port: port, cmd: cmd, done: make(chan struct{}), log: &tail{}}
	w := io.MultiWriter(logf, c.log)
	cmd.Stdout, cmd.Stderr = w, w
	if err := procspawn.Start(cmd, syscall.SIGQUIT); err != nil { // immediate shutdown if we die
		logf.Close()
		return nil, fmt.Errorf("pgtest: starting postgres: %w", err)
	}
	go func() {
		_ = cmd.Wait()
		logf.Close()
		close(c.done)
	}()
	if err := c.waitReady(bin); err != nil {
		c.stop()
		return nil, err
	}
	return c, nil
}

// waitReady polls pg_isready until the server accepts connections.
func (c *Cluster) waitReady(bin string) error {
	deadline := time.Now().Add(readyTimeout)
	for {
		out, err := exec.Command(filepath.Join(bin, "pg_isready"), "-q", "-t", "1",
			"-h", "127.0.0.1", "-p", strconv.Itoa(c.port), "-U", "postgres", "-d", "postgres").CombinedOutput()
		if err == nil {
			return nil
		}
		select {
		case <-c.done:
			return fmt.Errorf("pgtest: postgres on port %d exited before accepting connections; its log:\n%s", c.port, c.log.String())
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("pgtest: postgres on port %d not ready after %v (%v %s); its log:\n%s", c.port, readyTimeout, err, out, c.log.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// freePort returns a port that was free on 127.0.0.1.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// DSN returns a connection URL for the "postgres" database as the
// "postgres" superuser over TCP, for pgx's stdlib or lib/pq.
func (c *Cluster) DSN() string {
	return "postgres://postgres@127.0.0.1:" + strconv.Itoa(c.port) + "/postgres?sslmode=disable"
}

// Addr returns "127.0.0.1:PORT".
func (c *Cluster) Addr() string { return "127.0.0.1:" + strconv.Itoa(c.port) }

// Dir returns the cluster's directory (data/, sock/, server.log).
func (c *Cluster) Dir() string { return c.dir }

// PID returns the postmaster's process id.
func (c *Cluster) PID() int { return c.cmd.Process.Pid }

// LogTail returns the end of the server's log, for failure messages.
func (c *Cluster) LogTail() string { return c.log.String() }

// Close stops the server (fast shutdown, then SIGKILL after 10s) and
// removes its directory. It is safe to call more than once.
func (c *Cluster) Close() error {
	c.closeOnce.Do(func() {
		c.closeErr = errors.Join(c.stop(), os.RemoveAll(c.dir))
	})
	return c.closeErr
}

func (c *Cluster) stop() error {
	// SIGINT: fast shutdown (roll back sessions, checkpoint, exit).
	killed, err := procspawn.Stop(c.cmd, c.done, syscall.SIGINT, stopTimeout)
	if killed {
		return fmt.Errorf("pgtest: postgres on port %d did not stop in %v; killed", c.port, stopTimeout)
	}
	return err
}

// tail keeps the last bytes written to it.
type tail struct {
	mu  sync.Mutex
	buf []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > logTailBytes {
		t.buf = t.buf[len(t.buf)-logTailBytes:]
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(string(bytes.ToValidUTF8(t.buf, nil)))
}
