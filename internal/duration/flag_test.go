package duration_test

import (
	"bytes"
	"errors"
	"flag"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/zklockkit/zklockkit/internal/duration"
)

func newFlagSet() *flag.FlagSet {
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return fs
}

func TestVar(t *testing.T) {
	fs := newFlagSet()
	var d time.Duration
	v := duration.Var(fs, &d, "wait", 3*time.Second, "give up after this `duration`")
	if d != 3*time.Second || v.String() != "3s" || v.Get() != 3*time.Second {
		t.Fatalf("default: %v %q %v", d, v.String(), v.Get())
	}
	if err := fs.Parse([]string{"--wait", "1m30s"}); err != nil || d != 90*time.Second || v.Err() != nil {
		t.Fatalf("--wait 1m30s: %v, %v, Err %v", d, err, v.Err())
	}
	err := fs.Parse([]string{"--wait", "5"})
	const want = `bad --wait "5": missing unit, did you mean 5s? (write a number with a unit: 250ms, 5s or 1m30s)`
	if err == nil || !strings.HasSuffix(err.Error(), want) {
		t.Errorf("flag package's error %v, want it to end with %s", err, want)
	}
	var e *duration.Error
	if !errors.As(v.Err(), &e) || e.Flag != "wait" || e.Suggestion != "5s" || v.Err().Error() != want {
		t.Errorf("Err() = %v, want %s", v.Err(), want)
	}
	if d != 90*time.Second {
		t.Errorf("a refused value changed the duration to %v", d)
	}
	if err := fs.Parse([]string{"--wait", "2s"}); err != nil || v.Err() != nil || d != 2*time.Second {
		t.Errorf("a good value after a bad one: %v, %v, Err %v", d, err, v.Err())
	}
}

// The help text of a Var flag is the same as that of fs.DurationVar.
func TestVarHelp(t *testing.T) {
	help := func(define func(fs *flag.FlagSet)) string {
		fs := newFlagSet()
		define(fs)
		var b bytes.Buffer
		fs.SetOutput(&b)
		fs.PrintDefaults()
		return b.String()
	}
	var d time.Duration
	for _, def := range []time.Duration{0, 10 * time.Second} {
		got := help(func(fs *flag.FlagSet) { duration.Var(fs, &d, "grace", def, "wait this `duration`") })
		want := help(func(fs *flag.FlagSet) { fs.DurationVar(&d, "grace", def, "wait this `duration`") })
		if got != want {
			t.Errorf("default %v: help\n%s\nwant (as DurationVar)\n%s", def, got, want)
		}
	}
}
