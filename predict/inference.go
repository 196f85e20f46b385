package predict

import (
	"errors"
	"fmt"
	"math"

	"github.com/kreplay/kreplay/internal/kname"
	"github.com/kreplay/kreplay/replay"
	"github.com/kreplay/kreplay/schedule"
	"github.com/kreplay/kreplay/signatures"
)

// DefaultMaxCallNS caps a non-waiting call's own host cost in the
// inference model (schedule.Constants.MaxCallNS): a labelled guess, not a
// measurement. Launch calls take a few µs; one that took longer in the
// captured run was taken as blocked on a full launch queue.
const DefaultMaxCallNS = 20_000

// HostConstants are the inference model's constants from a host probe on
// the replay GPU (replay.MeasureHost), with DefaultMaxCallNS.
func HostConstants(p *replay.HostProbe) schedule.Constants {
	ns := func(v float64) int64 { return int64(math.Round(max(v, 0))) } // a probe's rounding never makes a negative time
	return schedule.Constants{
		SubmitNS:   ns(p.SubmitNS),
		QueueGapNS: ns(p.QueueGapNS),
		WakeNS:     ns(p.WakeNS),
		MaxCallNS:  DefaultMaxCallNS,
		WaitPowerW: max(p.WaitPowerW, 0),
	}
}

// InferenceInput is what PredictInference needs: the bundle's host
// schedule and trace, and the replays on this GPU.
type InferenceInput struct {
	Set *signatures.Set
	// Runtime is the trace's runtime calls (signatures.ReadRuntime), which
	// order the trace's launches; nil takes the timeline's order (one
	// stream only).
	Runtime  *signatures.Runtime
	Schedule *schedule.Schedule
	// Entries are the signatures' replays (replay.Device.RunSet).
	Entries   []replay.Entry
	Constants schedule.Constants
	// PowerLimitW is the replay GPU's power limit (0: none).
	PowerLimitW float64
	// FasterHost are the host what-ifs to predict beside: the same
	// inference with the host this many times faster (schedule.FasterHost;
	// nil: DefaultFasterHost).
	FasterHost []float64
	// GraphLaunch, when set, is the host's cost of launching a CUDA graph
	// of n kernels on the replay machine (replay.GraphLaunch.CostNS): the
	// what-if of the same inference under CUDA graphs is predicted beside
	// (schedule.UnderGraphs).
	GraphLaunch func(n int) int64
	// NoSignatureEnergy says the signatures' own energy windows were left
	// out on purpose (FlowOptions.SignatureEnergy) while energy is
	// measured: the replays' energies, any, are not taken, the inference
	// has no isolated design (Inference.NoIsolated is
	// NoSignatureWindows), its energy is none until PacedEnergy puts it
	// in place, and PowerLimitW is not applied (no kernel energies to
	// bound the wall with).
	NoSignatureEnergy bool
}

// DefaultFasterHost is the host what-if PredictInference predicts unless
// told otherwise: the host twice as fast.
var DefaultFasterHost = []float64{2}

// WhatIf is a host what-if's predicted inference.
type WhatIf struct {
	Name    string  `json:"name"`
	WallNS  float64 `json:"wall_ns"`
	EnergyJ float64 `json:"energy_j"`
	TPOTNS  float64 `json:"tpot_ns,omitempty"`
	Bound   string  `json:"bound"`
}

// Inference is a whole inference predicted from a host schedule and the
// replays (docs/whole-inference.md): no measured whole-run quantity
// enters it.
type Inference struct {
	// Source is where the host schedule came from: schedule.SourceRecorder
	// (the capture's unprofiled run) or schedule.SourceTrace (the profiled
	// trace: a guess, the profiler slows the host). CPU is the capture
	// host's CPU.
	Source string `json:"source"`
	CPU    string `json:"cpu,omitempty"`
	// Inferences is how many recorded inferences were simulated back to
	// back; the figures are per inference in steady state. WallNS is the
	// steady inferences' mean wall, which the energy belongs to, and
	// MedianWallNS their median (schedule.Result.WallQ), which the
	// acceptance holds against the measured median inference; both raised
	// alike where the power limit binds (PowerCapped).
	Inferences   int     `json:"inferences"`
	WallNS       float64 `json:"wall_ns"`
	MedianWallNS float64 `json:"median_wall_ns,omitempty"`
	BusyNS       float64 `json:"busy_ns"`
	// GPUIdleNS is the GPU waiting for the host; HostWaitNS the host
	// waiting for the GPU. Bound is "host" or "gpu", the larger wait.
	GPUIdleNS  float64 `json:"gpu_idle_ns"`
	HostWaitNS float64 `json:"host_wait_ns"`
	Bound      string  `json:"bound"`
	// PeerWaitNS is, for a rank of a group (PredictGroup), the time its
	// collectives waited for the other ranks.
	PeerWaitNS float64 `json:"peer_wait_ns,omitempty"`
	// Tokens per inference, the time to the first token and per output
	// token (median and 90th percentile); zero for a prefill.
	Tokens    float64 `json:"tokens,omitempty"`
	TTFTNS    float64 `json:"ttft_ns,omitempty"`
	TPOTNS    float64 `json:"tpot_ns,omitempty"`
	TPOTP90NS float64 `json:"tpot_p90_ns,omitempty"`
	// KernelJ and WaitJ are the isolated design's terms: the replays'
	// energies summed, and the waiting power over the wall less busy.
	// EnergyJ (and JPerToken) is the judged energy, of the design
	// EnergyDesign names: EnergyInPlace (PacedEnergy: the paced timeline's
	// PacedJ per pass, its window's wall per pass PacedWallNS) or
	// EnergyIsolated (KernelJ + WaitJ; NotInPlace says why). IsolatedJ
	// keeps the isolated total beside, not judged. The what-ifs' energies
	// are the isolated design's. Where no replay measured an energy
	// (NoEnergy says so), every one of them is 0 and EnergyDesign is
	// EnergyNone: a wait alone is no prediction of the energy.
	// NoIsolated says why the isolated design was not measured
	// (InferenceInput.NoSignatureEnergy): KernelJ, WaitJ, IsolatedJ and
	// the what-ifs' energies are then 0, and the energy is in place
	// (PacedEnergy) or none (NoEnergy naming both reasons).
	KernelJ      float64 `json:"kernel_j"`
	WaitJ        float64 `json:"wait_j"`
	EnergyJ      float64 `json:"energy_j"`
	JPerToken    float64 `json:"j_per_token,omitempty"`
	EnergyDesign string  `json:"energy_design"`
	IsolatedJ    float64 `json:"isolated_j,omitempty"`
	PacedJ       float64 `json:"paced_j,omitempty"`
	PacedWallNS  float64 `json:"paced_wall_ns,omitempty"`
	NotInPlace   string  `json:"not_in_place,omitempty"`
	NoEnergy     string  `json:"no_energy,omitempty"`
	NoIsolated   string  `json:"no_isolated,omitempty"`
	// BusyScale is, where ScalePacedEnergy scaled the in-place energy,
	// the predicted busy time over the timeline's busy time under CUPTI
	// (the share of the paced pass's kernel energy the real inference's
	// kernels take), and UnscaledJ the in-place energy before it;
	// NotScaled says why it was not scaled (0 and "" where the energy is
	// not in place).
	BusyScale   float64 `json:"busy_scale,omitempty"`
	UnscaledJ   float64 `json:"unscaled_j,omitempty"`
	NotScaled   string  `json:"not_scaled,omitempty"`
	PowerCapped bool    `json:"power_capped,omitempty"`
	// NoPowerBound says why the GPU's power limit was not applied to the
	// wall (FlowOptions' energy windows too short); "" where it was, or
	// where there is none.
	NoPowerBound string `json:"no_power_bound,omitempty"`
	// TracedWallNS and TracedMedianWallNS are the same inference's mean
	// and median walls with the trace's own kernel times in place of the
	// replays (TracedWall): not a prediction, a check that tells the host
	// model's and the schedule's share of an error from the replays'; 0
	// where not computed.
	TracedWallNS       float64 `json:"traced_wall_ns,omitempty"`
	TracedMedianWallNS float64 `json:"traced_median_wall_ns,omitempty"`
	// Host is the host's time split (framework, launch path, waits), its
	// Dominant part, and Shares the split per op, largest first.
	Host     schedule.HostSplit   `json:"host"`
	Dominant string               `json:"dominant"`
	Shares   []schedule.HostShare `json:"shares,omitempty"`
	// Constants are the model's constants (measured on the replay GPU,
	// but MaxCallNS, a guess).
	Constants schedule.Constants `json:"constants"`
	// Ops counts the simulated GPU ops per inference; TracedOps those whose
	// signature had no replay and took its traced median (and no energy).
	Ops       int `json:"ops"`
	TracedOps int `json:"traced_ops,omitempty"`
	// WhatIfs are the host what-ifs (InferenceInput.FasterHost).
	WhatIfs []WhatIf `json:"what_ifs,omitempty"`
	// OverheadNS is the recorder's overhead per inference as the capture
	// measured it in the schedule's process (armed less measured wall), for
	// the record: it is not subtracted.
	OverheadNS int64 `json:"recorder_overhead_ns,omitempty"`
}

// PredictInference simulates the schedule's recorded inferences back to
// back with the replays' times and energies (schedule.Simulate and
// schedule.Energy) and returns the steady-state figures.
func PredictInference(in InferenceInput) (*Inference, error) {
	if in.NoSignatureEnergy {
		in.PowerLimitW = 0
	}
	b, err := bindInput(in)
	if err != nil {
		return nil, err
	}
	res, err := schedule.Simulate(in.Schedule, b.ops, in.Constants)
	if err != nil {
		return nil, fmt.Errorf("inference: %w", err)
	}
	inf, err := b.inference(in, res)
	if err != nil {
		return nil, err
	}
	factors := in.FasterHost
	if factors == nil {
		factors = DefaultFasterHost
	}
	for _, f := range factors {
		w, err := fasterHost(in, b.ops, b.joules, f)
		if err != nil {
			return nil, fmt.Errorf("inference: %w", err)
		}
		inf.WhatIfs = append(inf.WhatIfs, w)
	}
	if in.GraphLaunch != nil {
		w, ok, err := underGraphs(in, b)
		if err != nil {
			return nil, fmt.Errorf("inference: %w", err)
		}
		if ok {
			inf.WhatIfs = append(inf.WhatIfs, w)
		}
	}
	if inf.NoEnergy != "" || inf.NoIsolated != "" {
		for i := range inf.WhatIfs {
			inf.WhatIfs[i].EnergyJ = 0
		}
	}
	return inf, nil
}

// underGraphs predicts the inference under CUDA graphs
// (schedule.UnderGraphs), each graph's launch costing in.GraphLaunch of
// the graphs' mean kernel count; false where no run of ops makes a graph.
func underGraphs(in InferenceInput, b *boundInput) (WhatIf, bool, error) {
	ops, err := schedule.GraphOps(in.Schedule, b.ops)
	if err != nil {
		return WhatIf{}, false, err
	}
	groups, err := schedule.GraphGroups(in.Schedule)
	if err != nil {
		return WhatIf{}, false, err
	}
	nodes, graphs := 0, 0
	for _, inf := range ops {
		for _, op := range inf {
			if op.Label == schedule.GraphLabel {
				nodes, graphs = nodes+len(op.DurNS), graphs+1
			}
		}
	}
	if graphs == 0 {
		return WhatIf{}, false, nil
	}
	mean := (nodes + graphs/2) / graphs
	launch := in.GraphLaunch(mean)
	s, err := schedule.UnderGraphs(in.Schedule, launch)
	if err != nil {
		return WhatIf{}, false, err
	}
	joules := make([][]float64, len(groups))
	for i, gs := range groups {
		joules[i] = make([]float64, len(gs))
		for g, members := range gs {
			for _, j := range members {
				joules[i][g] += b.joules[i][j]
			}
		}
	}
	res, err := schedule.Simulate(s, ops, in.Constants)
	if err != nil {
		return WhatIf{}, false, err
	}
	en, err := schedule.Energy(res, joules, in.Constants, in.PowerLimitW)
	if err != nil {
		return WhatIf{}, false, err
	}
	return WhatIf{Name: fmt.Sprintf("under CUDA graphs (each launch %.3g µs: the host probe's cost of a graph of %d kernels)", float64(launch)/1e3, mean),
		WallNS: en.WallNS, EnergyJ: en.TotalJ, TPOTNS: res.TPOT.Median, Bound: res.Bound}, true, nil
}

// boundInput is a schedule bound to its replays: each inference's GPU ops
// with their times (collectives marked) and energies, and how many ops of
// the first took their traced time for want of a replay.
type boundInput struct {
	ops    [][]schedule.Op
	joules [][]float64
	traced int
}

// bindInput binds in's schedule to its set's replays (schedule.Bind).
func bindInput(in InferenceInput) (*boundInput, error) {
	if in.Set == nil || in.Schedule == nil {
		return nil, errors.New("inference: no set or no schedule")
	}
	per := replayedOps(in.Set, in.Entries, !in.NoSignatureEnergy)
	s := in.Schedule
	b := &boundInput{ops: make([][]schedule.Op, len(s.Inferences)), joules: make([][]float64, len(s.Inferences))}
	same := schedule.Memo(kname.SameKernel)
	for i := range s.Inferences {
		bound, err := schedule.Bind(s, i, in.Set, in.Runtime, same)
		if err != nil {
			return nil, fmt.Errorf("inference: %w", err)
		}
		b.ops[i], b.joules[i] = make([]schedule.Op, len(bound)), make([]float64, len(bound))
		for j, bo := range bound {
			op := schedule.Op{DurNS: make([]int64, len(bo.Sigs))}
			for q, sig := range bo.Sigs {
				r := per[sig]
				op.DurNS[q] = r.ns
				b.joules[i][j] += r.joules
				if r.traced && i == 0 {
					b.traced++
				}
				op.Collective = op.Collective || in.Set.Signatures[sig].Class == signatures.ClassCollective
			}
			if len(bo.Sigs) > 0 {
				op.Label = in.Set.Signatures[bo.Sigs[0]].Op
			}
			b.ops[i][j] = op
		}
	}
	return b, nil
}

// inference is the prediction of a simulation res of b: the energy model
// added (schedule.Energy), per inference in steady state.
func (b *boundInput) inference(in InferenceInput, res schedule.Result) (*Inference, error) {
	en, err := schedule.Energy(res, b.joules, in.Constants, in.PowerLimitW)
	if err != nil {
		return nil, fmt.Errorf("inference: %w", err)
	}
	s := in.Schedule
	inf := &Inference{
		Source: s.Source, CPU: s.CPU, Inferences: res.Inferences,
		WallNS: en.WallNS, MedianWallNS: en.MedianWallNS, BusyNS: res.BusyNS, GPUIdleNS: res.GPUIdleNS, HostWaitNS: res.HostWaitNS, Bound: res.Bound,
		PeerWaitNS: res.PeerWaitNS,
		Tokens:     res.Tokens, TTFTNS: res.TTFT.Median, TPOTNS: res.TPOT.Median, TPOTP90NS: res.TPOT.P90,
		KernelJ: en.KernelJ, WaitJ: en.WaitJ, EnergyJ: en.TotalJ, JPerToken: en.PerTokenJ, PowerCapped: en.PowerCapped,
		Host: res.Host, Dominant: res.Host.Dominant(), Shares: res.Shares,
		Constants: in.Constants, Ops: len(b.ops[0]), TracedOps: b.traced,
	}
	if p := s.Process; p != nil {
		inf.OverheadNS = p.OverheadNSPerInference
	}
	switch {
	case in.NoSignatureEnergy:
		inf.NoIsolated = NoSignatureWindows
	case !anyEnergy(in.Entries):
		inf.noEnergy(NoEnergyMeasured)
	}
	inf.isolatedEnergy("no paced timeline measured")
	return inf, nil
}

// NoEnergyMeasured is Inference.NoEnergy where none of the replays
// measured an energy.
const NoEnergyMeasured = "no signature's energy was measured (-energy=false)"

// anyEnergy says whether a replay among entries measured an energy.
func anyEnergy(entries []replay.Entry) bool {
	for _, e := range entries {
		if e.Result != nil && e.Result.Energy != nil {
			return true
		}
	}
	return false
}

// fasterHost predicts the inference with the host f times faster.
func fasterHost(in InferenceInput, ops [][]schedule.Op, joules [][]float64, f float64) (WhatIf, error) {
	s, err := schedule.FasterHost(in.Schedule, f)
	if err != nil {
		return WhatIf{}, err
	}
	res, err := schedule.Simulate(s, ops, in.Constants)
	if err != nil {
		return WhatIf{}, err
	}
	en, err := schedule.Energy(res, joules, in.Constants, in.PowerLimitW)
	if err != nil {
		return WhatIf{}, err
	}
	return WhatIf{Name: fmt.Sprintf("the host %gx as fast", f), WallNS: en.WallNS, EnergyJ: en.TotalJ, TPOTNS: res.TPOT.Median, Bound: res.Bound}, nil
}

// opReplay is one signature's predicted time and energy per invocation.
type opReplay struct {
	ns     int64
	joules float64
	traced bool // no replay: the traced median, no energy
}

// replayedOps gives each signature of set (by index) its replay's time
// (replay.Entry.ReplayNS) and energy per invocation. A signature that is
// part of another (a split-K reduce) takes 0: its parent's replay ran it.
// One without a replay takes its traced median and no energy; without
// energies (false), none takes its replay's energy.
func replayedOps(set *signatures.Set, entries []replay.Entry, energies bool) []opReplay {
	byID := make(map[string]*replay.Entry, len(entries))
	for i := range entries {
		byID[entries[i].ID] = &entries[i]
	}
	out := make([]opReplay, len(set.Signatures))
	for i, sig := range set.Signatures {
		if sig.PartOf != "" {
			continue
		}
		e := byID[sig.ID]
		if e == nil || e.Result == nil || e.ReplayNS() <= 0 {
			out[i] = opReplay{ns: sig.TracedNS.Median, traced: true}
			continue
		}
		out[i].ns = int64(math.Round(e.ReplayNS()))
		if en := e.Result.Energy; en != nil && energies {
			out[i].joules = en.JoulesPerOp
		}
	}
	return out
}
