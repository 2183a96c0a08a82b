package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zklockkit/zklockkit/cmd/zklock-chaos/internal/chaos"
)

func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{{"-mode", "huge"}, {"extra"}, {"-nosuchflag"}, {"-store", "mysql"}, {"-store", ""}} {
		var out, errb bytes.Buffer
		if code := run(args, &out, &errb); code != 2 {
			t.Errorf("%v: exit %d, want 2 (stderr %q)", args, code, errb.String())
		}
	}
	var out, errb bytes.Buffer
	if code := run([]string{"-h"}, &out, &errb); code != 0 || !strings.Contains(errb.String(), "-mode") || !strings.Contains(errb.String(), "zookeeper (znodes") {
		t.Fatalf("-h: exit %d, %q", code, errb.String())
	}
}

// -check judges a stored history without running a campaign; a violation
// exits 1 and prints the history slice.
func TestCheckStoredHistory(t *testing.T) {
	dir := t.TempDir()
	write := func(lines ...string) string {
		p := filepath.Join(dir, "history.jsonl")
		if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	const campaign = `{"seq":1,"kind":"note","t":1,"detail":"campaign {\"Name\":\"short\",\"Acquisitions\":1,\"FaultsPerKind\":1,\"Faults\":[\"kill\"]}"}`
	ok := write(campaign,
		`{"seq":2,"kind":"acquired","t":10,"proc":1,"op":1,"r":"a","token":10}`,
		`{"seq":3,"kind":"release","t":20,"proc":1,"op":1,"r":"a"}`,
		`{"seq":4,"kind":"fault","t":30,"fault":"kill","fault_id":1,"proc":2}`)
	var out, errb bytes.Buffer
	if code := run([]string{"-check", ok}, &out, &errb); code != 0 || !strings.Contains(out.String(), "PASS") {
		t.Fatalf("exit %d:\n%s%s", code, out.String(), errb.String())
	}
	bad := write(campaign,
		`{"seq":2,"kind":"acquired","t":10,"proc":1,"op":1,"r":"a","token":10}`,
		`{"seq":3,"kind":"acquired","t":15,"proc":2,"op":1,"r":"a","token":20}`,
		`{"seq":4,"kind":"release","t":20,"proc":1,"op":1,"r":"a"}`,
		`{"seq":5,"kind":"fault","t":30,"fault":"kill","fault_id":1,"proc":2}`)
	out.Reset()
	if code := run([]string{"-check", bad}, &out, &errb); code != 1 || !strings.Contains(out.String(), "VIOLATION 1/1 double-grant") ||
		!strings.Contains(out.String(), "acquired       proc=2") {
		t.Fatalf("exit %d:\n%s", code, out.String())
	}
	// -json writes the report of a re-check too.
	js := filepath.Join(dir, "report.json")
	out.Reset()
	if code := run([]string{"-check", bad, "-json", js}, &out, &errb); code != 1 {
		t.Fatalf("-check -json: exit %d:\n%s%s", code, out.String(), errb.String())
	}
	var rep chaos.Report
	if b, err := os.ReadFile(js); err != nil || json.Unmarshal(b, &rep) != nil || rep.Pass || len(rep.Violations) != 1 {
		t.Fatalf("-check -json wrote %+v (%v)", rep, err)
	}
	if code := run([]string{"-check", filepath.Join(dir, "missing.jsonl")}, &out, &errb); code != 2 {
		t.Fatalf("missing file: exit %d", code)
	}
}
