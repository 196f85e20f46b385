package whatif

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/kreplay/kreplay/bench"
	"github.com/kreplay/kreplay/predict"
	"github.com/kreplay/kreplay/replay"
	"github.com/kreplay/kreplay/roofline"
	"github.com/kreplay/kreplay/signatures"
)

// Times are a replay's time and energy per invocation, as kreplay
// predicts with them: the replay time (the CUPTI kernel time, else the
// CUDA-event time: bench.ReplayNS) and the energy (J/op; 0 when not
// measured).
type Times struct {
	NS float64 `json:"ns"`
	J  float64 `json:"j,omitempty"`
	// MHz is NVML's mean SM clock while the replay was timed; 0 when
	// unknown (without NVML, or a baseline from kreplay predict).
	MHz float64 `json:"mhz,omitempty"`
}

// Baseline is the prediction without the what-if: its totals, and the
// replay times of the replaced signatures.
type Baseline struct {
	// From says where it comes from: a benchmark output (kreplay
	// predict's), or the replaced signatures replayed now.
	From string `json:"from"`
	// TotalNS and TotalJ are the predicted GPU time and energy of one
	// inference, sum(t_i x n_i) and sum(e_i x n_i) over the measured
	// signatures (predict.WorkloadPrediction's PredictedNS and
	// PredictedJ; the idle gaps' energy not included); 0 when unknown.
	TotalNS float64 `json:"total_ns,omitempty"`
	TotalJ  float64 `json:"total_j,omitempty"`
	// PowerLimitW is the enforced power limit of the GPU the baseline
	// was measured on (its "power-limit" configuration line, else the
	// device's; 0 when unknown), PowerLimitFrom says which.
	PowerLimitW    float64 `json:"power_limit_w,omitempty"`
	PowerLimitFrom string  `json:"power_limit_from,omitempty"`
	// ReplayMHz is the SM clock the baseline's replays ran at: the mean of
	// their sm-MHz weighted by their predicted time, else the maximum
	// (its peak-sm-clock-mhz line), ReplayMHzFrom says which; 0 when the
	// output has neither.
	ReplayMHz     float64 `json:"replay_mhz,omitempty"`
	ReplayMHzFrom string  `json:"replay_mhz_from,omitempty"`
	// GPUUUID is the GPU that measured it (its gpu-uuid line; "" when the
	// output does not say).
	GPUUUID string `json:"gpu_uuid,omitempty"`
	// Sigs are the replaced signatures' times, by ID.
	Sigs map[string]Times `json:"sigs"`
}

// BaselineFromBench reads benchmark output (kreplay predict's -o FILE, or
// a generated package's go test -bench output) for set's workload: its
// predicted totals and every replaced signature's replay time and energy
// (the median over the runs).
func BaselineFromBench(path string, set *signatures.Set, m *Match) (*Baseline, error) {
	in, err := predict.ReadFiles([]string{path})
	if err != nil {
		return nil, err
	}
	rs, err := predict.ReadResults(in)
	if err != nil {
		return nil, err
	}
	p, err := predict.Predict(rs, []*signatures.Set{set}, predict.ReportOptions{Top: -1})
	if err != nil {
		return nil, err
	}
	workload := bench.Workload(set.Source)
	var wp *predict.WorkloadPrediction
	for _, w := range p.Workloads {
		if w.Workload == workload {
			wp = w
		}
	}
	if wp == nil {
		return nil, fmt.Errorf("%s: no results for workload %s (it has %s)", path, workload, strings.Join(rs.WorkloadNames(), ", "))
	}
	b := &Baseline{From: path, TotalNS: wp.PredictedNS.Center, PowerLimitW: wp.PowerLimitW, Sigs: map[string]Times{}}
	if b.PowerLimitW > 0 {
		b.PowerLimitFrom = "the power-limit line of " + path
	}
	if wp.PredictedJ != nil {
		b.TotalJ = wp.PredictedJ.Center
	}
	if w := rs.Workload(workload); w != nil {
		b.ReplayMHz, b.ReplayMHzFrom = replayMHz(wp, w)
		b.GPUUUID = w.Config[replay.KeyGPUUUID]
	}
	for _, s := range wp.Sigs {
		t := Times{NS: s.ReplayNS.Center}
		if s.J != nil {
			t.J = s.J.Center
		}
		b.Sigs[s.ID] = t
	}
	for _, r := range m.Replaced {
		if _, ok := b.Sigs[r.ID]; !ok && r.PartOf == "" {
			return nil, fmt.Errorf("%s: no replay time for replaced signature %s (%s)", path, r.ID, r.Label)
		}
	}
	return b, nil
}

// replayMHz is the replays' SM clock: each signature's median sm-MHz
// weighted by its predicted time, else the device's maximum from the
// peak-sm-clock-mhz line (assumed); 0 without either.
func replayMHz(wp *predict.WorkloadPrediction, w *predict.WorkloadResults) (float64, string) {
	var sum, ns float64
	for _, s := range wp.Sigs {
		smp := w.Sigs[s.ID]
		if smp == nil || len(smp.SMMHz) == 0 || s.PredictedNS.Center <= 0 {
			continue
		}
		sum += median(smp.SMMHz) * s.PredictedNS.Center
		ns += s.PredictedNS.Center
	}
	if ns > 0 {
		return sum / ns, "the replays' sm-MHz"
	}
	if mhz, err := strconv.ParseFloat(w.Config[roofline.KeySMClock], 64); err == nil && mhz > 0 {
		return mhz, "assumed: the maximum (" + roofline.KeySMClock + "), no sm-MHz in the output"
	}
	return 0, ""
}

// Prediction is the what-if's prediction: the GPU time and energy the
// replaced signatures' invocations in the runs take, the fused kernel's
// launches instead, and the totals before and after.
type Prediction struct {
	Runs int `json:"runs"`
	// ReplacedNS is sum(t_i x m_i) over the replaced signatures (m_i
	// their invocations in the runs; parts, inside their parent's replay,
	// left out); FusedNS sum(t_f x runs) over the variants; SavingNS
	// their difference.
	ReplacedNS float64 `json:"replaced_ns"`
	FusedNS    float64 `json:"fused_ns"`
	SavingNS   float64 `json:"saving_ns"`
	// BaseNS and NewNS are the predicted totals without and with the
	// kernel; 0 without a baseline total.
	BaseNS float64 `json:"base_ns,omitempty"`
	NewNS  float64 `json:"new_ns,omitempty"`
	// The energies likewise, when Energy: every replaced signature and
	// every variant's kernel have J/op; NoEnergy says why not otherwise.
	Energy    bool    `json:"energy"`
	NoEnergy  string  `json:"no_energy,omitempty"`
	ReplacedJ float64 `json:"replaced_j,omitempty"`
	FusedJ    float64 `json:"fused_j,omitempty"`
	SavingJ   float64 `json:"saving_j,omitempty"`
	BaseJ     float64 `json:"base_j,omitempty"`
	NewJ      float64 `json:"new_j,omitempty"`
	// The power limit's view (see AtLimit), when the energies and the
	// baseline's totals are known and a power limit is: PowerLimitW and
	// where it comes from; BaseLimitNS and NewLimitNS the totals as the
	// limit allows them, max(time, energy / limit); LimitSavingNS their
	// difference.
	PowerLimitW    float64 `json:"power_limit_w,omitempty"`
	PowerLimitFrom string  `json:"power_limit_from,omitempty"`
	BaseLimitNS    float64 `json:"base_limit_ns,omitempty"`
	NewLimitNS     float64 `json:"new_limit_ns,omitempty"`
	LimitSavingNS  float64 `json:"limit_saving_ns,omitempty"`
	// AtLimit says the baseline's signatures, back to back, draw more
	// than the power limit on average (BaseJ / BaseNS > PowerLimitW).
	AtLimit bool `json:"at_limit,omitempty"`
	// Cap is the prediction at the cap calibrated on a run of the
	// baseline there (cap.go), when AtLimit and the timeline check ran
	// with energies; CapErr says why not where it was tried.
	Cap    *CapPrediction `json:"cap,omitempty"`
	CapErr string         `json:"cap_error,omitempty"`
	// Again is the prediction at the cap from the plain and again
	// timelines (again.go), with Options.Again; AgainErr says why not
	// where it was tried. Where it is, it is the prediction the check
	// compares.
	Again    *AgainPrediction `json:"again,omitempty"`
	AgainErr string           `json:"again_error,omitempty"`
	// Removed is the prediction at the cap from the plain and removed
	// timelines (removed.go), with Options.Removed; RemovedErr says why
	// not. Where both are given it is the one compared.
	Removed    *RemovedPrediction `json:"removed,omitempty"`
	RemovedErr string             `json:"removed_error,omitempty"`
	// InContext is the kernels' own saving again, with the replaced
	// signatures and the kernel replayed alone in the Rotating cache mode
	// (operands from device memory, as in a model's timeline, where the
	// GEMMs between the runs evict them from the L2): its ReplacedNS,
	// FusedNS and SavingNS (and J) are those of Predict. Under the power
	// limit it is the prediction the check compares. InContextErr says
	// why there is none where it was tried.
	InContext    *Prediction `json:"in_context,omitempty"`
	InContextErr string      `json:"in_context_error,omitempty"`
	// TimelineDesign is issue 46's second design (design.go): the timeline
	// check's measured time saving, and its energy saving or, when the
	// baseline model's measured run draws the power limit, that run's mean
	// power times the time saving. Evaluate fills it; TimelineDesignErr
	// says why there is none. It changes no other view's numbers.
	TimelineDesign    *TimelineDesign `json:"timeline_design,omitempty"`
	TimelineDesignErr string          `json:"timeline_design_error,omitempty"`
}

// Predict predicts the what-if from the baseline and each variant's
// fused kernel times (fused[v] for m.Variants[v]):
//
//	new total = base total - sum(t_i x m_i) + sum(t_f x runs)
//
// and the energy likewise where every term has J/op.
func Predict(m *Match, base *Baseline, fused []Times) (*Prediction, error) {
	if len(fused) != len(m.Variants) {
		return nil, fmt.Errorf("%d fused kernel times for %d variants", len(fused), len(m.Variants))
	}
	p := &Prediction{Runs: len(m.Runs), Energy: true}
	noJ := func(what string) {
		if p.Energy {
			p.Energy, p.NoEnergy = false, what+" has no energy"
		}
	}
	for _, r := range m.Replaced {
		if r.PartOf != "" {
			continue
		}
		t, ok := base.Sigs[r.ID]
		if !ok || t.NS <= 0 {
			return nil, fmt.Errorf("no replay time for replaced signature %s (%s)", r.ID, r.Label)
		}
		n := float64(r.Invocations)
		p.ReplacedNS += t.NS * n
		p.ReplacedJ += t.J * n
		if t.J <= 0 {
			noJ("replaced signature " + r.ID)
		}
	}
	for v, t := range fused {
		if t.NS <= 0 {
			return nil, fmt.Errorf("no replay time for the fused kernel of variant %d", v)
		}
		n := float64(m.Variants[v].Runs)
		p.FusedNS += t.NS * n
		p.FusedJ += t.J * n
		if t.J <= 0 {
			noJ(fmt.Sprintf("the fused kernel of variant %d", v))
		}
	}
	p.SavingNS = p.ReplacedNS - p.FusedNS
	if base.TotalNS > 0 {
		p.BaseNS, p.NewNS = base.TotalNS, base.TotalNS-p.SavingNS
	}
	if !p.Energy {
		p.ReplacedJ, p.FusedJ = 0, 0
		return p, nil
	}
	p.SavingJ = p.ReplacedJ - p.FusedJ
	if base.TotalJ > 0 {
		p.BaseJ, p.NewJ = base.TotalJ, base.TotalJ-p.SavingJ
	}
	p.atLimit(base.PowerLimitW, base.PowerLimitFrom)
	return p, nil
}
