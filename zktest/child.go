package zktest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// Child is the test binary run again as a child process, for a test that
// must stop a lock holder with signals (PauseProcess) or kill it: the
// child runs a function of the test package instead of the tests, given a
// spec in an environment variable, and speaks in lines on its stdout.
//
// In TestMain, before anything else, the package runs the child's part
// when it is the child (RunChild):
//
//	zktest.RunChild(holderEnv, runHolder) // runHolder(spec holderSpec) error prints "HELD 42", then ...
//
// and a test starts it with StartChild(t, holderEnv, spec), reads it with
// Next(t, "HELD"), and pauses it with PauseProcess(child.Cmd.Process).
type Child struct {
	Cmd   *exec.Cmd
	Stdin io.WriteCloser
	lines chan string
}

// StartChild runs the test binary again with env set to spec as JSON and
// no test selected; the child's stderr is the test's. The child is
// resumed (if paused) and killed when the test ends.
func StartChild(t testing.TB, env string, spec any) *Child {
	t.Helper()
	raw, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	c := &Child{Cmd: exec.Command(self, "-test.run=^$"), lines: make(chan string, 16)}
	c.Cmd.Env = append(os.Environ(), env+"="+string(raw))
	c.Cmd.Stderr = os.Stderr
	if c.Stdin, err = c.Cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := c.Cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = ResumeProcess(c.Cmd.Process)
		_ = c.Cmd.Process.Kill()
		_ = c.Cmd.Wait()
	})
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			c.lines <- sc.Text()
		}
		close(c.lines)
	}()
	return c
}

// Next returns the rest of the child's next line, which must begin with
// word and a space; it fails the test if the child says something else,
// ends, or says nothing within a minute.
func (c *Child) Next(t testing.TB, word string) string {
	t.Helper()
	select {
	case l, ok := <-c.lines:
		if !ok || !strings.HasPrefix(l, word+" ") {
			t.Fatalf("child process said %q; want %s ...", l, word)
		}
		return strings.TrimPrefix(l, word+" ")
	case <-time.After(time.Minute):
		t.Fatalf("child process: no %s in a minute", word)
	}
	return ""
}

// RunChild runs the child's part and exits, if this process is a child
// that StartChild started with env: it decodes the spec into an S, calls
// run with it, and exits with status 0; or, when the spec cannot be
// decoded or run fails, prints "ERROR " and the error on stdout (where
// the test's Next reads it) and exits with status 1. In any other process
// it returns at once. Call it first in TestMain.
func RunChild[S any](env string, run func(S) error) {
	raw, ok := os.LookupEnv(env)
	if !ok {
		return
	}
	var spec S
	err := json.Unmarshal([]byte(raw), &spec)
	if err != nil {
		err = fmt.Errorf("zktest: child spec in %s: %w", env, err)
	} else {
		err = run(spec)
	}
	if err != nil {
		fmt.Println("ERROR", err)
		os.Exit(1)
	}
	os.Exit(0)
}
