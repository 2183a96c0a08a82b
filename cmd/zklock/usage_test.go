package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/zklockkit/zklockkit/internal/duration"
)

func TestHelpOnEveryCommand(t *testing.T) {
	for _, name := range []string{"ls", "top", "show", "watch", "run", "break", "completion"} {
		for _, args := range [][]string{{name, "--help"}, {name, "-h"}, {"help", name}} {
			r := zkl(t, nil, args...)
			if r.code != 0 || r.stderr != "" || !strings.HasPrefix(r.stdout, "Usage: zklock "+name+" ") {
				t.Errorf("%q: exit %d, stderr %q, stdout starts %q", args, r.code, r.stderr, head(r.stdout))
			}
			for _, flag := range []string{"-servers", "-root", "-session-timeout", "-user", "-password", "-tls-ca", "-tls-cert", "-tls-key"} {
				if !strings.Contains(r.stdout, flag) {
					t.Errorf("%q: help lacks connection flag %s", args, flag)
				}
			}
		}
	}
	r := zkl(t, nil, "run", "--help")
	for _, want := range []string{"ZKLOCK_TOKEN", "111", "112", "113", "114", "-grace", "-wait", "-try", "-label",
		"-shared", "-limit", "-conflict-exit-code", "  -E code\n", "min(session timeout/3, 1s)"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("run --help lacks %q", want)
		}
	}
	for _, args := range [][]string{{"help"}, {"--help"}, {"-h"}} {
		r := zkl(t, nil, args...)
		if r.code != 0 || !strings.Contains(r.stdout, "Commands:") || !strings.Contains(r.stdout, "Exit codes:") {
			t.Errorf("%q: exit %d, stdout %q", args, r.code, head(r.stdout))
		}
	}
}

func head(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}

// TestBadInput: every bad input ends with a non-zero exit code and one
// line on stderr that says what is wrong.
func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	notExec := filepath.Join(dir, "script")
	if err := os.WriteFile(notExec, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	down := closedAddr(t)
	cases := []struct {
		args []string
		env  []string
		code int
		want string
	}{
		{nil, nil, 2, "no command given"},
		{[]string{"frobnicate"}, nil, 2, `unknown command "frobnicate"`},
		{[]string{"help", "frobnicate"}, nil, 2, `unknown command "frobnicate"`},
		{[]string{"--nope", "ls"}, nil, 2, "flag provided but not defined: -nope"},
		{[]string{"show", "--nope", "x"}, nil, 2, "flag provided but not defined: -nope"},
		{[]string{"run", "--resource", "r"}, nil, 2, `missing CMD after --resource "r": zklock run --resource R [flags] -- CMD [ARGS...]`},
		{[]string{"run", "--resource", "r", "--"}, nil, 2, "missing CMD after -- ("},
		{[]string{"run", "--", "true"}, nil, 2, "missing RESOURCE"},
		{[]string{"run"}, nil, 2, "missing RESOURCE"},
		{[]string{"run", "--resource", "", "--", "true"}, nil, 2, "missing RESOURCE"},
		{[]string{"run", "r"}, nil, 2, `missing CMD after RESOURCE "r": zklock run RESOURCE [flags --] CMD [ARGS...]`},
		{[]string{"run", "r", "--"}, nil, 2, "missing CMD after -- ("},
		{[]string{"run", "r", "--try", "--"}, nil, 2, "missing CMD after -- ("},
		{[]string{"run", "r", ""}, nil, 2, `bad CMD "": an empty command name`},
		{[]string{"run", "r", "--bogus", "--", "true"}, nil, 2, "flag provided but not defined: -bogus"},
		{[]string{"run", "r", "extra", "--", "true"}, nil, 2, `unexpected "extra" between RESOURCE and --`},
		{[]string{"run", "r", "--try", "--wait", "1s", "--", "true"}, nil, 2, "--try and --wait exclude each other"},
		{[]string{"run", "--shared", "--limit", "2", "r", "true"}, nil, 2, "--shared and --limit exclude each other"},
		{[]string{"run", "--limit", "0", "r", "true"}, nil, 2, "bad --limit 0"},
		{[]string{"run", "-E", "256", "r", "true"}, nil, 2, `invalid value "256" for flag -E: must be an exit code from 0 to 255`},
		{[]string{"run", "--conflict-exit-code", "-1", "r", "true"}, nil, 2, `invalid value "-1" for flag -conflict-exit-code`},
		{[]string{"break"}, nil, 2, "missing RESOURCE"},
		{[]string{"break", "a", "b"}, nil, 2, "one RESOURCE expected"},
		{[]string{"completion"}, nil, 2, "one shell expected"},
		{[]string{"completion", "tcsh"}, nil, 2, `unknown shell "tcsh"`},
		{[]string{"run", "--resource", "r", "--wait", "abc", "--", "true"}, nil, 2, `bad --wait "abc": want a number with a unit, such as 250ms, 5s or 1m30s`},
		{[]string{"run", "r", "--wait", "5", "--", "true"}, nil, 2, `bad --wait "5": missing unit, did you mean 5s?`},
		{[]string{"run", "--resource", "r", "--wait", "-1s", "--", "true"}, nil, 2, "bad --wait"},
		{[]string{"run", "--resource", "r", "--try", "--wait", "1s", "--", "true"}, nil, 2, "--try and --wait exclude each other"},
		{[]string{"run", "--resource", "r", "--grace", "-1s", "--", "true"}, nil, 2, "bad --grace"},
		{[]string{"run", "--resource", "a\x01b", "--", "true"}, nil, 2, "control character"},
		{[]string{"run", "--resource", "x", "--raw", "--", "true"}, nil, 2, "bad raw path"},
		{[]string{"show"}, nil, 2, "missing RESOURCE"},
		{[]string{"show", "a", "b"}, nil, 2, "one RESOURCE expected"},
		{[]string{"show", ""}, nil, 2, "empty name"},
		{[]string{"show", "--raw", "relative/path"}, nil, 2, "bad raw path"},
		{[]string{"show", "--raw", "/zookeeper/quota"}, nil, 2, "reserved by ZooKeeper"},
		{[]string{"show", "--limit", "-2", "x"}, nil, 2, "bad --limit"},
		{[]string{"watch"}, nil, 2, "missing RESOURCE"},
		{[]string{"watch", "--interval", "0s", "x"}, nil, 2, "bad --interval"},
		{[]string{"watch", "--for", "-1s", "x"}, nil, 2, "bad --for"},
		{[]string{"ls", "a", "b"}, nil, 2, "at most one PREFIX"},
		{[]string{"show", "--servers", "h:99999", "x"}, nil, 2, `bad --servers: connection string "h:99999": port 99999 is out of range (1 to 65535)`},
		{[]string{"show", "--servers", "h:port", "x"}, nil, 2, `bad --servers: connection string "h:port": port "port" is not a number`},
		{[]string{"show", "--servers", "zk://", "x"}, nil, 2, `bad --servers: connection string "zk://": no host`},
		{[]string{"show", "--servers", "http://h:2181", "x"}, nil, 2, `unknown scheme "http://"`},
		{[]string{"show", "--servers", "zk://h:2181/?bogus=1", "x"}, nil, 2, `unknown parameter "bogus"`},
		{[]string{"show", "--servers", "h1:2181,h2:2181/app/", "x"}, nil, 2, `bad --servers: connection string "h1:2181,h2:2181/app/": root "/app/": must not end with "/"`},
		{[]string{"show", "--servers", "::1", "x"}, nil, 2, `an IPv6 address must be in brackets, as [::1] or [::1]:2181`},
		{[]string{"show", "--servers", "zk://app:s3cret@h1,,h2", "x"}, nil, 2, `connection string "zk://app:xxxxx@h1,,h2": host 2 of 3: empty host`},
		{[]string{"ls"}, []string{"ZKLOCK_SERVERS=,,"}, 2, "bad --servers (from $ZKLOCK_SERVERS): connection string \",,\": host 1 of 3: empty host"},
		{[]string{"show", "--root", "relative", "x"}, nil, 2, "bad --root"},
		{[]string{"show", "--session-timeout", "soon", "x"}, nil, 2, `bad --session-timeout "soon": want a number with a unit`},
		{[]string{"show", "--session-timeout", "10000", "x"}, nil, 2, `bad --session-timeout "10000": missing unit, did you mean 10000ms?`},
		{[]string{"--connect-timeout", "5sec", "ls"}, nil, 2, `zklock: bad --connect-timeout "5sec": unknown unit "sec", did you mean 5s?`},
		// an explicitly empty --servers (or $ZKLOCK_SERVERS) is refused, not taken for the default
		{[]string{"ls", "--servers", ""}, nil, 2, `zklock ls: bad --servers "": empty; name ZooKeeper's servers`},
		{[]string{"--servers", " ", "show", "x"}, nil, 2, `zklock show: bad --servers " ": empty`},
		{[]string{"ls", "--connect-timeout", "1s"}, []string{"ZKLOCK_SERVERS="}, 2, "$ZKLOCK_SERVERS is set but empty: set it to ZooKeeper's servers, or unset it to use 127.0.0.1:2181"},
		{[]string{"show", "--session-timeout", "1ms", "x"}, nil, 2, "bad --session-timeout"},
		{[]string{"show", "--connect-timeout", "0s", "x"}, nil, 2, "bad --connect-timeout"},
		{[]string{"show", "--user", "u", "x"}, nil, 2, "--user needs --password"},
		{[]string{"show", "--password", "p", "x"}, nil, 2, "--password needs --user"},
		{[]string{"show", "--tls-cert", "c.pem", "x"}, nil, 2, "--tls-cert needs --tls-key"},
		{[]string{"show", "--tls-ca", filepath.Join(dir, "missing.pem"), "x"}, nil, 2, "bad --tls-ca"},
		{[]string{"show", "--tls-ca", notExec, "x"}, nil, 2, "no PEM certificate"},
		// ZooKeeper unreachable: exit 113 for every command
		{[]string{"show", "--servers", down, "--connect-timeout", "1s", "x"}, nil, 113, "cannot reach ZooKeeper at " + down},
		{[]string{"ls", "--connect-timeout", "1s"}, []string{"ZKLOCK_SERVERS=" + down}, 113, "cannot reach ZooKeeper"},
		{[]string{"watch", "--servers", down, "--connect-timeout", "1s", "x"}, nil, 113, "cannot reach ZooKeeper"},
		{[]string{"top", "--servers", down, "--connect-timeout", "1s"}, nil, 113, "cannot reach ZooKeeper"},
		{[]string{"run", "--servers", down, "--connect-timeout", "1s", "--resource", "x", "--", "touch", filepath.Join(dir, "ran")}, nil, 113, "cannot reach ZooKeeper"},
		{[]string{"break", "--servers", down, "--connect-timeout", "1s", "x"}, nil, 113, "cannot reach ZooKeeper"},
		// a name that does not resolve (yet) is waited for, as a server
		// that refuses: the pod that starts before its DNS record
		{[]string{"show", "--servers", "no-such-host.invalid:2181", "--connect-timeout", "1s", "x"}, nil, 113, "cannot reach ZooKeeper at no-such-host.invalid:2181 within 1s"},
	}
	for _, tc := range cases {
		r := zkl(t, tc.env, tc.args...)
		if r.code != tc.code || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("zklock %q: exit %d, stderr %q; want exit %d and %q", tc.args, r.code, r.stderr, tc.code, tc.want)
			continue
		}
		oneLine(t, strings.Join(tc.args, " "), r.stderr)
		if r.stdout != "" {
			t.Errorf("zklock %q: unexpected stdout %q", tc.args, r.stdout)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "ran")); err == nil {
		t.Error("run ran its command although ZooKeeper was unreachable")
	}
}

// TestRunMissingCmd: a run without CMD says what is missing in the words
// that were typed; "--" is named only when it was given.
func TestRunMissingCmd(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "accounts/43"}, `missing CMD after RESOURCE "accounts/43"`},
		{[]string{"run", "--wait", "1s", "accounts/43"}, `missing CMD after RESOURCE "accounts/43"`},
		{[]string{"run", "--resource", "accounts/43"}, `missing CMD after --resource "accounts/43"`},
		{[]string{"run", "accounts/43", "--"}, "missing CMD after --"},
		{[]string{"run", "accounts/43", "--wait", "1s", "--"}, "missing CMD after --"},
		{[]string{"run", "--resource", "accounts/43", "--"}, "missing CMD after --"},
	} {
		var out, errb bytes.Buffer
		code := Main(tc.args, nil, &out, &errb)
		msg := strings.TrimPrefix(errb.String(), "zklock run: ")
		typedDashes := slices.Contains(tc.args, "--")
		if code != ExitUsage || !strings.HasPrefix(msg, tc.want) || strings.Contains(msg, "after -- ") != typedDashes {
			t.Errorf("zklock %q: exit %d, stderr %q; want exit %d and %q (naming -- only when it was typed)",
				tc.args, code, errb.String(), ExitUsage, tc.want)
		}
	}
}

// TestEveryDurationFlagSuggests: every duration flag of every command
// (connection flags included) answers a bare number with the unit it most
// likely lacks, naming the flag, as the connection string's parameters do.
func TestEveryDurationFlagSuggests(t *testing.T) {
	n := 0
	for _, c := range append([]*command{nil}, commands...) {
		fs := newFlagSet("zklock")
		var cf connFlags
		cf.register(fs)
		name := ""
		if c != nil {
			name = c.name
			c.setup(fs, &cf)
		}
		fs.VisitAll(func(f *flag.Flag) {
			if typ := fmt.Sprintf("%T", f.Value); typ == "*flag.durationValue" {
				t.Errorf("zklock %s --%s is a flag.Duration: its errors say only \"parse error\"", name, f.Name)
			}
			if _, ok := f.Value.(*duration.Value); !ok {
				return
			}
			n++
			args := []string{"--" + f.Name, "5", "x"}
			if name != "" {
				args = append([]string{name}, args...)
			}
			var out, errb bytes.Buffer
			code := Main(args, nil, &out, &errb)
			want := fmt.Sprintf(`bad --%s "5": missing unit, did you mean 5s? (write a number with a unit: 250ms, 5s or 1m30s)`, f.Name)
			if code != ExitUsage || !strings.Contains(errb.String(), want) {
				t.Errorf("zklock %q: exit %d, stderr %q; want exit %d and %q", args, code, errb.String(), ExitUsage, want)
			}
		})
	}
	if n < 6 {
		t.Errorf("found %d duration flags; want at least --session-timeout, --connect-timeout, --wait, --grace, --interval and --for", n)
	}
}
