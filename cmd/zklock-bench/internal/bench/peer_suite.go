package bench

import (
	"context"
	"fmt"
	"io"
	"slices"
	"time"
)

// PeerInfo says what a peer column of the report measured, or why it was
// not measured.
type PeerInfo struct {
	Name    string `json:"name"`              // NameCurator or NameKazoo
	Recipe  string `json:"recipe"`            // the lock recipe measured
	Version string `json:"version,omitempty"` // the library's version
	Runtime string `json:"runtime,omitempty"` // the JVM or Python that ran it
	// Skipped, when not empty, says why the peer was not measured (not
	// installed: with the install command).
	Skipped string `json:"skipped,omitempty"`
}

// PeerResult compares zklock with one peer on one scenario.
type PeerResult struct {
	Peer string `json:"peer"`
	// Result is the peer's median across rounds, its p50 and p99 the
	// medians of the rounds' own (as the peer measured them).
	Result SideResult `json:"result"`
	// Ratio is zklock's median rate over the peer's; RoundRatios are the
	// ratios of the runs of each round, paired.
	Ratio       float64   `json:"ratio"`
	RoundRatios []float64 `json:"round_ratios"`
}

// peerSet is the peers of one Run: their processes, kept for the whole
// run so that the JVM stays warm, and their samples. A nil *peerSet (peers
// off, or no scenario they run) does nothing.
type peerSet struct {
	h              *Harness
	jobs           map[string]peerJob
	sessionTimeout time.Duration
	progress       io.Writer
	peers          []*peerState
	info           []PeerInfo
}

type peerState struct {
	peer Peer
	proc *peerProc // nil until started, and again after it broke off
	runs map[string]*peerRuns
}

// peerRuns are one peer's samples of one scenario, a nil entry for each
// failed round.
type peerRuns struct {
	samples []*peerSample
	errs    []string
}

// startPeers starts the peers for a Run: none when cfg.Peers is off or no
// scenario in scenarios has a peer job. A peer that is not installed is
// skipped (PeersAuto) or fails the run with ErrPeerMissing (PeersRequired);
// one that is installed but does not start fails the run.
func startPeers(ctx context.Context, cfg Config, h *Harness, scenarios []Scenario, progress io.Writer) (*peerSet, error) {
	if cfg.Peers == PeersOff {
		return nil, nil
	}
	jobs := peerJobs(cfg.Sizes)
	if !slices.ContainsFunc(scenarios, func(s Scenario) bool { _, ok := jobs[s.Name]; return ok }) {
		return nil, nil
	}
	list := cfg.peerList
	if list == nil {
		list = Peers()
	}
	ps := &peerSet{h: h, jobs: jobs, sessionTimeout: cfg.SessionTimeout, progress: progress}
	for _, p := range list {
		info := PeerInfo{Name: p.name, Recipe: p.recipe}
		if err := p.Installed(); err != nil {
			if cfg.Peers == PeersRequired {
				ps.close()
				return nil, err
			}
			info.Skipped = err.Error()
			ps.info = append(ps.info, info)
			fmt.Fprintf(progress, "peers: %s skipped: %v\n", p.name, err)
			continue
		}
		st := &peerState{peer: p, runs: map[string]*peerRuns{}}
		if err := st.start(ctx, ps.sessionTimeout); err != nil {
			ps.close()
			return nil, err
		}
		info.Version, info.Runtime = st.proc.ready.Version, st.proc.ready.Runtime
		ps.peers = append(ps.peers, st)
		ps.info = append(ps.info, info)
	}
	return ps, nil
}

func (st *peerState) start(ctx context.Context, sessionTimeout time.Duration) error {
	pp, err := startPeerProc(ctx, st.peer, sessionTimeout)
	if err != nil {
		return err
	}
	st.proc = pp
	return nil
}

// warmUp runs every scenario for each peer, discarding the results, as
// the Go sides' warm-up does, and more than once for Curator: the JVM
// compiles its hot paths before the first measured round (Curator's first
// 500-cycle uncontended run is about 70% as fast as the next ones).
func (ps *peerSet) warmUp(ctx context.Context, scenarios []Scenario) error {
	if ps == nil {
		return nil
	}
	for _, sc := range scenarios {
		job, ok := ps.jobs[sc.Name]
		if !ok {
			continue
		}
		for _, st := range ps.peers {
			for range st.peer.warmUps {
				if _, err := st.run(ctx, ps, job); ctx.Err() != nil {
					return ctx.Err()
				} else if err != nil {
					fmt.Fprintf(ps.progress, "warm-up %s %s: %v\n", sc.Name, st.peer.name, err)
				}
			}
		}
	}
	return nil
}

// round runs scenario sc once for each peer in round r (0-based) of
// rounds: Curator then kazoo, or the reverse when reverse is set.
func (ps *peerSet) round(ctx context.Context, r, rounds int, sc Scenario, reverse bool) error {
	if ps == nil {
		return nil
	}
	job, ok := ps.jobs[sc.Name]
	if !ok {
		return nil
	}
	order := slices.Clone(ps.peers)
	if reverse {
		slices.Reverse(order)
	}
	for _, st := range order {
		s, err := st.run(ctx, ps, job)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		runs := st.runs[sc.Name]
		if runs == nil {
			runs = &peerRuns{}
			st.runs[sc.Name] = runs
		}
		if err != nil {
			runs.samples = append(runs.samples, nil)
			runs.errs = append(runs.errs, err.Error())
			fmt.Fprintf(ps.progress, "round %d/%d %s %s: %v\n", r+1, rounds, sc.Name, st.peer.name, err)
			continue
		}
		runs.samples = append(runs.samples, &s)
		fmt.Fprintf(ps.progress, "round %d/%d %s %s: %.0f %s, p50 %v, p99 %v\n", r+1, rounds, sc.Name, st.peer.name,
			s.rate(), sc.Unit, s.P50.Round(time.Microsecond), s.P99.Round(time.Microsecond))
	}
	return nil
}

// run runs job on st's process, first (re)starting it if it is not
// running: a process that broke off in an earlier run is replaced, and
// the new one warms up on this job first, as the suite's warm-up would.
func (st *peerState) run(ctx context.Context, ps *peerSet, job peerJob) (peerSample, error) {
	if st.proc == nil {
		if err := st.start(ctx, ps.sessionTimeout); err != nil {
			return peerSample{}, err
		}
		for range st.peer.warmUps {
			if _, err := st.proc.run(ctx, ps.h, job); err != nil {
				st.stopIfBroken()
				return peerSample{}, fmt.Errorf("warm-up after a restart: %w", err)
			}
		}
	}
	s, err := st.proc.run(ctx, ps.h, job)
	st.stopIfBroken()
	return s, err
}

func (st *peerState) stopIfBroken() {
	if st.proc != nil && st.proc.broken != nil {
		st.proc.close()
		st.proc = nil
	}
}

// results returns the peers' figures on scenario name, each with its
// ratio to zklock's (zl: zklock's samples of the same rounds).
func (ps *peerSet) results(name string, zl []*Sample) []PeerResult {
	if ps == nil {
		return nil
	}
	if _, ok := ps.jobs[name]; !ok {
		return nil
	}
	var out []PeerResult
	for _, st := range ps.peers {
		runs := st.runs[name]
		if runs == nil {
			runs = &peerRuns{}
		}
		res := PeerResult{Peer: st.peer.name, Result: runs.result()}
		var zlRates []float64
		for _, s := range zl {
			if s != nil {
				zlRates = append(zlRates, s.Rate())
			}
		}
		if res.Result.Rate > 0 {
			res.Ratio = median(zlRates) / res.Result.Rate
		}
		for k := range min(len(zl), len(runs.samples)) {
			if zl[k] != nil && runs.samples[k] != nil && runs.samples[k].rate() > 0 {
				res.RoundRatios = append(res.RoundRatios, zl[k].Rate()/runs.samples[k].rate())
			}
		}
		out = append(out, res)
	}
	return out
}

func (r *peerRuns) result() SideResult {
	res := SideResult{Errors: r.errs}
	var p50, p99 []time.Duration
	for _, s := range r.samples {
		if s == nil {
			continue
		}
		res.Rates = append(res.Rates, s.rate())
		p50 = append(p50, s.P50)
		p99 = append(p99, s.P99)
	}
	res.Rate = median(res.Rates)
	res.P50 = Duration(medianDuration(p50))
	res.P99 = Duration(medianDuration(p99))
	return res
}

// infos returns what the report says about the peers, nil when off.
func (ps *peerSet) infos() []PeerInfo {
	if ps == nil {
		return nil
	}
	return ps.info
}

// close ends every peer process.
func (ps *peerSet) close() {
	if ps == nil {
		return
	}
	for _, st := range ps.peers {
		if st.proc != nil {
			st.proc.close()
			st.proc = nil
		}
	}
}
