package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"
)

// Targets of the memory measurement, for zklock against zk.Lock in the
// same run: a waiting lock may cost at most MemoryTarget times zk.Lock's
// heap and stack together, and enqueueing the waiters may take at most
// EnqueueTarget times zk.Lock's time.
const (
	MemoryTarget  = 1.0
	EnqueueTarget = 1.0
)

// Report is the outcome of Run. It marshals to JSON as is.
type Report struct {
	Started    time.Time `json:"started"`
	Elapsed    Duration  `json:"elapsed"`
	Servers    []string  `json:"servers"`
	ZooKeeper  string    `json:"zookeeper,omitempty"` // server version (srvr)
	Settings   string    `json:"settings,omitempty"`  // how the server was set up
	GoVersion  string    `json:"go_version"`
	GOMAXPROCS int       `json:"gomaxprocs"`
	Machine    Machine   `json:"machine"`
	Rounds     int       `json:"rounds"`
	Quick      bool      `json:"quick"`
	Sizes      Sizes     `json:"sizes"`

	// Peers says which peers were measured (PeerResult in each scenario
	// they run) or skipped; empty when Config.Peers is off.
	Peers []PeerInfo `json:"peers,omitempty"`

	Scenarios []ScenarioResult `json:"scenarios"`
	Raw       []RawResult      `json:"raw"`
	// Floor is the hand-off floor and ping-pong's hand-offs against it;
	// nil when it was not measured.
	Floor  *FloorResult   `json:"floor,omitempty"`
	Memory []MemoryResult `json:"memory"`
}

// ScenarioResult compares the sides on one scenario.
type ScenarioResult struct {
	Name      string  `json:"name"`
	Unit      string  `json:"unit"`
	Target    float64 `json:"target"`
	RawTarget float64 `json:"raw_target,omitempty"`
	// Wire is set for a scenario that measures the client's connection,
	// not a lock (Scenario.Wire).
	Wire bool `json:"wire,omitempty"`
	// ZKLock and ZKLib are the medians across rounds of each side.
	ZKLock SideResult `json:"zklock"`
	ZKLib  SideResult `json:"zk_lock"`
	// Ratio is ZKLock.Rate / ZKLib.Rate; RoundRatios are the ratios of
	// the runs of each round, paired.
	Ratio       float64   `json:"ratio"`
	RoundRatios []float64 `json:"round_ratios"`
	// RawRatio and ZKLibRawRatio are each side's rate over the median raw
	// serial create+delete pair rate; RawRoundRatios are zklock's over the
	// raw serial rate of the same round.
	RawRatio       float64   `json:"raw_ratio"`
	ZKLibRawRatio  float64   `json:"zk_lock_raw_ratio"`
	RawRoundRatios []float64 `json:"raw_round_ratios"`
	// Peers compares zklock with each peer measured on this scenario
	// (Report.Peers). They have no target.
	Peers []PeerResult `json:"peers,omitempty"`
	Pass  bool         `json:"pass"`

	// CPURoundRatios are zklock's CPU time per operation over zk.Lock's,
	// round by round (paired); CPURatio is their median. CPUTarget, when
	// not zero, is the greatest CPURatio that passes (CPUPass).
	CPURatio       float64   `json:"cpu_ratio,omitempty"`
	CPURoundRatios []float64 `json:"cpu_round_ratios,omitempty"`
	CPUTarget      float64   `json:"cpu_target,omitempty"`
	CPUPass        bool      `json:"cpu_pass,omitempty"`
	// TotalCPURoundRatios are zklock's CPU time per operation, this
	// process's and the servers' together, over zk.Lock's, round by round
	// where the servers' was measured; TotalCPURatio is their median. On a
	// machine whose cores the servers share with the clients, it is what
	// one operation costs the machine.
	TotalCPURatio       float64   `json:"total_cpu_ratio,omitempty"`
	TotalCPURoundRatios []float64 `json:"total_cpu_round_ratios,omitempty"`
}

// SideResult is one side's figures on one scenario.
type SideResult struct {
	Rate  float64   `json:"ops_per_s"` // median across rounds
	P50   Duration  `json:"p50"`       // median across rounds of each round's p50
	P99   Duration  `json:"p99"`       // likewise
	Rates []float64 `json:"round_ops_per_s"`
	// WallRate is the median wall-clock rate, for scenarios whose Rate
	// leaves part of the run out (ping-pong); 0 otherwise.
	WallRate float64  `json:"wall_ops_per_s,omitempty"`
	Errors   []string `json:"errors,omitempty"`

	// CPUPerOp is the median across rounds of this process's CPU time per
	// operation (Sample.CPUPerOp), and RoundCPUPerOp the rounds' own; 0
	// and nil when not measured (the peers).
	CPUPerOp      Duration   `json:"cpu_per_op,omitempty"`
	RoundCPUPerOp []Duration `json:"round_cpu_per_op,omitempty"`
	// ServerCPUPerOp is the median across rounds of the server processes'
	// CPU time per operation (Sample.ServerCPUPerOp), and
	// RoundServerCPUPerOp the rounds' own; 0 and nil when not measured
	// (servers elsewhere, the peers' runs).
	ServerCPUPerOp      Duration   `json:"server_cpu_per_op,omitempty"`
	RoundServerCPUPerOp []Duration `json:"round_server_cpu_per_op,omitempty"`
	// WritesPerRequest and RequestsPerOp are the medians across rounds of
	// the process's write system calls per request the servers received
	// and of those requests per operation; 0 when not measured.
	WritesPerRequest float64 `json:"writes_per_request,omitempty"`
	RequestsPerOp    float64 `json:"requests_per_op,omitempty"`
}

// RawResult is the server's raw create+delete pair rate from Width
// goroutines on one session.
type RawResult struct {
	Name  string     `json:"name"`
	Width int        `json:"width"`
	Side  SideResult `json:"result"`
}

// FloorResult is the hand-off floor (HandOffFloor) and each side's
// ping-pong hand-off against it.
type FloorResult struct {
	// Listed is the floor: from the delete call until the waiter's listing
	// returned. Notified is the time until the notification arrived.
	Listed   SideResult `json:"listed"`
	Notified SideResult `json:"notified"`
	// ZKLock and ZKLib are each side's ping-pong hand-off p50 over the
	// floor's p50 (Listed), round by round.
	ZKLock FloorRatio `json:"zklock"`
	ZKLib  FloorRatio `json:"zk_lock"`
}

// FloorRatio is a side's ping-pong hand-off p50 over the floor's p50 of
// the same round: RoundRatios, and their median Ratio.
type FloorRatio struct {
	Ratio       float64   `json:"ratio"`
	RoundRatios []float64 `json:"round_ratios"`
}

// MemoryResult is the median across rounds of MeasureWaiters for a side.
type MemoryResult struct {
	WaiterMemory
	// For zklock: its heap+stack per waiter over zk.Lock's (Ratio), its
	// enqueue time over zk.Lock's (EnqueueRatio) and the latter per round,
	// paired (EnqueueRoundRatios), with their targets.
	Ratio              float64   `json:"ratio,omitempty"`
	EnqueueRatio       float64   `json:"enqueue_ratio,omitempty"`
	EnqueueRoundRatios []float64 `json:"enqueue_round_ratios,omitempty"`
	Target             float64   `json:"target,omitempty"`
	EnqueueTarget      float64   `json:"enqueue_target,omitempty"`
	Pass               bool      `json:"pass"`
	Error              string    `json:"error,omitempty"`
}

// judge sets the report's verdicts from its figures. A ratio target is
// judged on the median of the rounds' own ratios, each pairing two
// figures of one round, so that the machine's drift between rounds, which
// the ratio of two medians keeps, cancels; the CPU targets already are
// (CPURatio). ReadReport judges a saved report again, so that a report
// is always printed with the rules of the code that prints it.
func (r *Report) judge() {
	for i := range r.Scenarios {
		s := &r.Scenarios[i]
		s.Pass = len(s.ZKLock.Errors) == 0 && s.ZKLock.Rate > 0 && len(s.RoundRatios) > 0 &&
			median(s.RoundRatios) >= s.Target && (s.RawTarget == 0 || s.rawPass())
		s.CPUPass = s.CPUTarget > 0 && s.CPURatio > 0 && s.CPURatio <= s.CPUTarget
	}
	for i := range r.Memory {
		r.Memory[i].judge()
	}
}

// judge sets the memory verdict of the side that has targets (zklock):
// measured, its total per waiter within Target of zk.Lock's, and the
// median of the rounds' own enqueue ratios within EnqueueTarget.
func (m *MemoryResult) judge() {
	if m.Target == 0 {
		return
	}
	enq := median(m.EnqueueRoundRatios)
	m.Pass = m.TotalPerWaiter > 0 && m.Error == "" && m.Ratio > 0 && m.Ratio <= m.Target &&
		enq > 0 && enq <= m.EnqueueTarget
}

// rawPass reports whether zklock met the scenario's target against the
// raw serial pair rate (RawTarget), judged on the rounds' own ratios.
func (s ScenarioResult) rawPass() bool {
	return len(s.RawRoundRatios) > 0 && median(s.RawRoundRatios) >= s.RawTarget
}

// Pass reports whether every target of the report was met.
func (r *Report) Pass() bool {
	for _, s := range r.Scenarios {
		if !s.Pass || (s.CPUTarget > 0 && !s.CPUPass) {
			return false
		}
	}
	for _, m := range r.Memory {
		if m.Target > 0 && !m.Pass {
			return false
		}
	}
	return true
}

// ReadReport reads a report that WriteJSON wrote to the file name.
func ReadReport(name string) (*Report, error) {
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	var r Report
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("bench: %s: %w", name, err)
	}
	r.judge()
	return &r, nil
}

// WriteJSON writes the report as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// Duration is a time.Duration that marshals to JSON as milliseconds.
type Duration time.Duration

// MarshalJSON writes d in milliseconds.
func (d Duration) MarshalJSON() ([]byte, error) {
	return json.Marshal(float64(d) / float64(time.Millisecond))
}

// UnmarshalJSON reads milliseconds.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var ms float64
	if err := json.Unmarshal(b, &ms); err != nil {
		return err
	}
	*d = Duration(ms * float64(time.Millisecond))
	return nil
}
