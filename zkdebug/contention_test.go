package zkdebug_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"
	"github.com/zklockkit/zklockkit/zkdebug"
	"github.com/zklockkit/zklockkit/zklock"
	"github.com/zklockkit/zklockkit/zktest"
)

//go:noinline
func hotCallSite(ctx context.Context, c *zklock.Client, id string) error {
	l, err := c.Acquire(ctx, "accounts/"+id)
	if err != nil {
		return err
	}
	return l.Release(ctx)
}

//go:noinline
func coldCallSite(ctx context.Context, c *zklock.Client, id string) error {
	l, err := c.Acquire(ctx, "reports/"+id)
	if err != nil {
		return err
	}
	return l.Release(ctx)
}

// The contention profile, read back with pprof's own parser, puts the
// call site whose acquires waited longest first, labels samples with the
// resource class, and with ?seconds=N holds only that window.
func TestIntegration_ContentionProfile(t *testing.T) {
	ctx := context.Background()
	prof := zkdebug.NewContentionProfile()
	root := zktest.UniqueRoot(t)
	c := connect(t, root, zklock.WithObserver(prof))
	holder := connect(t, root)
	srv := httptest.NewServer(prof)
	defer srv.Close()

	// hot: each acquire waits about 150ms for another session's holder:
	// well above what twenty uncontended acquires cost together on a
	// loaded machine (181ms at load 18, where 30ms each made it a tie).
	for i := range 5 {
		h, err := holder.Acquire(ctx, "accounts/42")
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- hotCallSite(ctx, c, "42") }()
		time.Sleep(150 * time.Millisecond)
		if err := h.Release(ctx); err != nil {
			t.Fatal(err)
		}
		if err := <-done; err != nil {
			t.Fatal(i, err)
		}
	}
	// cold: twenty acquires nobody else wants.
	for range 20 {
		if err := coldCallSite(ctx, c, "daily"); err != nil {
			t.Fatal(err)
		}
	}
	p := fetch(t, srv.URL)
	sites := bySite(t, p)
	if len(sites) < 2 || !strings.HasSuffix(sites[0].name, ".hotCallSite") {
		t.Fatalf("call sites by delay: %+v; want hotCallSite first", sites)
	}
	hot, cold := sites[0], find(sites, ".coldCallSite")
	if hot.count != 5 || cold.count != 20 || hot.delay < 5*25*time.Millisecond {
		t.Fatalf("hot %+v, cold %+v; want 5 acquires waiting >= 125ms in all, and 20", hot, cold)
	}
	if hot.class != "accounts/{id}" || cold.class != "reports/daily" {
		t.Fatalf("classes %q and %q", hot.class, cold.class)
	}

	// A delta profile holds only what happens during its window.
	got := make(chan *profile.Profile, 1)
	go func() { got <- fetch(t, srv.URL+"?seconds=1") }()
	time.Sleep(200 * time.Millisecond)
	for range 3 {
		if err := coldCallSite(ctx, c, "daily"); err != nil {
			t.Fatal(err)
		}
	}
	sites = bySite(t, <-got)
	if len(sites) != 1 || sites[0].count != 3 || !strings.HasSuffix(sites[0].name, ".coldCallSite") {
		t.Fatalf("delta profile: %+v; want the 3 cold acquires alone", sites)
	}

	// Failed acquires count: a try that finds the lock busy.
	h, err := holder.Acquire(ctx, "accounts/7")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.TryAcquire(ctx, "accounts/7"); !errors.Is(err, zklock.ErrLocked) {
		t.Fatal(err)
	}
	h.Release(ctx)
	if n := total(fetch(t, srv.URL)); n != 5+20+3+1 {
		t.Fatalf("%d acquires in the profile, want 29", n)
	}

	for _, bad := range []string{"?seconds=0", "?seconds=x", "?seconds=4000"} {
		resp, err := http.Get(srv.URL + bad)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Fatalf("GET %s: %s", bad, resp.Status)
		}
	}
}

// Off, the profile costs nothing per acquire: no allocation.
func TestContentionProfileOffAllocatesNothing(t *testing.T) {
	prof := zkdebug.NewContentionProfile()
	prof.SetFraction(0)
	e := zklock.Event{Kind: zklock.EventAcquired, Resource: "accounts/42", Wait: time.Millisecond}
	if n := testing.AllocsPerRun(1000, func() { prof.Observe(context.Background(), e) }); n != 0 {
		t.Fatalf("%v allocations per acquire with the profile off", n)
	}
	// On, a call site already seen costs no allocation either.
	prof.SetFraction(1)
	e.Resource = "reports/daily"
	if n := testing.AllocsPerRun(1000, func() { prof.Observe(context.Background(), e) }); n != 0 {
		t.Fatalf("%v allocations per acquire at a known call site", n)
	}
}

func fetch(t *testing.T, url string) *profile.Profile {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Error(err)
		return nil
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET %s: %s %s", url, resp.Status, body)
		return nil
	}
	p, err := profile.ParseData(body)
	if err != nil {
		t.Errorf("pprof cannot parse the profile: %v", err)
		return nil
	}
	if err := p.CheckValid(); err != nil {
		t.Errorf("invalid profile: %v", err)
	}
	return p
}

type site struct {
	name  string
	class string
	count int64
	delay time.Duration
}

// bySite sums samples by their first frame (the call site), largest delay
// first.
func bySite(t *testing.T, p *profile.Profile) []site {
	t.Helper()
	if p == nil {
		t.FailNow()
	}
	m := map[string]*site{}
	for _, s := range p.Sample {
		if len(s.Location) == 0 || len(s.Location[0].Line) == 0 {
			t.Fatalf("sample without a call site: %v", s)
		}
		name := s.Location[0].Line[0].Function.Name
		x := m[name]
		if x == nil {
			x = &site{name: name, class: s.Label["resource_class"][0]}
			m[name] = x
		}
		x.count += s.Value[0]
		x.delay += time.Duration(s.Value[1])
	}
	var out []site
	for _, x := range m {
		out = append(out, *x)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].delay > out[j].delay })
	return out
}

func find(sites []site, suffix string) site {
	for _, s := range sites {
		if strings.HasSuffix(s.name, suffix) {
			return s
		}
	}
	return site{}
}

func total(p *profile.Profile) int64 {
	var n int64
	for _, s := range p.Sample {
		n += s.Value[0]
	}
	return n
}

// BenchmarkContentionProfile: an uncontended acquire+release cycle with the
// profile off (not installed), and on; the difference is its cost.
func BenchmarkContentionProfile(b *testing.B) {
	for _, on := range []bool{false, true} {
		name := "off"
		if on {
			name = "on"
		}
		b.Run(name, func(b *testing.B) {
			var opts []zklock.Option
			if on {
				opts = append(opts, zklock.WithObserver(zkdebug.NewContentionProfile()))
			}
			c := connect(b, zktest.UniqueRoot(b), opts...)
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				l, err := c.Acquire(ctx, "bench")
				if err != nil {
					b.Fatal(err)
				}
				if err := l.Release(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkContentionObserve: what recording one acquire costs, measured
// alone (the machine's noise drowns it in a ZooKeeper round trip); divide
// by an uncontended cycle (BenchmarkContentionProfile/off) for the share.
func BenchmarkContentionObserve(b *testing.B) {
	prof := zkdebug.NewContentionProfile()
	e := zklock.Event{Kind: zklock.EventAcquired, Resource: "accounts/42", Wait: time.Millisecond}
	ctx := context.Background()
	b.ReportAllocs()
	for range b.N {
		prof.Observe(ctx, e)
	}
}
