package main

import (
	"bufio"
	"net"
	"os"
	"strings"
	"testing"

	"github.com/zklockkit/zklockkit/zklock"
)

// A secret given to zklock (in --servers or $ZKLOCK_SERVERS, --password,
// $ZKLOCK_PASSWORD) is never printed, whether the connection string fails
// to parse or ZooKeeper cannot be reached: the cases of the core's
// zklock/testdata/secret-dsns.txt, run through the binary.
func TestSecretsAreNeverPrinted(t *testing.T) {
	refusing, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := refusing.Addr().String()
	refusing.Close()
	silent, err := net.Listen("tcp", "127.0.0.1:0") // accepts, never answers
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()

	type run struct {
		what, secret string
		env, args    []string
	}
	var runs []run
	f, err := os.Open("../../zklock/testdata/secret-dsns.txt")
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		secret, dsn, _ := strings.Cut(line, "\t")
		dsn = strings.NewReplacer("{refused}", refused, "{silent}", silent.Addr().String()).Replace(dsn)
		runs = append(runs,
			run{"--servers " + dsn, secret, nil, []string{"ls", "--connect-timeout", "1s", "--servers", dsn}},
			run{"$ZKLOCK_SERVERS=" + dsn, secret, []string{"ZKLOCK_SERVERS=" + dsn}, []string{"show", "--connect-timeout", "1s", "x"}})
	}
	f.Close()
	runs = append(runs,
		run{"--password", "hunter2", nil, []string{"ls", "--connect-timeout", "1s", "--servers", refused, "--user", "app", "--password", "hunter2"}},
		run{"--password, silent", "hunter2", nil, []string{"show", "--connect-timeout", "1s", "--servers", silent.Addr().String(), "--user", "app", "--password", "hunter2", "x"}},
		run{"$" + zklock.EnvPassword, "hunter2", []string{zklock.EnvPassword + "=hunter2"}, []string{"ls", "--connect-timeout", "1s", "--servers", "zk://app@" + refused + "/app"}},
		run{"--password without --user", "hunter2", nil, []string{"ls", "--password", "hunter2"}},
	)
	if len(runs) < 60 {
		t.Fatalf("%d runs; the case file holds more", len(runs))
	}
	for _, r := range runs {
		t.Run(r.what, func(t *testing.T) {
			t.Parallel()
			res := zkl(t, r.env, r.args...)
			if res.code == 0 {
				t.Errorf("exit 0; every case must fail")
			}
			for name, out := range map[string]string{"stdout": res.stdout, "stderr": res.stderr} {
				if strings.Contains(out, r.secret) {
					t.Errorf("the secret %q is on %s: %q", r.secret, name, out)
				}
			}
		})
	}
}
