package canary_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zklockkit/zklockkit/internal/canary"
)

// The canaries' names are distinct and each is known.
func TestNames(t *testing.T) {
	seen := map[canary.Name]bool{}
	for _, n := range canary.All {
		if seen[n] {
			t.Errorf("canary %q listed twice", n)
		}
		seen[n] = true
		if !canary.Known(n) {
			t.Errorf("canary %q is not Known", n)
		}
	}
	if canary.Known("no-such-canary") {
		t.Error(`Known("no-such-canary") = true`)
	}
}

// probeMarker is what testdata/probe prints when its canary branch runs.
const probeMarker = "probe-marker"

// buildProbe builds testdata/probe into dir, with the build tags given.
func buildProbe(t *testing.T, dir string, tags ...string) string {
	t.Helper()
	out := filepath.Join(dir, "probe")
	if len(tags) > 0 {
		out += "-" + strings.Join(tags, "-")
	}
	args := []string{"build", "-o", out}
	if len(tags) > 0 {
		args = append(args, "-tags", strings.Join(tags, ","))
	}
	cmd := exec.Command("go", append(args, "./testdata/probe")...)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, b)
	}
	return out
}

// runProbe runs the probe with ZKLOCK_CANARY set to name.
func runProbe(t *testing.T, bin string, name canary.Name) (string, error) {
	t.Helper()
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), canary.EnvVar+"="+string(name))
	b, err := cmd.CombinedOutput()
	return string(b), err
}

// A release build (no zklock_canary tag) carries no canary: the compiler
// drops every branch On guards, and the code that reads ZKLOCK_CANARY is
// not linked in, so no environment can turn one on. The same program
// built with the tag carries both, and runs the branch when its canary is
// named (and refuses a name that is no canary's), which shows that the
// test would see them.
func TestReleaseBuildCarriesNoCanary(t *testing.T) {
	dir := t.TempDir()
	release := buildProbe(t, dir)
	tagged := buildProbe(t, dir, canary.Tag)

	bin, err := os.ReadFile(release)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{probeMarker, canary.EnvVar} {
		if bytes.Contains(bin, []byte(s)) {
			t.Errorf("the release build of the probe contains %q: a canary branch or the code that turns one on was compiled in", s)
		}
	}
	if out, err := runProbe(t, release, canary.RequeueNoWatch); err != nil || strings.Contains(out, probeMarker) {
		t.Errorf("release probe with %s=%s: %v\n%s", canary.EnvVar, canary.RequeueNoWatch, err, out)
	}

	bin, err = os.ReadFile(tagged)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{probeMarker, canary.EnvVar} {
		if !bytes.Contains(bin, []byte(s)) {
			t.Errorf("the canary build of the probe lacks %q: this test cannot tell the two builds apart", s)
		}
	}
	if out, err := runProbe(t, tagged, canary.RequeueNoWatch); err != nil || !strings.Contains(out, probeMarker) {
		t.Errorf("canary probe with %s=%s did not run the branch: %v\n%s", canary.EnvVar, canary.RequeueNoWatch, err, out)
	}
	if out, err := runProbe(t, tagged, canary.SemaphoreNAhead); err != nil || strings.Contains(out, probeMarker) {
		t.Errorf("canary probe with another canary on ran the branch: %v\n%s", err, out)
	}
	out, err := runProbe(t, tagged, "requeue-no-wach")
	if err == nil || !strings.Contains(out, "names no canary") {
		t.Errorf("canary probe with a misspelt canary: %v\n%s; want it refused", err, out)
	}
}
