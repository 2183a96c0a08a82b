package zktest_test

import (
	"bytes"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zklockkit/zklockkit/zktest"
)

func wantImok(t *testing.T, s *zktest.Server) {
	t.Helper()
	if out, err := s.FourLetter("ruok"); err != nil || out != "imok" {
		t.Fatalf("ruok = %q, %v; want imok", out, err)
	}
}

func TestServerLifecycle(t *testing.T) {
	t.Parallel()
	s, err := zktest.StartServer(
		zktest.WithTickTime(200*time.Millisecond),
		zktest.WithSessionTimeoutBounds(400*time.Millisecond, 4*time.Second),
		zktest.WithForceSync(false),
	)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()

	wantImok(t, s)
	if m, err := s.Mode(); err != nil || m != "standalone" {
		t.Fatalf("Mode = %q, %v; want standalone", m, err)
	}
	conf, err := s.FourLetter("conf")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"tickTime=200", "minSessionTimeout=400", "maxSessionTimeout=4000"} {
		if !strings.Contains(conf, want) {
			t.Errorf("conf lacks %q:\n%s", want, conf)
		}
	}
	if s.Addr() != net.JoinHostPort("127.0.0.1", strconv.Itoa(s.Port())) {
		t.Errorf("Addr = %q, Port = %d", s.Addr(), s.Port())
	}

	// A paused server accepts connections but answers nothing.
	if err := s.Pause(); err != nil {
		t.Fatal(err)
	}
	if out, err := ask(s.Addr(), "ruok", 300*time.Millisecond); !isTimeout(err) {
		t.Errorf("ruok to paused server = %q, %v; want timeout", out, err)
	}
	if err := s.Resume(); err != nil {
		t.Fatal(err)
	}
	wantImok(t, s)

	port := s.Port()
	for _, down := range []struct {
		name string
		f    func() error
	}{{"Stop", s.Stop}, {"Kill", s.Kill}} {
		if err := down.f(); err != nil {
			t.Fatalf("%s: %v", down.name, err)
		}
		if s.Running() {
			t.Fatalf("Running after %s", down.name)
		}
		if _, err := s.FourLetter("ruok"); err == nil {
			t.Fatalf("ruok answered after %s", down.name)
		}
		if err := s.Start(); err != nil {
			t.Fatalf("Start after %s: %v", down.name, err)
		}
		if s.Port() != port || !s.Running() {
			t.Fatalf("after %s+Start: port %d (was %d), running %v", down.name, s.Port(), port, s.Running())
		}
		wantImok(t, s)
	}
	if err := s.Restart(); err != nil {
		t.Fatal(err)
	}
	wantImok(t, s)

	dir := s.Dir()
	if fi, err := os.Stat(filepath.Join(dir, "server.log")); err != nil || fi.Size() == 0 {
		t.Errorf("server.log: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if s.Running() {
		t.Error("Running after Close")
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("dir %s still exists after Close: %v", dir, err)
	}
	if err := s.Start(); err == nil {
		t.Error("Start after Close succeeded")
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

func TestServerDirAndLogOutput(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "zk")
	var log syncBuffer
	s, err := zktest.StartServer(zktest.WithDir(dir), zktest.WithLogOutput(&log))
	if err != nil {
		t.Fatal(err)
	}
	if s.Dir() != dir {
		t.Errorf("Dir = %q, want %q", s.Dir(), dir)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "zoo.cfg")); err != nil {
		t.Errorf("WithDir directory not kept: %v", err)
	}
	if !strings.Contains(log.String(), "ZooKeeperServer") {
		t.Errorf("log output lacks server lines: %.200q", log.String())
	}
}

func TestStartFailureShowsLog(t *testing.T) {
	t.Parallel()
	// tickTime=0 is invalid, so the JVM exits at once.
	s, err := zktest.StartServer(zktest.WithTickTime(0))
	if err == nil {
		s.Close()
		t.Fatal("StartServer with tickTime 0 succeeded")
	}
	if !strings.Contains(err.Error(), "last 40 lines of its log") || !strings.Contains(err.Error(), "tickTime") {
		t.Fatalf("error lacks the server log: %v", err)
	}
}

// Each line of a server's log starts with its time, so that the log can be
// laid beside a history.
func TestServerLogIsStamped(t *testing.T) {
	before := time.Now().Add(-time.Second)
	s, err := zktest.StartServer()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	b, err := os.ReadFile(filepath.Join(s.Dir(), "server.log"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	for _, line := range []string{lines[0], lines[len(lines)-1]} {
		stamp, _, _ := strings.Cut(line, " ")
		at, err := time.Parse(zktest.LogTimeLayout, stamp)
		if err != nil || at.Before(before) || at.After(time.Now()) {
			t.Fatalf("line %q: stamp %v, %v; want a time since %v", line, at, err, before)
		}
	}
}
