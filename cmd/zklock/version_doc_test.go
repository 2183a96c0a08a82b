package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// versionShape reduces a --version line to its form: the version, commit,
// Go version and platform replaced by names, and the marks of a modified
// tree dropped (whether the tree under test is modified varies).
func versionShape(s string) string {
	for _, r := range []struct{ re, with string }{
		{`\+dirty`, ""},
		{` modified`, ""},
		{`\bv\d+\.\d+\.\d+(?:-[0-9A-Za-z.]+)*`, "VERSION"},
		{`\b[0-9a-f]{12}\b`, "COMMIT"},
		{`\bgo\d+(?:\.\d+)*`, "GO"},
		{`\b[a-z0-9]+/[a-z0-9]+\)`, "PLATFORM)"},
	} {
		s = regexp.MustCompile(r.re).ReplaceAllString(s, r.with)
	}
	return strings.TrimSpace(s)
}

// The binary's --version line has one of the forms docs/operations.md
// shows (a release, a checkout build with its commit, a build without
// version control information). The issue that asked for this: a stamped
// checkout build printed "zklock v0.0.0-2026...-93600a6d14e3 commit
// 93600a6d14e3", where the page said "(devel) commit ...".
func TestVersionAsDocumented(t *testing.T) {
	page, err := os.ReadFile("../../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	var shapes []string
	for _, m := range regexp.MustCompile("`(zklock (?:v|\\()[^`]*\\))`").FindAllStringSubmatch(string(page), -1) {
		shapes = append(shapes, versionShape(m[1]))
	}
	if len(shapes) < 3 {
		t.Fatalf("docs/operations.md shows %d forms of zklock --version (%q); want the three of Version", len(shapes), shapes)
	}
	check := func(what, out string) {
		t.Helper()
		if !slices.Contains(shapes, versionShape(out)) {
			t.Fatalf("%s: zklock --version printed %q, of the form %q; docs/operations.md shows the forms %q",
				what, out, versionShape(out), shapes)
		}
		t.Logf("%s: %s: the form %q", what, out, versionShape(out))
	}
	res := zkl(t, nil, "--version")
	if res.code != 0 {
		t.Fatalf("zklock --version: exit %d, %s", res.code, res.stderr)
	}
	check("the binary under test", strings.TrimSpace(res.stdout))

	// A build from a checkout that records its commit: a clone of this
	// one's commit (go build stamps no git worktree, and GOFLAGS may say
	// -buildvcs=false).
	git := func(dir string, args ...string) string {
		t.Helper()
		out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("git %q (a checkout build needs git and this repository): %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	head := git("../..", "rev-parse", "HEAD")
	clone := t.TempDir()
	git("../..", "clone", "-q", "--shared", "--no-checkout", ".", clone)
	git(clone, "checkout", "-q", head)
	stamped := filepath.Join(t.TempDir(), "zklock")
	build := exec.Command("go", "build", "-buildvcs=true", "-o", stamped, "./cmd/zklock")
	build.Dir = clone
	build.Env = append(os.Environ(), "GOFLAGS=-buildvcs=true")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build in a clone: %v\n%s", err, out)
	}
	out, err := exec.Command(stamped, "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	v := strings.TrimSpace(string(out))
	check("a checkout build", v)
	if !strings.Contains(v, "-"+head[:12]+" commit "+head[:12]+" ") {
		t.Errorf("a checkout build of %s says %q; want its pseudo-version and commit", head[:12], v)
	}
}
