package zklock_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zklockkit/zklockkit/zklock"
)

// secretCase is a connection string with a secret in it (see
// testdata/secret-dsns.txt).
type secretCase struct {
	secret, dsn string
	line        int
}

// secretCases reads testdata/secret-dsns.txt, with {refused} and {silent}
// replaced by addresses.
func secretCases(t *testing.T, refused, silent string) []secretCase {
	t.Helper()
	f, err := os.Open("testdata/secret-dsns.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var cases []secretCase
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		secret, dsn, ok := strings.Cut(line, "\t")
		if !ok {
			t.Fatalf("testdata/secret-dsns.txt:%d: no tab", n)
		}
		dsn = strings.NewReplacer("{refused}", refused, "{silent}", silent).Replace(dsn)
		cases = append(cases, secretCase{secret, dsn, n})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return cases
}

// syncBuf is a bytes.Buffer safe for the logger's goroutines.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// A secret of a connection string (the password of its user info, a
// password= parameter, also percent-encoded or written with characters a
// password must not hold unencoded) is never printed: not in ParseDSN's or
// Open's error however it is formatted, nor in any line the client logs
// at any level, whether the string fails to parse, names a host that
// refuses, does not resolve, or never answers.
func TestIntegration_SecretsAreNeverPrinted(t *testing.T) {
	refusing, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := refusing.Addr().String()
	refusing.Close()
	silent := newProxy(t)
	silent.Blackhole(true)
	ctx := testCtx(t)
	t.Setenv(zklock.EnvPassword, "")

	cases := secretCases(t, refused, silent.Addr())
	var wg sync.WaitGroup
	for _, tc := range cases {
		wg.Add(1)
		go func() {
			defer wg.Done()
			where := fmt.Sprintf("secret-dsns.txt:%d %q", tc.line, tc.dsn)
			var printed []string
			if _, _, err := zklock.ParseDSN(tc.dsn); err != nil {
				printed = append(printed, "ParseDSN: "+err.Error(), fmt.Sprintf("ParseDSN %%+v: %+v", err), fmt.Sprintf("ParseDSN %%#v: %#v", err))
			}
			var logs syncBuf
			logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
			octx, cancel := context.WithTimeout(ctx, 1500*time.Millisecond)
			c, err := zklock.Open(octx, tc.dsn, zklock.WithLogger(logger))
			cancel()
			if c != nil {
				c.Close()
				t.Errorf("%s: Open succeeded; every case must fail", where)
				return
			}
			printed = append(printed, "Open: "+err.Error(), fmt.Sprintf("Open %%+v: %+v", err), fmt.Sprintf("Open %%#v: %#v", err))
			for _, l := range strings.Split(logs.String(), "\n") {
				printed = append(printed, "log: "+l)
			}
			for _, p := range printed {
				if strings.Contains(p, tc.secret) {
					t.Errorf("%s: the secret %q is printed: %s", where, tc.secret, p)
				}
			}
		}()
	}
	wg.Wait()
	if len(cases) < 30 {
		t.Fatalf("%d cases read; the file holds more", len(cases))
	}
}
