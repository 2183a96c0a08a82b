package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zklockkit/zklockkit/zklock"
	"github.com/zklockkit/zklockkit/zktest"
)

// topContention makes two contended resources under root whose order
// differs by key: "top/old" is held since about a second before
// "top/hot" and has one waiter, queued first; "top/hot" has three.
// By waiters "top/hot" comes first; by longest wait and by hold age,
// "top/old".
func topContention(t *testing.T, root string) {
	t.Helper()
	holdWithWaiters(t, root, "top/old", "old-holder", "old-waiter")
	time.Sleep(1200 * time.Millisecond) // ages differ by more than their rounding
	holdWithWaiters(t, root, "top/hot", "hot-holder", "hot-1", "hot-2", "hot-3")
}

// topRows returns the rows of the last table in text, each as its
// fields joined by single spaces.
func topRows(text string) []string {
	i := strings.LastIndex(text, "RESOURCE ")
	if i < 0 {
		return nil
	}
	var rows []string
	for _, line := range strings.Split(text[i:], "\n")[1:] {
		if f := strings.Fields(line); len(f) > 0 {
			rows = append(rows, strings.Join(f, " "))
		}
	}
	return rows
}

// resourceOrder is the resource column of rows.
func resourceOrder(rows []string) string {
	var rs []string
	for _, r := range rows {
		rs = append(rs, strings.Fields(r)[0])
	}
	return strings.Join(rs, " ")
}

// tmuxTerm is a shell in a real terminal: a tmux session of its own
// (own socket), driven with send-keys and read with capture-pane.
type tmuxTerm struct {
	t      *testing.T
	socket string
}

func newTmux(t *testing.T) *tmuxTerm {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Fatal("this test needs tmux: apt-get install -y tmux (scripts/ensure-test-deps.sh tmux)")
	}
	tm := &tmuxTerm{t: t, socket: filepath.Join(t.TempDir(), "tmux.sock")}
	tm.tmux("-f", "/dev/null", "new-session", "-d", "-s", "top", "-x", "160", "-y", "40", "sh")
	t.Cleanup(func() { _ = exec.Command("tmux", "-S", tm.socket, "kill-server").Run() })
	return tm
}

func (tm *tmuxTerm) tmux(args ...string) string {
	tm.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-S", tm.socket}, args...)...).CombinedOutput()
	if err != nil {
		tm.t.Fatalf("tmux %q: %v\n%s", args, err, out)
	}
	return string(out)
}

// send types keys (tmux key names: "Enter", "C-c", or literal text).
func (tm *tmuxTerm) send(keys ...string) {
	tm.tmux(append([]string{"send-keys", "-t", "top"}, keys...)...)
}

// screen is what the terminal shows now.
func (tm *tmuxTerm) screen() string { return tm.tmux("capture-pane", "-p", "-t", "top") }

// waitFor waits until the screen satisfies cond, and returns it.
func (tm *tmuxTerm) waitFor(what string, cond func(screen string) bool) string {
	tm.t.Helper()
	var s string
	deadline := time.Now().Add(60 * time.Second)
	for s = tm.screen(); !cond(s); s = tm.screen() {
		if time.Now().After(deadline) {
			tm.t.Fatalf("timed out waiting for %s; the screen:\n%s", what, s)
		}
		time.Sleep(100 * time.Millisecond)
	}
	return s
}

// startTop types a command line that runs top in the terminal, then
// says its exit code and whether the terminal's settings are as before.
func (tm *tmuxTerm) startTop(root string, args ...string) {
	line := "clear; S=$(stty -g); echo BEFORE-TOP; " + bin + " top --servers " + zkAddr + " --root " + root + " " +
		strings.Join(args, " ") + "; echo EXIT=$?; [ \"$S\" = \"$(stty -g)\" ] && echo TTY-RESTORED; echo TOP-DONE"
	tm.send(line, "Enter")
}

// afterTop waits for top to have exited and checks it exited 0 and gave
// the terminal back: the settings as before, the shell's screen (not
// top's) showing.
func (tm *tmuxTerm) afterTop() {
	tm.t.Helper()
	done := regexp.MustCompile(`(?m)^TOP-DONE$`)
	s := tm.waitFor("top to exit", done.MatchString)
	if !regexp.MustCompile(`(?m)^EXIT=0$`).MatchString(s) {
		tm.t.Errorf("top did not exit 0:\n%s", s)
	}
	if !regexp.MustCompile(`(?m)^TTY-RESTORED$`).MatchString(s) {
		tm.t.Errorf("the terminal's settings (stty -g) differ after top:\n%s", s)
	}
	if !strings.Contains(s, "BEFORE-TOP") || strings.Contains(s, "RESOURCE ") {
		tm.t.Errorf("the shell's screen is not back (alternate screen not left):\n%s", s)
	}
}

// TestTopTerminal runs top in a real terminal (tmux) against ZooKeeper
// with contention made by the test: the screen shows the resources and
// their holders, the sort keys reorder the rows, a smaller terminal gets
// a table cut to fit, and q quits with exit 0 and the terminal as it was.
// The interval is long: what changes on the screen is drawn by the keys
// and the resize themselves.
func TestTopTerminal(t *testing.T) {
	root := zktest.UniqueRoot(t)
	topContention(t, root)
	host, _ := os.Hostname()
	pid := strconv.Itoa(os.Getpid())
	tm := newTmux(t)
	tm.startTop(root, "--interval", "10m")

	s := tm.waitFor("top's table", func(s string) bool { return len(topRows(s)) == 2 })
	rows := topRows(s)
	if resourceOrder(rows) != "top/hot top/old" || !strings.Contains(s, "sorted by waiters") {
		t.Errorf("by waiters, want top/hot then top/old:\n%s", s)
	}
	for i, want := range []string{
		`^top/hot 1 3 \S+ \S+ hot-holder \(` + regexp.QuoteMeta(host) + `, pid ` + pid + `\)$`,
		`^top/old 1 1 \S+ \S+ old-holder \(` + regexp.QuoteMeta(host) + `, pid ` + pid + `\)$`,
	} {
		if !regexp.MustCompile(want).MatchString(rows[i]) {
			t.Errorf("row %d = %q, want %s", i, rows[i], want)
		}
	}

	tm.send("h") // by hold age
	s = tm.waitFor("the rows by hold age", func(s string) bool { return strings.Contains(s, "sorted by hold age") })
	if got := resourceOrder(topRows(s)); got != "top/old top/hot" {
		t.Errorf("after h, order %q, want top/old top/hot:\n%s", got, s)
	}
	tm.send("w") // back to waiters
	s = tm.waitFor("the rows by waiters", func(s string) bool { return strings.Contains(s, "sorted by waiters") })
	if got := resourceOrder(topRows(s)); got != "top/hot top/old" {
		t.Errorf("after w, order %q, want top/hot top/old:\n%s", got, s)
	}
	tm.send("l") // by longest wait
	s = tm.waitFor("the rows by longest wait", func(s string) bool { return strings.Contains(s, "sorted by longest wait") })
	if got := resourceOrder(topRows(s)); got != "top/old top/hot" {
		t.Errorf("after l, order %q, want top/old top/hot:\n%s", got, s)
	}

	// 7 lines: 4 of header, a blank, the table's header, one row; the
	// last says how many more.
	tm.tmux("resize-window", "-t", "top", "-y", "7")
	s = tm.waitFor("the table cut to 7 lines", func(s string) bool { return strings.Contains(s, "... 1 more") })
	if n := len(regexp.MustCompile(`(?m)^top/(old|hot) `).FindAllString(s, -1)); n != 1 {
		t.Errorf("in 7 lines, %d rows; want 1:\n%s", n, s)
	}
	tm.tmux("resize-window", "-t", "top", "-y", "40")

	tm.send("q")
	tm.afterTop()
}

// TestTopTerminalCtrlC: Ctrl-C in the terminal quits top as q does.
func TestTopTerminalCtrlC(t *testing.T) {
	root := zktest.UniqueRoot(t)
	holdWithWaiters(t, root, "top/one", "holder", "waiter")
	tm := newTmux(t)
	tm.startTop(root)
	tm.waitFor("top's table", func(s string) bool { return len(topRows(s)) == 1 })
	tm.send("C-c")
	tm.afterTop()
}

// TestTopPiped: with stdout not a terminal, top prints one plain table
// per refresh (no control sequences); a change seen by a watch refreshes
// it long before --interval; SIGINT ends it with exit 0.
func TestTopPiped(t *testing.T) {
	root := zktest.UniqueRoot(t)
	topContention(t, root)
	cmd, out, errb := start(t, nil, "top", "--root", root, "--interval", "10m")
	waitOutput(t, out, "top/hot")
	first := out.String()
	if strings.Count(first, "RESOURCE ") != 1 || resourceOrder(topRows(first)) != "top/hot top/old" {
		t.Fatalf("first refresh:\n%s", first)
	}
	// A new waiter on top/old: its queue's watch fires; the interval is 10 minutes.
	c := client(t, root, zklock.WithLabel("late"))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _, _ = c.Acquire(ctx, "top/old") }()
	eventually(t, "a refresh showing the new waiter", func() bool {
		return regexp.MustCompile(`(?m)^top/old +1 +2 `).MatchString(out.String())
	})
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if code := exitOf(t, cmd); code != 0 || errb.String() != "" {
		t.Errorf("exit %d, stderr %q", code, errb.String())
	}
	s := out.String()
	if strings.ContainsAny(s, "\x1b\r") {
		t.Errorf("control characters in piped output:\n%q", s)
	}
	header := regexp.MustCompile(`(?m)^zklock top: 2 in use of 2 resources under ` + regexp.QuoteMeta(root) + `, sorted by waiters\n\d\d:\d\d:\d\d  \d+ ZooKeeper reads \(at most 500\); on change, at least every 10m0s\n\nRESOURCE +HOLDERS +WAITING +LONGEST-WAIT +HELD +HOLDER\n`)
	if n := len(header.FindAllString(s, -1)); n < 2 || n != strings.Count(s, "RESOURCE ") {
		t.Errorf("want one headed table per refresh, at least 2; got %d headers for %d tables:\n%s", n, strings.Count(s, "RESOURCE "), s)
	}
}

// topDoc is "zklock top --json"'s output.
type topDoc struct {
	Time      time.Time
	Root      string
	Prefix    string
	Sort      string
	Total     int
	Empty     int
	Unread    int
	Reads     int
	MaxReads  int `json:"max_reads"`
	Resources []struct {
		Resource           string
		Path               string
		Nodes              int
		Inspected          bool
		Holders            *int
		Waiting            *int
		LongestWaitSeconds *float64 `json:"longest_wait_seconds"`
		HeldSeconds        *float64 `json:"held_seconds"`
		Holder             *struct {
			Label string
			Host  string
			PID   int
			Token int64
			State string
		}
	}
}

// TestTopOnceJSON: --once --json prints one JSON object with the fields
// docs/operations.md shows, and exits 0.
func TestTopOnceJSON(t *testing.T) {
	root := zktest.UniqueRoot(t)
	topContention(t, root)
	// An empty queue, as a released lock leaves it until ZooKeeper removes
	// it (made directly: a container that never had a child stays).
	if _, err := client(t, root).Conn().CreateContainer(root+"/"+zklock.EscapeResource("top/idle"), nil, zk.FlagContainer, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	r := zkl(t, nil, "top", "--once", "--json", "--root", root, "--sort", "held", "top/")
	if r.code != 0 || r.stderr != "" || strings.Count(r.stdout, "\n") != 1 {
		t.Fatalf("exit %d, stderr %q, stdout %q: want one line", r.code, r.stderr, r.stdout)
	}
	var doc topDoc
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatalf("%v:\n%s", err, r.stdout)
	}
	if doc.Root != root || doc.Prefix != "top/" || doc.Sort != "held" || doc.Total != 3 || doc.Empty != 1 || doc.Unread != 0 ||
		doc.MaxReads != DefaultTopMaxReads || doc.Reads != TopReads(2, 4)+1 || time.Since(doc.Time) > time.Minute ||
		len(doc.Resources) != 2 || doc.Resources[0].Resource != "top/old" || doc.Resources[1].Resource != "top/hot" {
		t.Fatalf("top --once --json = %s", r.stdout)
	}
	host, _ := os.Hostname()
	for i, want := range []struct {
		label            string
		nodes, waiting   int
		minHeld, minWait float64
	}{{"old-holder", 2, 1, 1.2, 1.2}, {"hot-holder", 4, 3, 0, 0}} {
		res := doc.Resources[i]
		if !res.Inspected || res.Nodes != want.nodes || *res.Holders != 1 || *res.Waiting != want.waiting ||
			*res.HeldSeconds < want.minHeld || *res.LongestWaitSeconds < want.minWait || *res.LongestWaitSeconds > *res.HeldSeconds ||
			res.Holder == nil || res.Holder.Label != want.label || res.Holder.Host != host || res.Holder.PID != os.Getpid() ||
			res.Holder.State != "holds" || res.Path != root+"/"+zklock.EscapeResource(res.Resource) {
			t.Errorf("resource %d = %+v, holder %+v", i, res, res.Holder)
		}
	}
	// The field names are the docs' (and stay so): compare the key sets.
	var got, documented any
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(docBlock(t, "json", `"max_reads"`)), &documented); err != nil {
		t.Fatalf("docs/operations.md's top JSON example does not parse: %v", err)
	}
	if g, d := jsonKeys(got, ""), jsonKeys(documented, ""); !slices.Equal(g, d) {
		t.Errorf("top --json's fields differ from docs/operations.md's example:\n got %q\ndocs %q", g, d)
	}
}

// jsonKeys lists the key paths in v ("resources[].holder.label"), sorted,
// each once.
func jsonKeys(v any, prefix string) []string {
	var keys []string
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			keys = append(keys, prefix+k)
			keys = append(keys, jsonKeys(x, prefix+k+".")...)
		}
	case []any:
		for _, x := range v {
			keys = append(keys, jsonKeys(x, strings.TrimSuffix(prefix, ".")+"[].")...)
		}
	}
	slices.Sort(keys)
	return slices.Compact(keys)
}

// docBlock returns the fenced block of docs/operations.md in language
// lang that contains sub.
func docBlock(t *testing.T, lang, sub string) string {
	t.Helper()
	doc, err := os.ReadFile("../../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, block := range strings.Split(string(doc), "```"+lang+"\n")[1:] {
		if body, _, ok := strings.Cut(block, "```"); ok && strings.Contains(body, sub) {
			return body
		}
	}
	t.Fatalf("docs/operations.md has no ```%s block with %s", lang, sub)
	return ""
}

// TestTopUsage: bad flags of top are usage errors.
func TestTopUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"top", "a", "b"}, "at most one PREFIX expected"},
		{[]string{"top", "--sort", "cpu"}, `bad --sort "cpu": one of waiters, longest or held`},
		{[]string{"top", "--interval", "100ms"}, "bad --interval 100ms: must be at least 200ms"},
		{[]string{"top", "--for", "-1s"}, "bad --for -1s: must not be negative"},
		{[]string{"top", "--once", "--for", "1s"}, "--once and --for exclude each other"},
		{[]string{"top", "--max-reads", "1"}, "bad --max-reads 1: must be at least 2"},
	} {
		r := zkl(t, nil, tc.args...)
		if r.code != ExitUsage || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("zklock %q: exit %d, stderr %q; want exit %d and %q", tc.args, r.code, r.stderr, ExitUsage, tc.want)
		}
	}
}

// TestTopQuitsWhileZooKeeperStalls: q ends top at once even while a
// refresh waits on a ZooKeeper that stopped answering (a blackholing
// proxy), rather than when the refresh gives up.
func TestTopQuitsWhileZooKeeperStalls(t *testing.T) {
	root := zktest.UniqueRoot(t)
	holdWithWaiters(t, root, "top/one", "holder", "waiter")
	proxy, err := zktest.NewProxy(zkAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.Close()
	tm := newTmux(t)
	line := "clear; " + bin + " top --servers " + proxy.Addr() + " --root " + root +
		" --interval 250ms --session-timeout 30s --connect-timeout 30s; echo TOP-DONE"
	tm.send(line, "Enter")
	tm.waitFor("top's table", func(s string) bool { return len(topRows(s)) == 1 })
	proxy.Blackhole(true)
	time.Sleep(time.Second) // a refresh is now waiting for answers that do not come
	start := time.Now()
	tm.send("q")
	tm.waitFor("top to exit", regexp.MustCompile(`(?m)^TOP-DONE$`).MatchString)
	// The refresh would give up after seconds (the session's receive
	// timeout, the 30s --connect-timeout): q does not wait for it.
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("q took %v to end top while ZooKeeper stalled", d)
	}
}
