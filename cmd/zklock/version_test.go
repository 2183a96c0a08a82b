package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
)

// TestVersionMatchesDocs builds zklock as docs/operations.md says people
// build it, from a fresh git clone of this checkout's HEAD (go build's
// default -buildvcs=auto; the clone's .git is a directory, which Go
// needs), then with uncommitted changes, then with -buildvcs=false, and
// checks that --version prints what the docs' table shows for each, with
// the clone's commit, its time and this Go in place of the docs' example
// values.
func TestVersionMatchesDocs(t *testing.T) {
	doc, err := os.ReadFile("../../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	documented := func(row string) string {
		for _, line := range strings.Split(string(doc), "\n") {
			if strings.HasPrefix(line, "| "+row+" |") {
				spans := regexp.MustCompile("`([^`]*)`").FindAllStringSubmatch(line, -1)
				return spans[len(spans)-1][1]
			}
		}
		t.Fatalf("docs/operations.md has no version table row %q", row)
		return ""
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("this test needs git: apt-get install -y git")
	}
	top := gitOut(t, ".", "rev-parse", "--show-toplevel")
	dir := filepath.Join(t.TempDir(), "zklockkit")
	gitOut(t, ".", "clone", "--quiet", "--no-tags", "--depth", "1", "file://"+top, dir)
	commit := gitOut(t, dir, "rev-parse", "HEAD")[:12]
	cmd := exec.Command("git", "log", "-1", "--format=%cd", "--date=format-local:%Y%m%d%H%M%S")
	cmd.Dir, cmd.Env = dir, append(os.Environ(), "TZ=UTC")
	when, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	// The docs' example values, and what this build has instead.
	example := regexp.MustCompile(`^zklock v0\.0\.0-(\d{14})-([0-9a-f]{12}) commit ([0-9a-f]{12}) \((go\S+ \S+/\S+)\)$`)
	m := example.FindStringSubmatch(documented("`go build ./cmd/zklock` in a git checkout"))
	if m == nil || m[2] != m[3] {
		t.Fatalf("docs' git-checkout example does not have the form %s with the same commit twice", example)
	}
	actual := strings.NewReplacer(m[1], strings.TrimSpace(string(when)), m[2], commit,
		m[4], runtime.Version()+" "+runtime.GOOS+"/"+runtime.GOARCH)
	version := func(buildFlags ...string) string {
		bin := filepath.Join(t.TempDir(), "zklock")
		build := exec.Command("go", append(append([]string{"build", "-o", bin}, buildFlags...), "./cmd/zklock")...)
		// The environment may turn stamping off (GOFLAGS=-buildvcs=false):
		// a later flag wins, so this is go build's own default again.
		build.Dir, build.Env = dir, append(os.Environ(), "GOFLAGS="+os.Getenv("GOFLAGS")+" -buildvcs=auto")
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("go build: %v\n%s", err, out)
		}
		out, err := exec.Command(bin, "--version").Output()
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSuffix(string(out), "\n")
	}
	check := func(row string, buildFlags ...string) {
		t.Helper()
		if got, want := version(buildFlags...), actual.Replace(documented(row)); got != want {
			t.Errorf("built as %q:\n got %s\nwant %s (docs/operations.md, with this build's commit, time and Go)", row, got, want)
		}
	}
	check("`go build ./cmd/zklock` in a git checkout")
	check("`go build -buildvcs=false`, `go run`", "-buildvcs=false")
	if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte("changed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	check("the same, with changes not committed")
}

// gitOut runs git in dir and returns its output, trimmed.
func gitOut(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}
