package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/zklockkit/zklockkit/internal/pgtest"
	"github.com/zklockkit/zklockkit/internal/zkenv"
	"github.com/zklockkit/zklockkit/zktest"
)

// A short tick lets the paused replica's session expire in about 2s.
func TestMain(m *testing.M) {
	zktest.Main(m, zktest.WithTickTime(250*time.Millisecond))
}

// The demo, built and run as a user runs it, on SQLite and on PostgreSQL:
// with the fence, the paused replica's late write is refused and the
// ledger holds only A's payment; without it, the late write goes through
// and the account pays out 130 of 100. It exits 0 by itself.
func TestDemo(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "fence")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	pg, err := pgtest.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close()
	for _, db := range []struct{ name, dsn string }{{"sqlite", ""}, {"postgres", pg.DSN()}} {
		t.Run(db.name, func(t *testing.T) {
			cmd := exec.Command(bin)
			cmd.Env = append(os.Environ(), zkenv.EnvServers+"="+zktest.Shared().Addr(), EnvPostgres+"="+db.dsn)
			out, err := cmd.CombinedOutput()
			text := string(out)
			if err != nil {
				t.Fatalf("demo: %v\n%s", err, text)
			}
			t.Log("\n" + text)
			fenced, unfenced, ok := strings.Cut(text, "== account u")
			if !ok || !strings.Contains(text, "database: "+db.name) {
				t.Fatalf("output:\n%s", text)
			}
			for _, want := range []*regexp.Regexp{
				regexp.MustCompile(`A: took the lock after .* answered: 200 paid 60; balance 40`),
				regexp.MustCompile(`B: resumed \(SIGCONT\) and answered: 409 refused: fence: token \d+ for "accounts/f[0-9a-f]+" is stale: the fence holds \d+`),
				regexp.MustCompile(`(?m)^  \d+ +A +60 +\d+ +40\n(?:paid out 60 of 100, balance 40: never overdrawn\.)`),
			} {
				if !want.MatchString(fenced) {
					t.Fatalf("fenced account: no match for %s in:\n%s", want, fenced)
				}
			}
			for _, want := range []*regexp.Regexp{
				regexp.MustCompile(`B: resumed \(SIGCONT\) and answered: 200 paid 70; balance 30`),
				regexp.MustCompile(`(?m)^  \d+ +A +60 +\d+ +40\n  \d+ +B +70 +\d+ +30\npaid out 130 of 100, balance 30: overdrawn by 30`),
			} {
				if !want.MatchString(unfenced) {
					t.Fatalf("unfenced account: no match for %s in:\n%s", want, unfenced)
				}
			}
		})
	}
}
