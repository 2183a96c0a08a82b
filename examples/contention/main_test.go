package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/zklockkit/zklockkit/internal/headless"
	"github.com/zklockkit/zklockkit/internal/promtest"
	"github.com/zklockkit/zklockkit/zklock"
	"github.com/zklockkit/zklockkit/zktest"
)

func TestMain(m *testing.M) { zktest.Main(m) }

// The files the test proves: the dashboard and the alert rules that
// docs/metrics.md ships.
var (
	dashboardFile = filepath.Join("..", "..", "docs", "grafana", "zklock.json")
	rulesFile     = filepath.Join("..", "..", "docs", "prometheus", "zklock-rules.yml")
)

// alertCount returns the number of alerting rules in the rules file.
func alertCount(t *testing.T) int {
	t.Helper()
	data, err := os.ReadFile(rulesFile)
	if err != nil {
		t.Fatal(err)
	}
	return len(regexp.MustCompile(`(?m)^\s*- alert: `).FindAll(data, -1))
}

// EnvScreenshot names a file the dashboard test copies a screenshot of
// Prometheus's graphs of the dashboard's queries to (the repository keeps
// one at docs/metrics-dashboard.png).
const EnvScreenshot = "ZKLOCK_DASHBOARD_SCREENSHOT"

// dashboard is the part of a Grafana dashboard model the test reads.
type dashboard struct {
	Title  string  `json:"title"`
	Panels []panel `json:"panels"`
}

type panel struct {
	ID      int    `json:"id"`
	Type    string `json:"type"`
	Title   string `json:"title"`
	Targets []struct {
		RefID    string `json:"refId"`
		Expr     string `json:"expr"`
		Instant  bool   `json:"instant"`
		Legend   string `json:"legendFormat"`
		Exemplar bool   `json:"exemplar"`
	} `json:"targets"`
	Panels          []panel `json:"panels"` // a row's
	Transformations []struct {
		Options struct {
			RenameByName map[string]string `json:"renameByName"`
		} `json:"options"`
	} `json:"transformations"`
}

// column is what a table panel calls target refID's values.
func (p panel) column(refID string) string {
	for _, tr := range p.Transformations {
		if n := tr.Options.RenameByName["Value #"+refID]; n != "" {
			return n
		}
	}
	return refID
}

// queries returns every panel's queries, rows' panels included, as
// "panel title / refId" → expression with Grafana's variables replaced as
// Grafana would for the whole range and every class.
func (d dashboard) queries(rateInterval, rng string) (map[string]string, map[string]bool) {
	exprs, instant := map[string]string{}, map[string]bool{}
	var walk func([]panel)
	walk = func(ps []panel) {
		for _, p := range ps {
			walk(p.Panels)
			for _, t := range p.Targets {
				k := p.Title + " / " + t.RefID
				exprs[k] = strings.NewReplacer("$__rate_interval", rateInterval, "$__range", rng,
					"$__interval", "1s", `"$class"`, `".*"`).Replace(t.Expr)
				instant[k] = t.Instant
			}
		}
	}
	walk(d.Panels)
	return exprs, instant
}

func loadDashboard(t *testing.T) dashboard {
	t.Helper()
	b, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	return d
}

// TestIntegration_Dashboard: a real Prometheus scrapes this example under
// contention against a real ZooKeeper, with the alert rules loaded; then
// every query of every panel of the dashboard returns data, every rule
// evaluates without error (and the lease-lost alert, after an operator
// deleted a held lock node, fires), and the wait histogram's exemplars
// reach Prometheus with the acquires' trace and span ids. The rules also
// pass promtool check rules and their promtool unit tests.
func TestIntegration_Dashboard(t *testing.T) {
	if err := promtest.Installed(); err != nil {
		t.Fatal(err) // names the install command
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	rules, err := filepath.Abs(rulesFile)
	if err != nil {
		t.Fatal(err)
	}
	nRules := alertCount(t)
	if out, err := promtest.CheckRules(ctx, rules); err != nil {
		t.Fatal(err)
	} else if !strings.Contains(out, fmt.Sprintf("SUCCESS: %d rules found", nRules)) {
		t.Errorf("promtool check rules: %s; want the file's %d", out, nRules)
	}
	if _, err := promtest.TestRules(ctx, strings.TrimSuffix(rules, ".yml")+"_test.yml"); err != nil {
		t.Error(err)
	}

	// The service, on the shared ZooKeeper (through a proxy, to take it
	// away for a while) under a root of its own.
	proxy, err := zktest.NewProxy(zktest.Shared().Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	root := zktest.UniqueRoot(t)
	sctx, stop := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- serve(sctx, ln, "zk://"+proxy.Addr()+root, 4) }()
	defer func() {
		proxy.Blackhole(false)
		stop()
		if err := <-served; err != nil {
			t.Errorf("the service: %v", err)
		}
	}()

	consoles := t.TempDir()
	prom, err := promtest.Start(promtest.Config{Targets: []string{ln.Addr().String()}, RuleFiles: []string{rules}, ConsoleDir: consoles})
	if err != nil {
		t.Fatal(err)
	}
	defer prom.Close()

	// Contention for a while; an operator deletes a lock node the batch
	// job holds (as zklock break would): a lease lost; then ZooKeeper is
	// out of reach for three seconds (shorter than the session's loss
	// margin): tries answer unavailable. The outage lasts until the service
	// has answered so at least once, at most outageMax: the example's one
	// trying caller may spend the three seconds in a Release that began
	// as the outage did (it waits for ZooKeeper); after half the session
	// timeout of silence the MaxWait callers' timeouts say unavailable too.
	admin, err := zklock.Open(ctx, "zk://"+zktest.Shared().Addr()+root)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	time.Sleep(8 * time.Second)
	deleteHeld(t, ctx, admin)
	time.Sleep(4 * time.Second)
	proxy.Blackhole(true)
	began := time.Now()
	time.Sleep(3 * time.Second)
	for !answeredUnavailable(t, ctx, "http://"+ln.Addr().String()+"/metrics") {
		if time.Since(began) > outageMax {
			t.Errorf("no acquire answered unavailable in a %v outage (a try answers within 1s)", outageMax)
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	proxy.Blackhole(false)
	t.Logf("ZooKeeper away for %v", time.Since(began).Round(time.Millisecond))
	time.Sleep(12 * time.Second)

	// Every panel's every query has data over the last 20 seconds (the
	// range queries at Grafana's resolution, the instant ones now).
	d := loadDashboard(t)
	exprs, instant := d.queries("10s", "30s")
	if len(exprs) < 8 {
		t.Fatalf("%d queries in %s: the dashboard lost its panels?", len(exprs), dashboardFile)
	}
	end := time.Now()
	for name, expr := range exprs {
		var series []promtest.Series
		if instant[name] {
			series, err = prom.Query(ctx, expr)
		} else {
			series, err = prom.QueryRange(ctx, expr, end.Add(-20*time.Second), end, time.Second)
		}
		if err != nil {
			t.Errorf("panel %q: %v", name, err)
			continue
		}
		points := 0
		for _, s := range series {
			points += s.Points
		}
		if points == 0 {
			t.Errorf("panel %q: no data for\n\t%s\nPrometheus log:\n%s", name, expr, prom.LogTail())
		} else {
			t.Logf("panel %q: %d series, %d points", name, len(series), points)
		}
	}

	// The alert rules: all loaded, evaluated, healthy; the loss alerted.
	rs, err := prom.Rules(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != nRules {
		t.Errorf("%d rules loaded, want the file's %d", len(rs), nRules)
	}
	for _, r := range rs {
		if r.Health != "ok" || r.LastError != "" || r.LastEvaluation.IsZero() {
			t.Errorf("rule %s: health %q, error %q, last evaluated %v", r.Name, r.Health, r.LastError, r.LastEvaluation)
		}
		if r.Name == "ZklockLeaseLost" && r.State != "firing" {
			t.Errorf("ZklockLeaseLost is %s after a lost lease: %+v", r.State, r)
		}
	}

	// Exemplars: Prometheus stored waits with the trace and span of the
	// acquire that waited.
	ex, err := prom.Exemplars(ctx, `zklock_acquire_duration_seconds_bucket{zklock_outcome="acquired"}`, end.Add(-time.Minute), end)
	if err != nil {
		t.Fatal(err)
	}
	slow := 0
	for _, e := range ex {
		if len(e.Labels["trace_id"]) != 32 || len(e.Labels["span_id"]) != 16 {
			t.Errorf("exemplar %+v: no trace or span id", e)
		}
		if e.Value > 0.1 {
			slow++
		}
	}
	if slow == 0 {
		t.Errorf("no exemplar of a wait over 100ms among %d", len(ex))
	}

	screenshot(t, prom, consoles, d)
}

// deleteHeld deletes a lock node the batch job holds on accounts/N, as an
// operator's zklock break would, and waits until the service counts the
// loss.
// outageMax bounds the test's outage: past half the default session
// timeout (when a wait's timeout says unavailable), under the whole of it
// (so that the sessions survive).
const outageMax = 8 * time.Second

// answeredUnavailable reports whether the service's metrics at url count
// an acquire that answered unavailable.
func answeredUnavailable(t *testing.T, ctx context.Context, url string) bool {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("the service's metrics: %v", err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "zklock_acquire_duration_seconds_count{") && strings.Contains(line, `error_type="unavailable"`) {
			return true
		}
	}
	return false
}

func deleteHeld(t *testing.T, ctx context.Context, admin *zklock.Client) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		for n := 40; n < 44; n++ {
			q, err := admin.Inspect(ctx, fmt.Sprintf("accounts/%d", n))
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range q.Holders() {
				if h.Owner.Label == "batch-job" && time.Since(h.Created) < 10*time.Second {
					if err := admin.Conn().Delete(h.Path, -1); err == nil {
						return
					}
				}
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal("the batch job held no lock for a minute")
}

// screenshot draws the dashboard's queries with Prometheus's own console
// library (a console template made from the dashboard: a graph per panel
// with its range queries, the table's instant queries evaluated by the
// server), and has headless Chromium paint it. Grafana is not packaged by
// Debian; Prometheus's consoles are.
func screenshot(t *testing.T, prom *promtest.Server, consoles string, d dashboard) {
	t.Helper()
	dst := os.Getenv(EnvScreenshot)
	if dst == "" {
		return
	}
	exprs, instant := d.queries("15s", "1m")
	var b strings.Builder
	b.WriteString(`<!DOCTYPE html><html><head><meta charset="utf-8"><title>zklock</title>
<link rel="stylesheet" href="{{ pathPrefix }}/classic/static/rickshaw/rickshaw.min.css">
<link rel="stylesheet" href="{{ pathPrefix }}/classic/static/css/prom_console.css">
<script src="{{ pathPrefix }}/classic/static/d3/d3.min.js"></script>
<script src="{{ pathPrefix }}/classic/static/rickshaw/rickshaw.min.js"></script>
<script src="{{ pathPrefix }}/classic/static/jquery/jquery.min.js"></script>
<script>var PATH_PREFIX = "{{ pathPrefix }}";</script>
<script src="{{ pathPrefix }}/classic/static/js/prom_console.js"></script>
<style>body{font:13px system-ui,sans-serif;margin:12px;color:#1d2330} h1{font-size:17px;margin:0 0 2px} p.sub{color:#666;margin:0 0 10px}
.grid{display:grid;grid-template-columns:660px 660px;gap:8px 16px} .panel{border:1px solid #dde1e8;padding:6px 8px}
h2{font-size:14px;margin:0 0 4px} table.top{display:inline-table;margin-right:24px} table.top td,table.top th{padding:2px 10px;border-bottom:1px solid #eee;text-align:left}</style>
</head><body><h1>`)
	b.WriteString(html.EscapeString(d.Title))
	b.WriteString(`</h1><p class="sub">The dashboard's queries (docs/grafana/zklock.json), drawn by Prometheus's console library over the last minute of examples/contention.</p><div class="grid">`)
	for i, p := range d.Panels {
		fmt.Fprintf(&b, `<div class="panel"><h2>%s</h2>`, html.EscapeString(p.Title))
		var graph, names []string
		for _, tg := range p.Targets {
			k := p.Title + " / " + tg.RefID
			if instant[k] {
				fmt.Fprintf(&b, "<table class=\"top\"><tr><th>class</th><th>%s</th></tr>{{ range query `%s` }}<tr><td>{{ .Labels.zklock_resource_class }}</td><td>{{ .Value | humanize }}</td></tr>{{ end }}</table>",
					html.EscapeString(p.column(tg.RefID)), exprs[k])
				continue
			}
			graph = append(graph, exprs[k])
			names = append(names, strings.NewReplacer("{{", "[[", "}}", "]]").Replace(tg.Legend))
		}
		if len(graph) > 0 {
			e, _ := json.Marshal(graph)
			n, _ := json.Marshal(names)
			fmt.Fprintf(&b, `<div id="g%d"></div><script>new PromConsole.Graph({node: document.querySelector("#g%d"), expr: %s, name: %s, duration: 60, endTime: Date.now() / 1000, width: 520, height: 170});</script>`, i, i, e, n)
		}
		b.WriteString(`</div>`)
	}
	b.WriteString(`</div></body></html>`)
	if err := os.WriteFile(filepath.Join(consoles, "zklock.html"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	pageURL := prom.URL() + "/consoles/zklock.html"
	resp, err := http.Get(pageURL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("the console page: %s", resp.Status)
	}
	chromium(t, "--hide-scrollbars", "--window-size=1380,880", "--virtual-time-budget=15000", "--screenshot="+dst, pageURL)
	t.Logf("screenshot written to %s", dst)
}

func chromium(t *testing.T, args ...string) {
	t.Helper()
	if _, err := headless.Chromium(context.Background(), args...); err != nil {
		t.Fatal(err) // names the install command when Chromium is missing
	}
}
