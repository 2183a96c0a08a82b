package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/zklockkit/zklockkit/internal/zkenv"
)

// --servers and $ZKLOCK_SERVERS take what zklock.Open takes, ZooKeeper's
// native connect string among them; a bad one is a usage error that says
// where the string came from and names the bad part.
func TestConnFlagsServers(t *testing.T) {
	for _, tc := range []struct {
		flag, env string
		servers   []string
		err       string
	}{
		{flag: "h1:2181,h2/app?session_timeout=5s", servers: []string{"h1:2181", "h2:2181"}},
		{flag: "[::1]", servers: []string{"[::1]:2181"}},
		{env: "h1,h2:2182/app", servers: []string{"h1:2181", "h2:2182"}},
		{flag: "h3", env: "h1", servers: []string{"h3:2181"}},
		{env: "", servers: []string{zkenv.DefaultServers}},
		{flag: "h1:0", err: `bad --servers: connection string "h1:0": port 0 is out of range (1 to 65535)`},
		{env: "h1,,h2", err: `bad --servers (from $ZKLOCK_SERVERS): connection string "h1,,h2": host 2 of 3: empty host`},
		{flag: "h1:2181 h2:2181", err: `blank inside a host (separate hosts with commas)`},
	} {
		t.Setenv(zkenv.EnvServers, tc.env)
		fs := newFlagSet("show")
		var c connFlags
		c.register(fs)
		var args []string
		if tc.flag != "" {
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
