package main

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zklockkit/zklockkit/zktest"
)

// TestVersion: --version names the build and the Go version, before any
// connection is tried.
func TestVersion(t *testing.T) {
	r := zkl(t, []string{"ZKLOCK_SERVERS=127.0.0.1:1"}, "--version")
	if r.code != 0 || r.stderr != "" || !strings.HasPrefix(r.stdout, "zklock ") ||
		!strings.Contains(r.stdout, runtime.Version()) || strings.Count(r.stdout, "\n") != 1 {
		t.Errorf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}

// TestWatchJSON: watch --json prints one JSON object per change, with the
// node fields of show --json.
func TestWatchJSON(t *testing.T) {
	root := zktest.UniqueRoot(t)
	lease := holdWithWaiters(t, root, "busy", "holder", "waiter")
	r := zkl(t, nil, "watch", "--root", root, "--for", "1s", "--json", "busy")
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	type event struct {
		Time     time.Time
		Event    string
		Resource string
		Position int
		State    string
		Mode     string
		Label    string
		Token    int64
		PID      int
		Path     string
		Holders  *int
		Waiting  *int
	}
	var evs []event
	sc := bufio.NewScanner(strings.NewReader(r.stdout))
	for sc.Scan() {
		var e event
		dec := json.NewDecoder(strings.NewReader(sc.Text()))
		if err := dec.Decode(&e); err != nil {
			t.Fatalf("line %q is not a JSON object: %v", sc.Text(), err)
		}
		if e.Time.IsZero() || e.Resource != "busy" {
			t.Errorf("line %q lacks time or resource", sc.Text())
		}
		evs = append(evs, e)
	}
	if len(evs) != 3 {
		t.Fatalf("%d lines, want 3:\n%s", len(evs), r.stdout)
	}
	h, w, q := evs[0], evs[1], evs[2]
	if h.Event != "holds" || h.Position != 0 || h.State != "holds" || h.Mode != "exclusive" || h.Label != "holder" ||
		h.Token != lease.Token() || h.Path != lease.Path() || h.PID != os.Getpid() {
		t.Errorf("holder line %+v", h)
	}
	if w.Event != "waiting" || w.Position != 1 || w.Label != "waiter" {
		t.Errorf("waiter line %+v", w)
	}
	if q.Event != "queue" || q.Holders == nil || *q.Holders != 1 || q.Waiting == nil || *q.Waiting != 1 {
		t.Errorf("queue line %+v", q)
	}
}

// completionScript writes "zklock completion SHELL" to a file.
func completionScript(t *testing.T, shell string) string {
	t.Helper()
	r := zkl(t, nil, "completion", shell)
	if r.code != 0 || r.stderr != "" || r.stdout == "" {
		t.Fatalf("completion %s: exit %d, stderr %q", shell, r.code, r.stderr)
	}
	f := filepath.Join(t.TempDir(), "zklock."+shell)
	if err := os.WriteFile(f, []byte(r.stdout), 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

// needShell fails (never skips) when a shell is missing, with the
// command that installs it.
func needShell(t *testing.T, shell string) string {
	t.Helper()
	p, err := exec.LookPath(shell)
	if err != nil {
		t.Fatalf("%s is needed to check its completion script: apt-get install -y %s (scripts/ensure-test-deps.sh shells)", shell, shell)
	}
	return p
}

// TestCompletionScriptsParse: each script is valid for its shell (bash
// -n, zsh -n, fish --no-execute).
func TestCompletionScriptsParse(t *testing.T) {
	for shell, check := range map[string][]string{"bash": {"-n"}, "zsh": {"-n"}, "fish": {"--no-execute"}} {
		sh := needShell(t, shell)
		f := completionScript(t, shell)
		if out, err := exec.Command(sh, append(check, f)...).CombinedOutput(); err != nil || len(out) > 0 {
			t.Errorf("%s %v: %v\n%s", shell, check, err, out)
		}
	}
}

// TestCompletionBash: the bash script completes commands, each command's
// flags (read from its flag set), shells, and skips flag values.
func TestCompletionBash(t *testing.T) {
	sh := needShell(t, "bash")
	f := completionScript(t, "bash")
	for line, want := range map[string]string{
		"zklock ":                       "ls top show watch run break completion help",
		"zklock to":                     "top",
		"zklock top --max":              "--max-reads",
		"zklock ru":                     "run",
		"zklock --servers h:2181 sh":    "show",
		"zklock run --tr":               "--try",
		"zklock run -":                  "-E",
		"zklock run --sh":               "--shared",
		"zklock watch --j":              "--json",
		"zklock break --dr":             "--dry-run",
		"zklock completion ":            "bash zsh fish",
		"zklock help b":                 "break",
		"zklock --ver":                  "--version",
		"zklock show --root /zk --li":   "--limit",
		"zklock run --wait 5m job --tr": "--try",
	} {
		words := strings.Fields(line)
		if strings.HasSuffix(line, " ") {
			words = append(words, "")
		}
		script := `source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _zklock; printf '%s\n' "${COMPREPLY[@]}"`
		out, err := exec.Command(sh, append([]string{"-c", script, "bash", f}, words...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("%q: %v\n%s", line, err, out)
		}
		got := strings.Fields(string(out))
		for _, w := range strings.Fields(want) {
			if !slices.Contains(got, w) {
				t.Errorf("%q completes to %q; want %q among them", line, got, w)
			}
		}
		if strings.Count(want, " ") == 0 && len(got) > 1 && !strings.HasSuffix(line, "-") {
			t.Errorf("%q completes to %q; want only %q", line, got, want)
		}
	}
}

// TestCompletionFish: fish's own completion query sees the commands and
// flags.
func TestCompletionFish(t *testing.T) {
	sh := needShell(t, "fish")
	f := completionScript(t, "fish")
	for line, want := range map[string]string{
		"zklock sh":          "show",
		"zklock run --sha":   "--shared",
		"zklock completion ": "zsh",
		"zklock watch --js":  "--json",
		"zklock top --so":    "--sort",
	} {
		out, err := exec.Command(sh, "-c", "source $argv[1]; complete -C $argv[2]", f, line).CombinedOutput()
		if err != nil {
			t.Fatalf("%q: %v\n%s", line, err, out)
		}
		var got []string
		for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			got = append(got, strings.SplitN(l, "\t", 2)[0])
		}
		if !slices.Contains(got, want) {
			t.Errorf("%q completes to %q; want %q among them", line, got, want)
		}
	}
}
