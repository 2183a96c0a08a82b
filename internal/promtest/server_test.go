package promtest_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zklockkit/zklockkit/internal/promtest"
)

// A server scrapes its target (here itself), evaluates a rule file, and
// answers instant and range queries and lists its rules through its HTTP
// API.
func TestServer(t *testing.T) {
	if err := promtest.Installed(); err != nil {
		t.Fatal(err) // names the install command
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rules := filepath.Join(t.TempDir(), "rules.yml")
	if err := os.WriteFile(rules, []byte("groups:\n  - name: t\n    rules:\n      - alert: Up\n        expr: up == 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := promtest.CheckRules(ctx, rules); err != nil {
		t.Fatal(err)
	}
	// A server that scrapes a port where nothing listens: up is 0.
	s, err := promtest.Start(promtest.Config{Targets: []string{"127.0.0.1:1"}, RuleFiles: []string{rules}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var up []promtest.Series
	deadline := time.Now().Add(time.Minute)
	for len(up) == 0 && time.Now().Before(deadline) {
		time.Sleep(500 * time.Millisecond)
		if up, err = s.Query(ctx, "up"); err != nil {
			t.Fatal(err)
		}
	}
	if len(up) != 1 || up[0].Value != 0 || up[0].Labels["job"] != "service" || up[0].Labels["instance"] != "127.0.0.1:1" {
		t.Fatalf("up = %+v", up)
	}
	if r, err := s.QueryRange(ctx, "up", time.Now().Add(-time.Minute), time.Now(), time.Second); err != nil || len(r) != 1 || r[0].Points == 0 {
		t.Errorf("range: %+v, %v", r, err)
	}
	if _, err := s.Query(ctx, "up{"); err == nil || !strings.Contains(err.Error(), "bad_data") {
		t.Errorf("a bad query: %v", err)
	}
	waitRules := time.Now().Add(time.Minute)
	for {
		rs, err := s.Rules(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(rs) == 1 && !rs[0].LastEvaluation.IsZero() {
			if rs[0].Name != "Up" || rs[0].Health != "ok" || rs[0].State != "inactive" {
				t.Errorf("rule %+v", rs[0])
			}
			break
		}
		if time.Now().After(waitRules) {
			t.Fatalf("rules %+v", rs)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}
