package main

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/zklockkit/zklockkit/internal/zkenv"
)

// --servers and $ZKLOCK_SERVERS take what zklock.Open takes, ZooKeeper's
// native connect string among them; a bad one is a usage error that says
// where the string came from and names the bad part. An empty --servers,
// or a $ZKLOCK_SERVERS set but empty, is refused rather than taken for
// the default; only an unset $ZKLOCK_SERVERS means the default.
func TestConnFlagsServers(t *testing.T) {
	for _, tc := range []struct {
		flag, env string
		emptyFlag bool // --servers "" given
		unset     bool // $ZKLOCK_SERVERS unset
		servers   []string
		err       string
	}{
		{flag: "h1:2181,h2/app?session_timeout=5s", servers: []string{"h1:2181", "h2:2181"}},
		{flag: "[::1]", servers: []string{"[::1]:2181"}},
		{env: "h1,h2:2182/app", servers: []string{"h1:2181", "h2:2182"}},
		{flag: "h3", env: "h1", servers: []string{"h3:2181"}},
		{unset: true, servers: []string{zkenv.DefaultServers}},
		{env: "", err: "$ZKLOCK_SERVERS is set but empty: set it to ZooKeeper's servers, or unset it to use 127.0.0.1:2181"},
		{env: " \t", err: "$ZKLOCK_SERVERS is set but empty"},
		{emptyFlag: true, env: "h1", err: `bad --servers "": empty; name ZooKeeper's servers (e.g. zk1:2181,zk2:2181), or leave --servers out to use $ZKLOCK_SERVERS, else 127.0.0.1:2181`},
		{flag: " ", unset: true, err: `bad --servers " ": empty`},
		{flag: "h1:0", err: `bad --servers: connection string "h1:0": port 0 is out of range (1 to 65535)`},
		{env: "h1,,h2", err: `bad --servers (from $ZKLOCK_SERVERS): connection string "h1,,h2": host 2 of 3: empty host`},
		{flag: "h1:2181 h2:2181", err: `blank inside a host (separate hosts with commas)`},
	} {
		t.Setenv(zkenv.EnvServers, tc.env)
		if tc.unset {
			os.Unsetenv(zkenv.EnvServers) // t.Setenv restores it
		}
		fs := newFlagSet("show")
		var c connFlags
		c.register(fs)
		var args []string
		if tc.flag != "" || tc.emptyFlag {
			args = []string{"--servers", tc.flag}
		}
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		servers, err := c.validate("show")
		switch {
		case tc.err == "" && (err != nil || !slices.Equal(servers, tc.servers)):
			t.Errorf("--servers %q, $%s %q: %v, %v; want %v", tc.flag, zkenv.EnvServers, tc.env, servers, err, tc.servers)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err) || codeOf(err) != ExitUsage):
			t.Errorf("--servers %q, $%s %q: %v (exit %d); want exit %d and %q", tc.flag, zkenv.EnvServers, tc.env, err, codeOf(err), ExitUsage, tc.err)
		}
	}
}
