package bench

import (
	"os"
	"path/filepath"
	"testing"
)

// A ratio target is judged on the median of the rounds' own ratios, not
// on the ratio of the two sides' medians, and a saved report is judged
// again when it is read.
func TestJudge(t *testing.T) {
	rep := &Report{Scenarios: []ScenarioResult{
		// The medians' ratio is 1.05x; the rounds' own ratios say 0.86x.
		{Name: "rounds below", Target: 1, ZKLock: SideResult{Rate: 221}, Ratio: 1.05,
			RoundRatios: []float64{0.72, 1.0, 0.39, 0.86, 1.74}, Pass: true},
		{Name: "rounds above", Target: 1, ZKLock: SideResult{Rate: 177}, Ratio: 0.95,
			RoundRatios: []float64{1.1, 1.2, 0.9}},
		{Name: "raw below", Target: 0.95, RawTarget: 0.9, ZKLock: SideResult{Rate: 151}, RoundRatios: []float64{1.1},
			RawRatio: 0.95, RawRoundRatios: []float64{0.8, 0.85, 1.2}},
		{Name: "failed run", Target: 1, ZKLock: SideResult{Rate: 10, Errors: []string{"boom"}}, RoundRatios: []float64{2}},
		{Name: "no rounds", Target: 1, ZKLock: SideResult{Rate: 10}, Ratio: 2},
		{Name: "CPU above", Target: 1, ZKLock: SideResult{Rate: 10}, RoundRatios: []float64{1}, CPUTarget: 1, CPURatio: 1.1},
	}}
	want := map[string][2]bool{ // pass, CPU pass
		"rounds below": {false, false}, "rounds above": {true, false}, "raw below": {false, false},
		"failed run": {false, false}, "no rounds": {false, false}, "CPU above": {true, false},
	}
	check := func(from string, r *Report) {
		t.Helper()
		for _, s := range r.Scenarios {
			if got := [2]bool{s.Pass, s.CPUPass}; got != want[s.Name] {
				t.Errorf("%s: %s: pass, CPU pass = %v, want %v", from, s.Name, got, want[s.Name])
			}
		}
		if r.Pass() {
			t.Errorf("%s: the report passes", from)
		}
	}

	name := filepath.Join(t.TempDir(), "report.json")
	f, err := os.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	if err := rep.WriteJSON(f); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	saved, err := ReadReport(name)
	if err != nil {
		t.Fatal(err)
	}
	check("read back", saved)
	rep.judge()
	check("judged", rep)
}
