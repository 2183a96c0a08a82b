// Package scripts_test tests the shell scripts of scripts/ that decide
// what `make test` installs, with fake apt-get and id commands on PATH:
// nothing is installed.
package scripts_test

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// fakeAptGet logs its arguments and, on install, "installs" each package
// by creating the files the script looks for under $SYSROOT (and commands
// in $BIN). FAKE_APT_FAIL=1 makes it fail; FAKE_APT_NOOP=1 makes install
// succeed without installing anything.
const fakeAptGet = `#!/bin/bash
echo "$*" >> "$FAKE_LOG"
[ "${FAKE_APT_FAIL:-}" = 1 ] && { echo "E: unable to locate package" >&2; exit 100; }
[ "$1" = install ] || exit 0
[ "${FAKE_APT_NOOP:-}" = 1 ] && exit 0
exe() { mkdir -p "$(dirname "$1")"; printf '#!/bin/bash\nexit 0\n' > "$1"; chmod +x "$1"; }
for p in "$@"; do
  case $p in
    zookeeper) mkdir -p "$SYSROOT/usr/share/java"; : > "$SYSROOT/usr/share/java/zookeeper.jar"; : > "$SYSROOT/usr/share/java/slf4j-simple.jar"; exe "$BIN/java" ;;
    libcurator-*-java) j=${p#lib}; mkdir -p "$SYSROOT/usr/share/java"; : > "$SYSROOT/usr/share/java/${j%-java}.jar" ;;
    default-jdk-headless) exe "$BIN/javac" ;;
    python3-kazoo) exe "$SYSROOT/usr/bin/python3" ;;
    chromium) exe "$BIN/chromium" ;;
    prometheus) exe "$BIN/prometheus"; exe "$BIN/promtool" ;;
    zsh|fish|tmux|git) exe "$BIN/$p" ;;
    postgresql) for b in initdb postgres pg_isready; do exe "$SYSROOT/usr/lib/postgresql/15/bin/$b"; done ;;
  esac
done
`

const allPackages = "zookeeper libcurator-recipes-java libcurator-framework-java libcurator-client-java " +
	"default-jdk-headless python3-kazoo chromium prometheus postgresql zsh fish tmux git"

// machine is a fake machine: a PATH holding only the tools the script
// uses besides the fakes, and an empty file system root.
type machine struct {
	t                *testing.T
	bin, sys, aptLog string
	uid              string
	env              []string
}

func newMachine(t *testing.T, uid string) *machine {
	t.Helper()
	dir := t.TempDir()
	m := &machine{t: t, bin: filepath.Join(dir, "bin"), sys: filepath.Join(dir, "sys"), aptLog: filepath.Join(dir, "apt.log"), uid: uid}
	for _, d := range []string{m.bin, m.sys} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, tool := range []string{"bash", "mktemp", "cat", "rm", "mkdir", "dirname", "chmod"} {
		p, err := exec.LookPath(tool)
		if err != nil {
			t.Fatalf("%s is needed to run the script: %v", tool, err)
		}
		if err := os.Symlink(p, filepath.Join(m.bin, tool)); err != nil {
			t.Fatal(err)
		}
	}
	m.write("bin/apt-get", fakeAptGet)
	m.write("bin/id", "#!/bin/bash\n[ \"$1\" = -u ] && echo \"$FAKE_UID\"\n")
	return m
}

// write creates an executable file at rel under the machine's directory.
func (m *machine) write(rel, body string) {
	m.t.Helper()
	p := filepath.Join(filepath.Dir(m.bin), rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		m.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
		m.t.Fatal(err)
	}
}

// installAll makes every component present, as apt-get would.
func (m *machine) installAll() {
	m.t.Helper()
	cmd := exec.Command(filepath.Join(m.bin, "apt-get"), append([]string{"install"}, strings.Fields(allPackages)...)...)
	cmd.Env = []string{"PATH=" + m.bin, "SYSROOT=" + m.sys, "BIN=" + m.bin, "FAKE_LOG=" + os.DevNull}
	if out, err := cmd.CombinedOutput(); err != nil {
		m.t.Fatalf("fake install: %v\n%s", err, out)
	}
}

// run runs ensure-test-deps.sh with args and returns its exit code, its
// stderr and the apt-get calls it made.
func (m *machine) run(args ...string) (code int, stderr string, apt []string) {
	m.t.Helper()
	script, err := filepath.Abs("ensure-test-deps.sh")
	if err != nil {
		m.t.Fatal(err)
	}
	cmd := exec.Command(filepath.Join(m.bin, "bash"), append([]string{script}, args...)...)
	cmd.Env = append([]string{"PATH=" + m.bin, "ZKLOCK_SYSROOT=" + m.sys, "SYSROOT=" + m.sys, "BIN=" + m.bin,
		"FAKE_UID=" + m.uid, "FAKE_LOG=" + m.aptLog}, m.env...)
	var eb, ob bytes.Buffer
	cmd.Stderr, cmd.Stdout = &eb, &ob
	err = cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		code = ee.ExitCode()
	default:
		m.t.Fatal(err)
	}
	if ob.Len() > 0 {
		m.t.Errorf("stdout %q: the script reports on stderr only", ob.String())
	}
	if b, err := os.ReadFile(m.aptLog); err == nil {
		apt = strings.Split(strings.TrimSpace(string(b)), "\n")
	}
	return code, eb.String(), apt
}

// TestEnsureAsRootInstallsWhatIsMissing: on a bare machine as root, one
// apt-get update and one apt-get install of every package, each named on
// stderr with what needs it.
func TestEnsureAsRootInstallsWhatIsMissing(t *testing.T) {
	m := newMachine(t, "0")
	code, stderr, apt := m.run()
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, stderr)
	}
	want := []string{"update -qq", "install -y -qq " + allPackages}
	if strings.Join(apt, "|") != strings.Join(want, "|") {
		t.Errorf("apt-get calls %q, want %q", apt, want)
	}
	for _, line := range []string{"installing zookeeper (the ZooKeeper server", "installing python3-kazoo (the kazoo interop tests)",
		"installing chromium (the zkdebug page test)", "installing prometheus (the dashboard and alert rules test)", "installing postgresql (the fence tests", "installed " + allPackages} {
		if !strings.Contains(stderr, line) {
			t.Errorf("stderr lacks %q:\n%s", line, stderr)
		}
	}
	// A second run finds everything and says nothing.
	if err := os.Remove(m.aptLog); err != nil {
		t.Fatal(err)
	}
	code, stderr, apt = m.run()
	if code != 0 || stderr != "" || apt != nil {
		t.Errorf("second run: exit %d, stderr %q, apt-get %q; want 0, silent, no apt-get", code, stderr, apt)
	}
}

// TestEnsureInstallsOnlyWhatIsMissing: present components are left alone.
func TestEnsureInstallsOnlyWhatIsMissing(t *testing.T) {
	m := newMachine(t, "0")
	m.installAll()
	if err := os.Remove(filepath.Join(m.sys, "usr/share/java/curator-client.jar")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(m.bin, "chromium")); err != nil {
		t.Fatal(err)
	}
	code, stderr, apt := m.run()
	want := "install -y -qq libcurator-recipes-java libcurator-framework-java libcurator-client-java chromium"
	if code != 0 || len(apt) != 2 || apt[1] != want {
		t.Errorf("exit %d, apt-get %q, want the install %q\n%s", code, apt, want, stderr)
	}
}

// TestEnsureWithoutRoot: nothing is installed; the exact command is
// printed; a missing ZooKeeper fails the run, a missing peer does not
// (its tests fail and name the command), unless --strict.
func TestEnsureWithoutRoot(t *testing.T) {
	m := newMachine(t, "1000")
	code, stderr, apt := m.run()
	if apt != nil {
		t.Errorf("apt-get called without root: %q", apt)
	}
	if code != 1 || !strings.Contains(stderr, "  apt-get update && apt-get install -y "+allPackages+"\n") ||
		!strings.Contains(stderr, "ZKLOCK_SERVERS") {
		t.Errorf("bare machine: exit %d, stderr:\n%s\nwant exit 1 and the install command", code, stderr)
	}

	m.installAll()
	if err := os.Remove(filepath.Join(m.sys, "usr/bin/python3")); err != nil {
		t.Fatal(err)
	}
	code, stderr, _ = m.run()
	if code != 0 || !strings.Contains(stderr, "apt-get update && apt-get install -y python3-kazoo\n") ||
		!strings.Contains(stderr, "the tests that need these fail") {
		t.Errorf("kazoo missing: exit %d, stderr:\n%s\nwant exit 0 and the install command", code, stderr)
	}
	if code, _, _ := m.run("--strict", "kazoo"); code != 1 {
		t.Errorf("--strict kazoo with kazoo missing: exit %d, want 1", code)
	}
	if code, stderr, _ := m.run("--strict", "zookeeper", "postgres"); code != 0 || stderr != "" {
		t.Errorf("--strict zookeeper postgres, both present: exit %d, %q", code, stderr)
	}
}

// TestEnsureNoInstall: ZKLOCK_NO_INSTALL=1 keeps root's hands off apt-get.
func TestEnsureNoInstall(t *testing.T) {
	m := newMachine(t, "0")
	m.env = []string{"ZKLOCK_NO_INSTALL=1"}
	code, stderr, apt := m.run("chromium")
	if apt != nil || code != 0 || !strings.Contains(stderr, "apt-get install -y chromium") {
		t.Errorf("exit %d, apt-get %q, stderr:\n%s", code, apt, stderr)
	}
}

// TestEnsureInstallFails: a failing apt-get, or a package that does not
// provide what was missing, fails the run with apt-get's own words.
func TestEnsureInstallFails(t *testing.T) {
	m := newMachine(t, "0")
	m.env = []string{"FAKE_APT_FAIL=1"}
	code, stderr, _ := m.run("kazoo")
	if code != 1 || !strings.Contains(stderr, "E: unable to locate package") || !strings.Contains(stderr, "installing failed") {
		t.Errorf("apt-get failing: exit %d, stderr:\n%s", code, stderr)
	}
	m.env = []string{"FAKE_APT_NOOP=1"}
	code, stderr, _ = m.run("jdk")
	if code != 1 || !strings.Contains(stderr, "jdk is still not usable") {
		t.Errorf("apt-get installing nothing: exit %d, stderr:\n%s", code, stderr)
	}
}

// TestEnsureUnknownComponent: a typo is a usage error, not a silent pass.
func TestEnsureUnknownComponent(t *testing.T) {
	m := newMachine(t, "0")
	m.installAll()
	code, stderr, apt := m.run("zookeper")
	if code != 2 || !strings.Contains(stderr, "unknown component 'zookeper'") || apt != nil {
		t.Errorf("exit %d, apt-get %q, stderr %q", code, apt, stderr)
	}
}

// TestMakeTestEnsuresEverything: make test runs the script for every
// component before the tests, and the single-component scripts delegate to
// it (one list of packages).
func TestMakeTestEnsuresEverything(t *testing.T) {
	out, err := exec.Command("make", "-n", "-C", "..", "test").CombinedOutput()
	if err != nil {
		t.Fatalf("make -n test: %v\n%s", err, out)
	}
	lines := strings.Split(string(out), "\n")
	ensure, gotest := -1, -1
	for i, l := range lines {
		switch {
		case strings.TrimSpace(l) == "scripts/ensure-test-deps.sh":
			ensure = i
		case strings.Contains(l, "test -race"):
			gotest = i
		}
	}
	if ensure < 0 || gotest < ensure {
		t.Errorf("make test does not run scripts/ensure-test-deps.sh (all components) before go test:\n%s", out)
	}
	for _, s := range []string{"ensure-zookeeper.sh", "ensure-postgres.sh"} {
		b, err := os.ReadFile(s)
		if err != nil || !strings.Contains(string(b), "ensure-test-deps.sh\" --strict") {
			t.Errorf("%s does not delegate to ensure-test-deps.sh: %v", s, err)
		}
	}
}
