package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zklockkit/zklockkit/internal/zkenv"
	"github.com/zklockkit/zklockkit/zktest"
)

func TestMain(m *testing.M) { zktest.Main(m) }

// The demo, built and run as `make demo` runs it: worker processes take
// turns, the mid-run `zklock show` appears, and it exits 0 by itself.
func TestDemo(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "basic")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "-workers", "3", "-rounds", "2", "-hold", "150ms")
	cmd.Env = append(os.Environ(), zkenv.EnvServers+"="+zktest.Shared().Addr())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("demo: %v\n%s", err, out)
	}
	text := string(out)
	if n := strings.Count(text, "ACQUIRED after"); n != 6 {
		t.Fatalf("%d acquisitions, want 3 workers x 2 rounds:\n%s", n, text)
	}
	for _, want := range []string{"enqueued at position", "$ zklock show demo/nightly-report", "POS  STATE", "no lock node is left behind"} {
		if !strings.Contains(text, want) {
			t.Fatalf("output lacks %q:\n%s", want, text)
		}
	}
}
