package bench

import (
	"testing"
	"time"
)

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		in   []float64
		want float64
	}{
		{nil, 0},
		{[]float64{3}, 3},
		{[]float64{5, 1, 3}, 3},
		{[]float64{4, 1, 3, 2}, 2.5},
	} {
		if got := median(tc.in); got != tc.want {
			t.Errorf("median(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
	in := []float64{3, 1, 2}
	median(in)
	if in[0] != 3 || in[1] != 1 || in[2] != 2 {
		t.Errorf("median reordered its argument: %v", in)
	}
}

func TestConfigDefaults(t *testing.T) {
	full := Config{}.withDefaults()
	if full.Rounds != 5 || full.Sizes.Waiters != 10000 || full.Sizes.QueueDepth != 1000 ||
		full.Sizes.DistinctLocks != 1000 || full.Sizes.DistinctRuns != 5 || full.Sizes.Floor != 400 || full.Sizes.LoneRequests != 1000 || full.Root != "/zklock-bench" || full.SessionTimeout != 10*time.Second {
		t.Errorf("full defaults = %+v", full)
	}
	quick := Config{Quick: true, Sizes: Sizes{Uncontended: 7}}.withDefaults()
	if quick.Rounds != 2 || quick.Sizes.Uncontended != 7 || quick.Sizes.Waiters != QuickSizes().Waiters {
		t.Errorf("quick defaults = %+v", quick)
	}
	if got := len(quick.Sizes.Contenders); got != 2 {
		t.Errorf("quick contenders = %v", quick.Sizes.Contenders)
	}
}

func TestScenarioNames(t *testing.T) {
	var names []string
	for _, s := range Scenarios(FullSizes()) {
		names = append(names, s.Name)
		if s.Target <= 0 || s.Run == nil || s.Unit == "" {
			t.Errorf("scenario %q is incomplete: %+v", s.Name, s)
		}
	}
	want := []string{"uncontended", "ping-pong", "contenders-8", "contenders-32", "queue-1000", "distinct-1000", "fresh-1000", "acquire-all-1000", "release-all-1000", "lone-request"}
	if len(names) != len(want) {
		t.Fatalf("scenarios = %v, want %v", names, want)
	}
	for i := range want {
		if names[i] != want[i] {
			t.Fatalf("scenarios = %v, want %v", names, want)
		}
	}
}
