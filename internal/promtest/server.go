package promtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/zklockkit/zklockkit/internal/procspawn"
)

// ErrNotInstalled is returned (wrapped) when prometheus or promtool cannot
// be found. Its message holds the install command.
var ErrNotInstalled = errors.New("promtest: Prometheus is not installed; install it with: apt-get update && apt-get install -y prometheus")

// Installed returns nil if prometheus and promtool are on PATH, and
// otherwise an error wrapping ErrNotInstalled that says which is missing.
func Installed() error {
	for _, b := range []string{"prometheus", "promtool"} {
		if _, err := exec.LookPath(b); err != nil {
			return fmt.Errorf("%w (no %s on PATH)", ErrNotInstalled, b)
		}
	}
	return nil
}

// Config is what a Server scrapes and evaluates.
type Config struct {
	// Targets are the "host:port" addresses scraped, as one job
	// ("service"), at /metrics.
	Targets []string
	// ScrapeInterval is how often the targets are scraped, and
	// EvaluationInterval how often rules are evaluated (default 1s each).
	ScrapeInterval, EvaluationInterval time.Duration
	// RuleFiles are rule files to load (recording and alerting rules).
	RuleFiles []string
	// ConsoleDir, if set, is the directory of console templates served
	// at /consoles/ (Prometheus's own dashboards: HTML with graphs drawn
	// by its console library).
	ConsoleDir string
}

// Server is one throwaway Prometheus server on 127.0.0.1.
type Server struct {
	dir  string
	addr string
	cmd  *exec.Cmd
	done chan struct{} // closed once prometheus has exited and been reaped

	closeOnce sync.Once
	closeErr  error
}

const readyTimeout = 60 * time.Second

// Start starts a server with cfg and waits up to a minute until it is
// ready. The caller must Close it.
func Start(cfg Config) (*Server, error) {
	if err := Installed(); err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "promtest-")
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(cfg.yaml()), 0o644); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	// A port found free can be taken before prometheus binds it: try a few.
	var errs []error
	for range 3 {
		s, err := launch(dir, cfg.ConsoleDir)
		if err == nil {
			return s, nil
		}
		errs = append(errs, err)
	}
	os.RemoveAll(dir)
	return nil, errors.Join(errs...)
}

// yaml is the server's configuration file.
func (cfg Config) yaml() string {
	every := func(d time.Duration) string {
		if d <= 0 {
			d = time.Second
		}
		return strconv.FormatInt(d.Milliseconds(), 10) + "ms"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "global:\n  scrape_interval: %s\n  evaluation_interval: %s\n", every(cfg.ScrapeInterval), every(cfg.EvaluationInterval))
	if len(cfg.RuleFiles) > 0 {
		b.WriteString("rule_files:\n")
		for _, f := range cfg.RuleFiles {
			fmt.Fprintf(&b, "  - %s\n", strconv.Quote(f))
		}
	}
	b.WriteString("scrape_configs:\n  - job_name: service\n    static_configs:\n      - targets: [")
	for i, t := range cfg.Targets {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Quote(t))
	}
	b.WriteString("]\n")
	return b.String()
}

func launch(dir, consoles string) (*Server, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := l.Addr().String()
	l.Close()
	bin, _ := exec.LookPath("prometheus")
	args := []string{"--config.file=" + filepath.Join(dir, "prometheus.yml"),
		"--storage.tsdb.path=" + filepath.Join(dir, "data"),
		"--web.listen-address=" + addr,
		"--enable-feature=exemplar-storage",
		"--log.level=warn"}
	if consoles != "" {
		args = append(args, "--web.console.templates="+consoles, "--web.console.libraries="+consoles)
	}
	cmd := exec.Command(bin, args...)
	logf, err := os.OpenFile(filepath.Join(dir, "prometheus.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Dir = dir
	s := &Server{dir: dir, addr: addr, cmd: cmd, done: make(chan struct{})}
	if err := procspawn.Start(cmd, syscall.SIGKILL); err != nil {
		logf.Close()
		return nil, fmt.Errorf("promtest: starting prometheus: %w", err)
	}
	go func() {
		_ = cmd.Wait()
		logf.Close()
		close(s.done)
	}()
	if err := s.waitReady(); err != nil {
		s.stop()
		return nil, err
	}
	return s, nil
}

// waitReady polls /-/ready until the server serves.
func (s *Server) waitReady() error {
	deadline := time.Now().Add(readyTimeout)
	for {
		resp, err := http.Get(s.URL() + "/-/ready")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-s.done:
			return fmt.Errorf("promtest: prometheus on %s exited before it was ready; its log:\n%s", s.addr, s.LogTail())
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("promtest: prometheus on %s not ready after %v; its log:\n%s", s.addr, readyTimeout, s.LogTail())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// URL returns the server's base URL, "http://127.0.0.1:PORT".
func (s *Server) URL() string { return "http://" + s.addr }

// LogTail returns the end of the server's log, for failure messages.
func (s *Server) LogTail() string {
	b, _ := os.ReadFile(filepath.Join(s.dir, "prometheus.log"))
	if len(b) > 4096 {
		b = b[len(b)-4096:]
	}
	return strings.TrimSpace(string(b))
}

// Close stops the server (SIGTERM, then SIGKILL after 10s) and removes
// its directory. It is safe to call more than once.
func (s *Server) Close() error {
	s.closeOnce.Do(func() { s.closeErr = errors.Join(s.stop(), os.RemoveAll(s.dir)) })
	return s.closeErr
}

func (s *Server) stop() error {
	killed, err := procspawn.Stop(s.cmd, s.done, syscall.SIGTERM, 10*time.Second)
	if killed {
		return fmt.Errorf("promtest: prometheus on %s did not stop in 10s; killed", s.addr)
	}
	return err
}

// CheckRules runs promtool check rules on files and returns its output.
func CheckRules(ctx context.Context, files ...string) (string, error) {
	if err := Installed(); err != nil {
		return "", err
	}
	out, err := exec.CommandContext(ctx, "promtool", append([]string{"check", "rules"}, files...)...).CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("promtest: promtool check rules: %w\n%s", err, out)
	}
	return string(out), nil
}

// TestRules runs promtool test rules on files (rule unit tests) and
// returns its output.
func TestRules(ctx context.Context, files ...string) (string, error) {
	if err := Installed(); err != nil {
		return "", err
	}
	cmd := exec.CommandContext(ctx, "promtool", append([]string{"test", "rules"}, files...)...)
	if len(files) > 0 {
		cmd.Dir = filepath.Dir(files[0]) // rule_files are relative to it
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("promtest: promtool test rules: %w\n%s", err, out)
	}
	return string(out), nil
}
