package predict

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/kreplay/kreplay/bench"
	"github.com/kreplay/kreplay/internal/textfmt"
)

// InferenceReport is the predicted whole inference of an output (its
// inference benchmark, the median over its runs) and, where the output
// has a model run, each figure against it. The prediction takes nothing
// from the model run.
type InferenceReport struct {
	Runs       int     `json:"runs"`
	WallNS     float64 `json:"wall_ns"`
	BusyNS     float64 `json:"busy_ns"`
	GPUIdleNS  float64 `json:"gpu_idle_ns"`
	HostWaitNS float64 `json:"host_wait_ns"`
	EnergyJ    float64 `json:"energy_j"`
	KernelJ    float64 `json:"kernel_j"`
	WaitJ      float64 `json:"wait_j"`
	WaitW      float64 `json:"wait_w"`
	Tokens     float64 `json:"tokens,omitempty"`
	TTFTNS     float64 `json:"ttft_ns,omitempty"`
	TPOTNS     float64 `json:"tpot_ns,omitempty"`
	TPOTP90NS  float64 `json:"tpot_p90_ns,omitempty"`
	JPerToken  float64 `json:"j_per_token,omitempty"`

	// ErrWall is the predicted wall against the model's median inference,
	// ErrTPOT the time per output token against the model's median, and
	// ErrEnergy the energy against the model's; nil where the model run
	// lacks the figure. InSpread says whether the predicted wall lies
	// within the model's inferences' 10th to 90th percentiles (nil where
	// the model run has no spread).
	ErrWall   *float64 `json:"err_wall,omitempty"`
	InSpread  *bool    `json:"in_spread,omitempty"`
	ErrTPOT   *float64 `json:"err_tpot,omitempty"`
	ErrEnergy *float64 `json:"err_energy,omitempty"`
	// ModelTPOTNS is the model run's median time per output token.
	ModelTPOTNS float64 `json:"model_tpot_ns,omitempty"`
	// ProcessSpread is how far the model run's processes' medians lie
	// apart (bench.UnitProcSpread), nil where it was one process;
	// Verdict holds each figure against the whole-inference acceptance
	// (docs/whole-inference.md, "Judging").
	ProcessSpread *float64 `json:"process_spread,omitempty"`
	Verdict       string   `json:"verdict,omitempty"`
	// PacedNS and PacedJ are the paced timeline's wall and energy (the
	// independent check, bench.PacedName), 0 without one; ErrVsPaced is
	// the predicted wall against it.
	PacedNS    float64  `json:"paced_ns,omitempty"`
	PacedJ     float64  `json:"paced_j,omitempty"`
	ErrVsPaced *float64 `json:"err_vs_paced,omitempty"`
	// TracedWallNS is the same inference with the trace's own kernel times
	// in place of the replays (traced-wall-ns; 0 without it), and
	// ErrTracedWall it against the model's median inference: where it
	// misses as the prediction does, the miss is the host schedule's or
	// the host model's, not the replays'.
	TracedWallNS  float64  `json:"traced_wall_ns,omitempty"`
	ErrTracedWall *float64 `json:"err_traced_wall,omitempty"`
}

// AcceptBound is the whole-inference acceptance's bound on the wall, the
// time per output token and the energy against the measured run, and on
// how far the measured processes may lie apart for the wall to be held to
// it (otherwise to the run's 10-90% spread).
const AcceptBound = 0.05

// verdict holds the prediction to the acceptance: the wall within
// AcceptBound of the measured median where the processes agree within it
// (or where one process ran), else inside the run's 10-90% spread; the
// time per output token and the energy within AcceptBound. "" without a
// measured run.
func (ir *InferenceReport) verdict() string {
	if ir.ErrWall == nil {
		return ""
	}
	var parts []string
	mark := func(ok bool, what string) {
		if ok {
			parts = append(parts, what+" met")
		} else {
			parts = append(parts, what+" MISSED")
		}
	}
	switch {
	case ir.ProcessSpread != nil && *ir.ProcessSpread > AcceptBound && ir.InSpread != nil:
		mark(*ir.InSpread, fmt.Sprintf("wall (processes %.0f%% apart: inside the 10-90%% spread)", 100**ir.ProcessSpread))
	default:
		mark(math.Abs(*ir.ErrWall) <= AcceptBound, fmt.Sprintf("wall (within %.0f%%)", 100*AcceptBound))
	}
	if ir.ErrTPOT != nil {
		mark(math.Abs(*ir.ErrTPOT) <= AcceptBound, "time per output token")
	}
	if ir.ErrEnergy != nil {
		mark(math.Abs(*ir.ErrEnergy) <= AcceptBound, "energy")
	}
	return strings.Join(parts, "; ")
}

// inference reads the inference benchmark of w and compares it with the
// model run.
func (wp *WorkloadPrediction) inference(w *WorkloadResults, opt ReportOptions) {
	s := w.Inference
	if s.Runs() == 0 {
		return
	}
	med := func(v []float64) float64 {
		if len(v) == 0 {
			return 0
		}
		return Summarize(v, opt.Confidence).Center
	}
	ir := &InferenceReport{
		Runs: s.Runs(), WallNS: med(s.NS), EnergyJ: med(s.Joules),
		BusyNS: med(s.Of(UnitBusyNS)), GPUIdleNS: med(s.Of(UnitGPUIdleNS)), HostWaitNS: med(s.Of(UnitHostWaitNS)),
		KernelJ: med(s.Of(UnitKernelJ)), WaitJ: med(s.Of(UnitWaitJ)), WaitW: med(s.Of(UnitWaitW)),
		Tokens: med(s.Of(bench.UnitTokens)), TTFTNS: med(s.Of(UnitTTFTNS)), TPOTNS: med(s.Of(bench.UnitTPOTNS)),
		TPOTP90NS: med(s.Of(bench.UnitTPOTP90NS)), JPerToken: med(s.Of(UnitJPerToken)),
		TracedWallNS: med(s.Of(UnitTracedWallNS)),
	}
	wp.Inference = ir
	if p := w.Paced; p != nil && p.Runs() > 0 {
		ir.PacedNS, ir.PacedJ = med(p.NS), med(p.Joules)
		ir.ErrVsPaced = relErr(ir.WallNS, ir.PacedNS)
	}
	m := w.Model
	if m.Runs() == 0 {
		return
	}
	ir.ErrWall = relErr(ir.WallNS, med(m.NS))
	if ir.TracedWallNS > 0 {
		ir.ErrTracedWall = relErr(ir.TracedWallNS, med(m.NS))
	}
	if lo, hi := med(m.Of(bench.UnitSpanP10)), med(m.Of(bench.UnitSpanP90)); lo > 0 && hi >= lo {
		in := ir.WallNS >= lo && ir.WallNS <= hi
		ir.InSpread = &in
	}
	if t := med(m.Of(bench.UnitTPOTNS)); t > 0 && ir.TPOTNS > 0 {
		ir.ModelTPOTNS = t
		ir.ErrTPOT = relErr(ir.TPOTNS, t)
	}
	if j := med(m.Joules); j > 0 {
		ir.ErrEnergy = relErr(ir.EnergyJ, j)
	}
	if v := m.Of(bench.UnitProcSpread); len(v) > 0 {
		sp := med(v)
		ir.ProcessSpread = &sp
	}
	ir.Verdict = ir.verdict()
}

// writeText prints the inference's lines of the report.
func (ir *InferenceReport) writeText(w io.Writer) {
	spread := ""
	if ir.InSpread != nil {
		spread = "; outside the model's 10-90% spread"
		if *ir.InSpread {
			spread = "; inside the model's 10-90% spread"
		}
	}
	fmt.Fprintf(w, "inference wall (predicted)\t%s\tGPU busy %s, GPU waiting on the host %s, host waiting on the GPU %s%s%s\n",
		textfmt.NS(ir.WallNS), textfmt.NS(ir.BusyNS), textfmt.NS(ir.GPUIdleNS), textfmt.NS(ir.HostWaitNS), vsModel(ir.ErrWall), spread)
	if ir.TracedWallNS > 0 {
		fmt.Fprintf(w, "  with the trace's kernel times\t%s\tthe same schedule and host, the trace's own kernel times in place of the replays: a check, not a prediction%s\n",
			textfmt.NS(ir.TracedWallNS), vsModel(ir.ErrTracedWall))
	}
	if ir.Tokens > 0 {
		fmt.Fprintf(w, "time per output token\t%s\tp90 %s, %.0f tokens, time to first token %s%s\n",
			textfmt.NS(ir.TPOTNS), textfmt.NS(ir.TPOTP90NS), ir.Tokens, textfmt.NS(ir.TTFTNS), vsModel(ir.ErrTPOT))
	}
	fmt.Fprintf(w, "inference energy (predicted)\t%.4g J\tkernels %.4g J + waiting %.4g J (%.1f W x (wall - busy))%s\n",
		ir.EnergyJ, ir.KernelJ, ir.WaitJ, ir.WaitW, vsModel(ir.ErrEnergy))
	if ir.Tokens > 0 {
		fmt.Fprintf(w, "energy per output token\t%.4g J\t\n", ir.JPerToken)
	}
	if ir.PacedNS > 0 {
		j := ""
		if ir.PacedJ > 0 {
			j = fmt.Sprintf(", %.4g J", ir.PacedJ)
		}
		fmt.Fprintf(w, "paced timeline (measured)\t%s\tthe replays launched at the recorded host gaps, one inference%s; the predicted wall %+.1f%% from it\n",
			textfmt.NS(ir.PacedNS), j, 100**ir.ErrVsPaced)
	}
	if ir.Verdict != "" {
		fmt.Fprintf(w, "against the acceptance\t\t%s\n", ir.Verdict)
	}
}

// vsModel is "; prediction ±x% vs the model", or "" without a model.
func vsModel(e *float64) string {
	if e == nil {
		return ""
	}
	return fmt.Sprintf("; %+.1f%% vs the model", 100**e)
}
