package main

import (
	"strings"
	"testing"

	"github.com/zklockkit/zklockkit/cmd/zklock-bench/internal/bench"
	"github.com/zklockkit/zklockkit/zktest"
)

func TestPeersFlag(t *testing.T) {
	if code, _, stderr := runCmd(t, "-peers=sometimes"); code != 2 || !strings.Contains(stderr, "auto, required or off") {
		t.Errorf("-peers=sometimes: exit %d, %q", code, stderr)
	}
	code, _, stderr := runCmd(t, "-h")
	if code != 0 || !strings.Contains(stderr, "-peers") || !strings.Contains(stderr, "(default auto)") {
		t.Errorf("-h: exit %d, usage %q", code, stderr)
	}
}

// With -peers=required the table compares zklock with Curator and kazoo.
func TestIntegration_PeersRequired(t *testing.T) {
	for _, p := range bench.Peers() {
		if err := p.Installed(); err != nil {
			t.Fatal(err)
		}
	}
	code, stdout, stderr := runCmd(t, "-servers", zktest.Shared().Addr(), "-quick", "-rounds", "1",
		"-only", "uncontended", "-peers=required")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"against Apache Curator and kazoo", "zklock/Curator", "zklock/kazoo"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("table lacks %q:\n%s", want, stdout)
		}
	}
	code, stdout, stderr = runCmd(t, "-servers", zktest.Shared().Addr(), "-quick", "-rounds", "1",
		"-only", "uncontended", "-peers=off")
	if code != 0 || strings.Contains(stdout, "Curator") {
		t.Errorf("-peers=off: exit %d:\n%s%s", code, stdout, stderr)
	}
}
