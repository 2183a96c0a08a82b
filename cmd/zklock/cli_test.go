package main

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/zklockkit/zklockkit/zklock"
)

func TestFormatAge(t *testing.T) {
	for d, want := range map[time.Duration]string{
		-time.Second: "0s",
		0:            "0s",
		388*time.Millisecond + 400*time.Microsecond:  "388ms",
		12340 * time.Millisecond:                     "12.3s",
		3*time.Minute + 12400*time.Millisecond:       "3m12s",
		2*time.Hour + 3*time.Minute + 20*time.Second: "2h3m",
	} {
		if got := formatAge(d); got != want {
			t.Errorf("formatAge(%v) = %q, want %q", d, got, want)
		}
	}
}

// TestWriteQueueEscapes: data read from ZooKeeper cannot reach the
// operator's terminal as control sequences.
func TestWriteQueueEscapes(t *testing.T) {
	q := &zklock.Queue{Resource: "r", Path: "/zklock/r", Nodes: []zklock.QueueNode{{
		Name: "_c_x-lock-0000000001", Holder: true,
		Owner: zklock.Owner{Host: "h\x1b]0;pwned\x07", Label: "a\nb\x1b[31mred"}, Created: time.Now()}},
		Unknown: []string{"junk\x1b[2J"}}
	var b bytes.Buffer
	if err := WriteQueue(&b, q, time.Now()); err != nil {
		t.Fatal(err)
	}
	if strings.ContainsAny(b.String(), "\x1b\x07") || strings.Count(b.String(), "\n") != 8 {
		t.Errorf("control characters reached the output:\n%q", b.String())
	}
	for _, want := range []string{`h\x1b]0;pwned\a`, `a\nb\x1b[31mred`, `junk\x1b[2J`} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, b.String())
		}
	}
}

func TestParseArgsInterspersed(t *testing.T) {
	for _, tc := range []struct {
		args         []string
		interspersed bool
		pos          string
		json         bool
	}{
		{[]string{"a", "--json"}, true, "a", true},
		{[]string{"--json", "a", "b"}, true, "a b", true},
		{[]string{"a", "--", "--json"}, true, "a --json", false},
		{[]string{"a", "--json"}, false, "a --json", false},
		{[]string{"--", "-x"}, false, "-x", false},
	} {
		fs := newFlagSet("t")
		j := fs.Bool("json", false, "")
		pos, err := parseArgs(fs, tc.args, tc.interspersed)
		if err != nil || strings.Join(pos, " ") != tc.pos || *j != tc.json {
			t.Errorf("%q (interspersed %v) = %q, json %v, %v", tc.args, tc.interspersed, pos, *j, err)
		}
	}
	_, err := parseArgs(newFlagSet("t"), []string{"-h"}, true)
	if !errors.Is(err, errHelp) {
		t.Errorf("-h: %v", err)
	}
}

func TestInherit(t *testing.T) {
	top, sub := newFlagSet("top"), newFlagSet("sub")
	var a, b connFlags
	a.register(top)
	b.register(sub)
	if err := top.Parse([]string{"--root", "/top", "--servers", "h:1"}); err != nil {
		t.Fatal(err)
	}
	if err := sub.Parse([]string{"--root", "/sub"}); err != nil {
		t.Fatal(err)
	}
	if err := inherit(top, sub); err != nil {
		t.Fatal(err)
	}
	if b.root != "/sub" || b.servers != "h:1" {
		t.Errorf("root %q servers %q: the subcommand's own flag wins, the rest is inherited", b.root, b.servers)
	}
}

func TestCodeOf(t *testing.T) {
	for err, want := range map[error]int{
		nil:                                   ExitOK,
		errors.New("boom"):                    ExitError,
		fmt.Errorf("x: %w", zklock.ErrLocked): ExitBusy,
		fmt.Errorf("x: %w", zklock.ErrWaitTimeout):        ExitTimeout,
		fmt.Errorf("x: %w", zklock.ErrUnavailable):        ExitUnreachable,
		&zklock.LostError{Reason: zklock.LossNodeDeleted}: ExitLeaseLost,
		&zklock.ResourceError{Reason: "bad"}:              ExitUsage,
		fmt.Errorf("x: %w", zklock.ErrInvalidOption):      ExitUsage,
		withCode(42, nil):                                 42,
		usageErrorf("run", "x"):                           ExitUsage,
	} {
		if got := codeOf(err); got != want {
			t.Errorf("codeOf(%v) = %d, want %d", err, got, want)
		}
	}
}

// TestWatchChanges: piped watch prints one line per change and a summary.
func TestWatchChanges(t *testing.T) {
	node := func(name string, pos int, holder bool, label string) zklock.QueueNode {
		return zklock.QueueNode{Name: name, Path: "/q/" + name, Position: pos, Holder: holder, Token: int64(pos + 10),
			Owner: zklock.Owner{Label: label}}
	}
	var out bytes.Buffer
	w := &watcher{e: &env{stdout: &out}}
	steps := []*zklock.Queue{
		{Nodes: []zklock.QueueNode{node("a", 0, true, "A"), node("b", 1, false, "B")}},
		{Nodes: []zklock.QueueNode{node("a", 0, true, "A"), node("b", 1, false, "B")}}, // no change: no line
		{Nodes: []zklock.QueueNode{node("b", 0, true, "B"), node("c", 1, false, "C")}},
		{Nodes: []zklock.QueueNode{node("b", 0, true, "B")}},
		{},
	}
	for _, q := range steps {
		if err := w.printChanges(q); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		f := strings.Fields(line)
		got = append(got, strings.Join(f[1:], " "))
	}
	want := []string{
		"holds pos 0 exclusive A token 10 node a",
		"waiting pos 1 exclusive B token 11 node b",
		"queue 1 holder, 1 waiting",
		"released pos 0 exclusive A token 10 node a",
		"acquired pos 0 exclusive B token 10 node b",
		"waiting pos 1 exclusive C token 11 node c",
		"queue 1 holder, 1 waiting",
		"left pos 1 exclusive C token 11 node c",
		"queue 1 holder, 0 waiting",
		"released pos 0 exclusive B token 10 node b",
		"queue empty",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestMainUsage runs Main in-process for inputs that need no ZooKeeper.
func TestMainUsage(t *testing.T) {
	var out, errb bytes.Buffer
	if code := Main([]string{"help", "run"}, nil, &out, &errb); code != 0 || !strings.Contains(out.String(), "Exit codes:") {
		t.Errorf("help run: %d %q %q", code, out.String(), errb.String())
	}
	out.Reset()
	if code := Main([]string{"show", "--raw", "x"}, nil, &out, &errb); code != ExitUsage ||
		errb.String() != "zklock show: bad raw path \"x\": must be an absolute znode path such as /locks/foo (see 'zklock show --help')\n" {
		t.Errorf("show --raw x: %d %q", code, errb.String())
	}
}
