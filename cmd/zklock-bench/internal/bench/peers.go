package bench

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Names of the peers: the lock recipes of other languages that Run can
// measure beside zklock.
const (
	NameCurator = "Curator"
	NameKazoo   = "kazoo"
)

// PeersInstall installs both peers (and javac, to compile the Curator
// side) from Debian. scripts/ensure-test-deps.sh curator jdk kazoo runs it
// when root.
const PeersInstall = "apt-get install -y default-jdk-headless libcurator-recipes-java libcurator-framework-java libcurator-client-java python3-kazoo"

// ErrPeerMissing is returned, wrapped with what is missing and
// PeersInstall, by Peer.Installed and by Run with PeersRequired when a
// peer is not installed.
var ErrPeerMissing = errors.New("bench: peer not installed")

// ErrPeer is returned, wrapped, when a peer process fails: it cannot be
// started, it exits, it answers outside its protocol, or it gives no answer
// within PeerRunTimeout (PeerStartTimeout when starting).
var ErrPeer = errors.New("bench: peer failed")

// Bounds on a peer process: starting it (compiling included) and one run
// of one scenario. A peer that misses one is killed and the run fails with
// ErrPeer.
const (
	PeerStartTimeout = 2 * time.Minute
	PeerRunTimeout   = 2 * time.Minute
)

// PeerMode says whether Run measures the peers (Apache Curator and kazoo)
// too. It is a flag.Value: "auto" (or true), "required", "off" (or false).
type PeerMode int

const (
	// PeersOff measures zklock and zk.Lock only. It is the zero value.
	PeersOff PeerMode = iota
	// PeersAuto measures the peers that are installed; the report names
	// those that are not, with PeersInstall.
	PeersAuto
	// PeersRequired measures both peers; Run fails with ErrPeerMissing
	// when one is not installed.
	PeersRequired
)

// String returns the mode as Set accepts it.
func (m PeerMode) String() string {
	switch m {
	case PeersOff:
		return "off"
	case PeersAuto:
		return "auto"
	case PeersRequired:
		return "required"
	}
	return "PeerMode(" + strconv.Itoa(int(m)) + ")"
}

// Set parses "auto", "required" or "off"; "true" means auto and "false"
// off, so that -peers and -peers=false work as boolean flags do.
func (m *PeerMode) Set(s string) error {
	switch strings.ToLower(s) {
	case "auto", "on", "true", "1":
		*m = PeersAuto
	case "required":
		*m = PeersRequired
	case "off", "false", "0":
		*m = PeersOff
	default:
		return fmt.Errorf("bench: peers %q: want auto, required or off", s)
	}
	return nil
}

// IsBoolFlag lets -peers stand alone on a command line, meaning auto.
func (m *PeerMode) IsBoolFlag() bool { return true }

// Peer is another language's lock recipe, run as a process of its own on
// the same server and in the same rounds as zklock and zk.Lock (see
// CuratorPeer and KazooPeer).
type Peer struct {
	name, recipe string
	// container: the recipe makes its queue znode a CONTAINER node (the
	// bench makes it beforehand, as the recipe would).
	container bool
	// warmUps is how many times the warm-up runs each scenario.
	warmUps int
	missing func() error
	version func() string
	// command writes the peer's sources into dir, compiles them if need
	// be, and returns the command that starts the peer process with the
	// given session timeout.
	command func(ctx context.Context, dir string, timeout time.Duration) (*exec.Cmd, error)
}

// Name returns the peer's name, NameCurator or NameKazoo.
func (p Peer) Name() string { return p.name }

// Installed returns nil when the peer can run here, and otherwise an
// error wrapping ErrPeerMissing that names what is missing and the
// install command.
func (p Peer) Installed() error {
	if err := p.missing(); err != nil {
		return fmt.Errorf("%w: %s: %v; install with: %s", ErrPeerMissing, p.name, err, PeersInstall)
	}
	return nil
}

// Peers returns both peers, Curator first.
func Peers() []Peer { return []Peer{CuratorPeer(), KazooPeer()} }

//go:embed testdata/peers/CuratorBench.java
var curatorSource []byte

//go:embed testdata/peers/kazoo_bench.py
var kazooSource []byte

// curatorJars are Debian's jars the Curator side runs on.
var curatorJars = []string{"curator-framework", "curator-recipes", "curator-client", "zookeeper", "guava", "slf4j-nop"}

// CuratorPeer returns the Apache Curator side: InterProcessMutex from
// Debian's Curator 5.4 jars (in /usr/share/java) on the system's JVM,
// compiled with javac when the bench starts. One InterProcessMutex per
// thread and session; sessions are CuratorFrameworks with
// ExponentialBackoffRetry(100 ms, 3) and the bench's session timeout.
func CuratorPeer() Peer { return curatorPeer("/usr/share/java") }

func curatorPeer(jarDir string) Peer {
	jars := make([]string, len(curatorJars))
	for i, j := range curatorJars {
		jars[i] = filepath.Join(jarDir, j+".jar")
	}
	cp := strings.Join(jars, ":")
	// Three warm-up runs: with -Xlog:jit+compilation=debug the JVM
	// compiled 1,546 methods during a first contenders-8 run, 254 and 135
	// during the next two, and under 100 from the fourth on (its rate
	// rising from about 420 to 800 acquires/s on a loaded machine).
	return Peer{name: NameCurator, recipe: "InterProcessMutex", container: true, warmUps: 3,
		missing: func() error {
			var gone []string
			for _, j := range jars {
				if _, err := os.Stat(j); err != nil {
					gone = append(gone, j)
				}
			}
			for _, c := range []string{"java", "javac"} {
				if _, err := exec.LookPath(c); err != nil {
					gone = append(gone, c)
				}
			}
			if len(gone) > 0 {
				return fmt.Errorf("missing %s", strings.Join(gone, ", "))
			}
			return nil
		},
		version: func() string {
			// Debian ships curator-recipes-5.4.0.jar beside
			// curator-recipes.jar.
			m, _ := filepath.Glob(filepath.Join(jarDir, "curator-recipes-*.jar"))
			for _, f := range m {
				return strings.TrimSuffix(strings.TrimPrefix(filepath.Base(f), "curator-recipes-"), ".jar")
			}
			return ""
		},
		command: func(ctx context.Context, dir string, timeout time.Duration) (*exec.Cmd, error) {
			src := filepath.Join(dir, "CuratorBench.java")
			if err := os.WriteFile(src, curatorSource, 0o644); err != nil {
				return nil, err
			}
			if out, err := exec.CommandContext(ctx, "javac", "-d", dir, "-cp", cp, src).CombinedOutput(); err != nil {
				return nil, fmt.Errorf("javac CuratorBench.java: %v: %s", err, out)
			}
			// The JVM's own defaults, as a service would run it.
			return exec.Command("java", "-cp", dir+":"+cp, "CuratorBench", strconv.FormatInt(timeout.Milliseconds(), 10)), nil
		}}
}

// KazooPeer returns the kazoo side: kazoo's Lock (kazoo 2.8 from Debian)
// on the system's /usr/bin/python3, with kazoo's default threading
// handler. All the threads of a run share one interpreter and its GIL.
func KazooPeer() Peer { return kazooPeer("/usr/bin/python3") }

func kazooPeer(python string) Peer {
	return Peer{name: NameKazoo, recipe: "Lock", warmUps: 1,
		missing: func() error {
			if _, err := os.Stat(python); err != nil {
				return fmt.Errorf("missing %s", python)
			}
			if out, err := exec.Command(python, "-c", "import kazoo").CombinedOutput(); err != nil {
				return fmt.Errorf("%s cannot import kazoo: %v: %s", python, err, strings.TrimSpace(string(out)))
			}
			return nil
		},
		version: func() string { return "" }, // the process says it
		command: func(_ context.Context, dir string, timeout time.Duration) (*exec.Cmd, error) {
			script := filepath.Join(dir, "kazoo_bench.py")
			if err := os.WriteFile(script, kazooSource, 0o644); err != nil {
				return nil, err
			}
			return exec.Command(python, "-u", script, strconv.FormatFloat(timeout.Seconds(), 'f', -1, 64)), nil
		}}
}
