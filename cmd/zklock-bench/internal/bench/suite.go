package bench

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"time"
)

// Run runs the whole suite: a warm-up round (discarded), then Rounds
// rounds, each running the raw rates, the hand-off floor, every scenario
// for both sides and the memory measurement for both sides. Odd rounds run zk.Lock first, even
// rounds zklock first. A run that fails is recorded in the report (and
// fails its scenario) without stopping the suite; Run itself fails only
// when it cannot reach ZooKeeper or ctx ends.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	cfg = cfg.withDefaults()
	start := time.Now()
	h, err := NewHarness(ctx, cfg.Servers, cfg.Root, cfg.SessionTimeout)
	if err != nil {
		return nil, err
	}
	defer h.Close()
	h.PinSessions(cfg.PinSessions)
	rep := &Report{
		Started: start, Servers: cfg.Servers, ZooKeeper: serverVersion(cfg.Servers[0]),
		GoVersion: runtime.Version(), GOMAXPROCS: runtime.GOMAXPROCS(0), Machine: thisMachine(),
		Rounds: cfg.Rounds, Quick: cfg.Quick, Sizes: cfg.Sizes,
	}
	progress := cfg.Progress
	if progress == nil {
		progress = io.Discard
	}
	want := func(name string) bool { return len(cfg.Only) == 0 || slices.Contains(cfg.Only, name) }
	var scenarios []Scenario
	for _, s := range Scenarios(cfg.Sizes) {
		if want(s.Name) {
			scenarios = append(scenarios, s)
		}
	}
	sides := Sides()
	peers, err := startPeers(ctx, cfg, h, scenarios, progress)
	if err != nil {
		return nil, err
	}
	defer peers.close()
	rep.Peers = peers.infos()
	if err := warmUp(ctx, h, sides, scenarios, cfg.Sizes, want("raw")); err != nil {
		return nil, fmt.Errorf("bench: warm-up: %w", err)
	}
	if err := peers.warmUp(ctx, scenarios); err != nil {
		return nil, fmt.Errorf("bench: warm-up: %w", err)
	}

	raws := []RawResult{{Name: "serial", Width: 1}, {Name: fmt.Sprintf("%d-way", cfg.Sizes.RawParallel), Width: cfg.Sizes.RawParallel}}
	rawRuns := make([]runs, len(raws))
	var floorRuns [2]runs                     // listed, notified
	scRuns := make([][2]runs, len(scenarios)) // [scenario][side]
	memRuns := make([][]WaiterMemory, len(sides))
	memErrs := make([][]string, len(sides))
	for r := range cfg.Rounds {
		rep.Machine.noteLoad()
		order := []int{0, 1}
		if r%2 == 1 {
			order = []int{1, 0}
		}
		if want("raw") {
			for i, raw := range raws {
				s, err := RawCreateDelete(ctx, h, cfg.Sizes.RawPairs, raw.Width)
				if ctx.Err() != nil {
					return nil, ctx.Err()
				}
				rawRuns[i].add(s, err)
				logRun(progress, r, cfg.Rounds, "raw "+raw.Name, "server", "pairs/s", s, err)
			}
		}
		if want("floor") {
			listed, notified, err := HandOffFloor(ctx, h, cfg.Sizes.Floor)
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			floorRuns[0].add(listed, err)
			floorRuns[1].add(notified, err)
			logRun(progress, r, cfg.Rounds, "hand-off floor", "go-zookeeper", "hand-offs/s", listed, err)
		}
		for i, sc := range scenarios {
			// zklock, zk.Lock, Curator, kazoo; the reverse in odd rounds.
			if r%2 == 1 {
				if err := peers.round(ctx, r, cfg.Rounds, sc, true); err != nil {
					return nil, err
				}
			}
			for _, j := range order {
				s, err := sc.Run(ctx, h, sides[j])
				if ctx.Err() != nil {
					return nil, ctx.Err()
				}
				scRuns[i][j].add(s, err)
				logRun(progress, r, cfg.Rounds, sc.Name, sides[j].Name(), sc.Unit, s, err)
			}
			if r%2 == 0 {
				if err := peers.round(ctx, r, cfg.Rounds, sc, false); err != nil {
					return nil, err
				}
			}
		}
		if want("waiters") {
			for _, j := range order {
				var prof profiles
				if r == cfg.Rounds-1 {
					prof = profiles{mem: cfg.MemProfile, cpu: cfg.CPUProfile}
				}
				m, err := measureWaiters(ctx, h, sides[j], cfg.Sizes.Waiters, prof)
				if ctx.Err() != nil {
					return nil, ctx.Err()
				}
				if err != nil {
					memErrs[j] = append(memErrs[j], err.Error())
					fmt.Fprintf(progress, "round %d/%d waiters %s: %v\n", r+1, cfg.Rounds, sides[j].Name(), err)
					continue
				}
				memRuns[j] = append(memRuns[j], m)
				fmt.Fprintf(progress, "round %d/%d waiters-%d %s: heap %.0f B/waiter, stack %.0f B/waiter, enqueue %v\n",
					r+1, cfg.Rounds, m.Waiters, sides[j].Name(), m.HeapPerWaiter, m.StackPerWaiter, time.Duration(m.Enqueue).Round(time.Millisecond))
			}
		}
	}

	rep.Machine.noteLoad()
	rep.Machine.LoadEnd = loadAverages()
	var rawSerial float64
	if want("raw") {
		for i := range raws {
			raws[i].Side = rawRuns[i].result()
		}
		rep.Raw = raws
		rawSerial = raws[0].Side.Rate
	}
	for i, sc := range scenarios {
		zl, zk := scRuns[i][0], scRuns[i][1]
		res := ScenarioResult{Name: sc.Name, Unit: sc.Unit, Target: sc.Target, RawTarget: sc.RawTarget, Wire: sc.Wire,
			ZKLock: zl.result(), ZKLib: zk.result()}
		if res.ZKLib.Rate > 0 {
			res.Ratio = res.ZKLock.Rate / res.ZKLib.Rate
		}
		res.RoundRatios = pairedRatios(zl.samples, zk.samples, (*Sample).Rate)
		if rawSerial > 0 && !sc.Wire {
			res.RawRatio = res.ZKLock.Rate / rawSerial
			res.ZKLibRawRatio = res.ZKLib.Rate / rawSerial
			res.RawRoundRatios = pairedRatios(zl.samples, rawRuns[0].samples, (*Sample).Rate)
		}
		res.Peers = peers.results(sc.Name, zl.samples)
		res.CPURoundRatios = pairedRatios(zl.samples, zk.samples, func(s *Sample) float64 { return float64(s.CPUPerOp()) })
		res.CPURatio = median(res.CPURoundRatios)
		res.TotalCPURoundRatios = pairedRatios(zl.samples, zk.samples, func(s *Sample) float64 {
			if s.ServerCPU <= 0 {
				return 0
			}
			return float64(s.CPUPerOp() + s.ServerCPUPerOp())
		})
		res.TotalCPURatio = median(res.TotalCPURoundRatios)
		res.CPUTarget = sc.CPUTarget
		rep.Scenarios = append(rep.Scenarios, res)
	}
	if want("floor") {
		rep.Floor = floorResult(floorRuns, scenarios, scRuns)
	}
	if want("waiters") {
		rep.Memory = memoryResults(sides, memRuns, memErrs, cfg.Sizes.Waiters)
	}
	rep.judge()
	rep.Elapsed = Duration(time.Since(start))
	return rep, nil
}

// warmUp runs the raw rates and every scenario once for each side,
// discarding the results, so that the JVM has compiled its hot paths before
// the first measured round. A smaller warm-up (a few hundred operations)
// left the first round's raw serial rate at 77% of the later rounds', and
// the 32-way rate at 48%.
func warmUp(ctx context.Context, h *Harness, sides []Side, scenarios []Scenario, sizes Sizes, raw bool) error {
	if raw {
		if _, err := RawCreateDelete(ctx, h, sizes.RawPairs, 1); err != nil {
			return err
		}
		if _, err := RawCreateDelete(ctx, h, sizes.RawPairs, sizes.RawParallel); err != nil {
			return err
		}
	}
	for _, sc := range scenarios {
		for _, side := range sides {
			// A scenario that fails here fails again in the measured
			// rounds, which record it: only the end of ctx stops the run.
			if _, err := sc.Run(ctx, h, side); err != nil && ctx.Err() != nil {
				return ctx.Err()
			}
		}
	}
	return nil
}

// floorResult sums up the floor's runs (listed, notified) and compares
// each side's ping-pong hand-offs with them, round by round.
func floorResult(floor [2]runs, scenarios []Scenario, scRuns [][2]runs) *FloorResult {
	res := &FloorResult{Listed: floor[0].result(), Notified: floor[1].result()}
	i := slices.IndexFunc(scenarios, func(s Scenario) bool { return s.Name == "ping-pong" })
	if i < 0 {
		return res
	}
	p50 := func(s *Sample) float64 { return float64(s.Percentile(50)) }
	for j, side := range []*FloorRatio{&res.ZKLock, &res.ZKLib} {
		side.RoundRatios = pairedRatios(scRuns[i][j].samples, floor[0].samples, p50)
		side.Ratio = median(side.RoundRatios)
	}
	return res
}

// pairedRatios returns f(a)/f(b) for the samples of each round that both
// have, with f(b) > 0.
func pairedRatios(a, b []*Sample, f func(*Sample) float64) []float64 {
	var out []float64
	for k := range min(len(a), len(b)) {
		if a[k] == nil || b[k] == nil {
			continue
		}
		if x, y := f(a[k]), f(b[k]); x > 0 && y > 0 {
			out = append(out, x/y)
		}
	}
	return out
}

// runs collects one side's samples of one scenario, a nil entry for each
// failed round.
type runs struct {
	samples []*Sample
	errs    []string
}

func (r *runs) add(s Sample, err error) {
	if err != nil {
		r.samples = append(r.samples, nil)
		r.errs = append(r.errs, err.Error())
		return
	}
	r.samples = append(r.samples, &s)
}

func (r *runs) result() SideResult {
	res := SideResult{Errors: r.errs}
	var p50, p99 []time.Duration
	var walls, cpus, scpus, wpr, rpo []float64
	for _, s := range r.samples {
		if s == nil {
			continue
		}
		if s.Wall > 0 {
			walls = append(walls, s.WallRate())
		}
		if c := s.CPUPerOp(); c > 0 {
			cpus = append(cpus, float64(c))
			res.RoundCPUPerOp = append(res.RoundCPUPerOp, Duration(c))
		}
		if c := s.ServerCPUPerOp(); c > 0 {
			scpus = append(scpus, float64(c))
			res.RoundServerCPUPerOp = append(res.RoundServerCPUPerOp, Duration(c))
		}
		if s.Requests > 0 {
			wpr = append(wpr, s.WritesPerRequest())
			rpo = append(rpo, s.RequestsPerOp())
		}
		res.Rates = append(res.Rates, s.Rate())
		p50 = append(p50, s.Percentile(50))
		p99 = append(p99, s.Percentile(99))
	}
	res.Rate = median(res.Rates)
	res.WallRate = median(walls)
	res.CPUPerOp = Duration(median(cpus))
	res.ServerCPUPerOp = Duration(median(scpus))
	res.WritesPerRequest = median(wpr)
	res.RequestsPerOp = median(rpo)
	res.P50 = Duration(medianDuration(p50))
	res.P99 = Duration(medianDuration(p99))
	return res
}

// memoryResults sums up each side's memory runs (sides as Sides returns
// them: zklock first) and compares zklock's with zk.Lock's.
func memoryResults(sides []Side, runs [][]WaiterMemory, errs [][]string, waiters int) []MemoryResult {
	out := make([]MemoryResult, len(sides))
	for j, side := range sides {
		m := medianMemory(runs[j])
		m.Side, m.Waiters = side.Name(), waiters
		out[j] = MemoryResult{WaiterMemory: m, Error: strings.Join(errs[j], "; "), Pass: len(runs[j]) > 0}
	}
	zl, zk := &out[0], &out[1]
	zl.Target, zl.EnqueueTarget = MemoryTarget, EnqueueTarget
	if zk.TotalPerWaiter > 0 {
		zl.Ratio = zl.TotalPerWaiter / zk.TotalPerWaiter
	}
	if zk.Enqueue > 0 {
		zl.EnqueueRatio = float64(zl.Enqueue) / float64(zk.Enqueue)
	}
	for k := range min(len(runs[0]), len(runs[1])) {
		if e := runs[1][k].Enqueue; e > 0 {
			zl.EnqueueRoundRatios = append(zl.EnqueueRoundRatios, float64(runs[0][k].Enqueue)/float64(e))
		}
	}
	zl.judge()
	return out
}

func medianMemory(ms []WaiterMemory) WaiterMemory {
	pick := func(f func(WaiterMemory) float64) float64 {
		xs := make([]float64, len(ms))
		for i, m := range ms {
			xs[i] = f(m)
		}
		return median(xs)
	}
	return WaiterMemory{
		HeapPerWaiter:       pick(func(m WaiterMemory) float64 { return m.HeapPerWaiter }),
		StackPerWaiter:      pick(func(m WaiterMemory) float64 { return m.StackPerWaiter }),
		TotalPerWaiter:      pick(func(m WaiterMemory) float64 { return m.TotalPerWaiter }),
		GoroutinesPerWaiter: pick(func(m WaiterMemory) float64 { return m.GoroutinesPerWaiter }),
		Enqueue:             Duration(pick(func(m WaiterMemory) float64 { return float64(m.Enqueue) })),
	}
}

func logRun(w io.Writer, round, rounds int, scenario, side, unit string, s Sample, err error) {
	if err != nil {
		fmt.Fprintf(w, "round %d/%d %s %s: %v\n", round+1, rounds, scenario, side, err)
		return
	}
	wall := ""
	if s.Wall > 0 {
		wall = fmt.Sprintf(" (wall clock %.0f/s)", s.WallRate())
	}
	fmt.Fprintf(w, "round %d/%d %s %s: %.0f %s%s, p50 %v, p99 %v\n", round+1, rounds, scenario, side,
		s.Rate(), unit, wall, s.Percentile(50).Round(time.Microsecond), s.Percentile(99).Round(time.Microsecond))
}
