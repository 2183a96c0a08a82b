package zklock

import (
	"errors"
	"testing"
	"time"
)

func TestParseDSN(t *testing.T) {
	servers, opts, err := ParseDSN("zk://h1:2181,h2/locks/app?session_timeout=7s&label=w1&user=u&password=p")
	if err != nil {
		t.Fatal(err)
	}
	if len(servers) != 2 || servers[0] != "h1:2181" || servers[1] != "h2:2181" {
		t.Fatalf("servers %v", servers)
	}
	cfg := defaultClientConfig()
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.err != nil || cfg.root != "/locks/app" || cfg.sessionTimeout != 7*time.Second || cfg.label != "w1" || len(cfg.auth) != 1 {
		t.Fatalf("cfg %+v", cfg)
	}
	if s, _, err := ParseDSN(" 127.0.0.1:2181 "); err != nil || s[0] != "127.0.0.1:2181" {
		t.Fatalf("plain: %v %v", s, err)
	}
	for _, bad := range []string{"", "http://h:1", "zk://h?session_timeout=x", "zk://h?bogus=1", "zk://h?user=u", ","} {
		if _, _, err := ParseDSN(bad); !errors.Is(err, ErrInvalidOption) {
			t.Errorf("ParseDSN(%q) = %v, want ErrInvalidOption", bad, err)
		}
	}
}
