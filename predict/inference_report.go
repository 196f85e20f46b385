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
	Runs int `json:"runs"`
	// WallNS is the simulated inferences' mean wall (ns/op) and
	// MedianWallNS their median (median-wall-ns; 0 in an output from
	// before it).
	WallNS       float64 `json:"wall_ns"`
	MedianWallNS float64 `json:"median_wall_ns,omitempty"`
	BusyNS       float64 `json:"busy_ns"`
	GPUIdleNS    float64 `json:"gpu_idle_ns"`
	HostWaitNS   float64 `json:"host_wait_ns"`
	EnergyJ      float64 `json:"energy_j"`
	KernelJ      float64 `json:"kernel_j"`
	WaitJ        float64 `json:"wait_j"`
	WaitW        float64 `json:"wait_w"`
	Tokens       float64 `json:"tokens,omitempty"`
	TTFTNS       float64 `json:"ttft_ns,omitempty"`
	TPOTNS       float64 `json:"tpot_ns,omitempty"`
	TPOTP90NS    float64 `json:"tpot_p90_ns,omitempty"`
	JPerToken    float64 `json:"j_per_token,omitempty"`
	// EnergyDesign is the predicted energy's design: EnergyInPlace where
	// the output has the paced pass's energy (paced-J/op), EnergyIsolated
	// where it says why not (NotInPlace), "" in an output from before the
	// designs were told apart (the isolated one), EnergyNone without an
	// energy (NoEnergy). IsolatedJ (isolated-J/op),
	// PassJ (paced-J/op) and PassWallNS (paced-wall-ns) are the in-place
	// design's inputs and the isolated total beside it, 0 otherwise;
	// ErrIsolated is IsolatedJ against the model's energy, shown, not
	// judged.
	EnergyDesign string   `json:"energy_design,omitempty"`
	IsolatedJ    float64  `json:"isolated_j,omitempty"`
	PassJ        float64  `json:"paced_pass_j,omitempty"`
	PassWallNS   float64  `json:"paced_pass_wall_ns,omitempty"`
	NotInPlace   string   `json:"not_in_place,omitempty"`
	ErrIsolated  *float64 `json:"err_isolated,omitempty"`
	// BusyScale (busy-scale) and UnscaledJ (unscaled-J/op) are, where the
	// in-place energy was scaled to the predicted busy time
	// (ScalePacedEnergy), its factor and the energy before it; ErrUnscaled
	// is UnscaledJ against the model's energy, shown, not judged.
	BusyScale   float64  `json:"busy_scale,omitempty"`
	UnscaledJ   float64  `json:"unscaled_j,omitempty"`
	ErrUnscaled *float64 `json:"err_unscaled,omitempty"`
	// NoEnergy says why the inference has no energy, where its benchmark
	// has no J/op (Inference.NoEnergy, from the output's line, or that
	// the output has none): its energy figures are 0, shown as not
	// measured and not judged.
	NoEnergy string `json:"no_energy,omitempty"`

	// ErrWall is the predicted wall against the model's median inference
	// (ns/op), ErrTPOT the time per output token against the model's
	// median, and ErrEnergy the energy against the model's; nil where the
	// model run lacks the figure. InSpread says whether the predicted wall
	// lies within the model's inferences' 10th to 90th percentiles (nil
	// where the model run has no spread). The predicted wall they take is
	// the judged one (JudgedWallNS): the median where the output has it
	// and the model run measured its median (its spread), else the mean.
	// ErrMeanWall is, where the median was judged, the mean against the
	// model's mean wall per inference (mean-ns), which the energy belongs
	// to.
	ErrWall     *float64 `json:"err_wall,omitempty"`
	InSpread    *bool    `json:"in_spread,omitempty"`
	ErrMeanWall *float64 `json:"err_mean_wall,omitempty"`
	ErrTPOT     *float64 `json:"err_tpot,omitempty"`
	ErrEnergy   *float64 `json:"err_energy,omitempty"`
	// ErrEnergyWithFirsts is the energy against the model run's with each
	// measured block's first inference counted, where the model run gave
	// it (its J/op then leaves them out, as the prediction does): shown,
	// not judged.
	ErrEnergyWithFirsts *float64 `json:"err_energy_with_firsts,omitempty"`
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
	// TracedWallNS and TracedMedianWallNS are the same inference's mean
	// and median walls with the trace's own kernel times in place of the
	// replays (traced-wall-ns, traced-median-wall-ns; 0 without them), and
	// ErrTracedWall the judged one (as ErrWall's) against the model's
	// median inference, ErrTracedMeanWall the mean against the model's
	// mean as ErrMeanWall: where it misses as the prediction does, the
	// miss is the host schedule's or the host model's, not the replays'.
	TracedWallNS       float64  `json:"traced_wall_ns,omitempty"`
	TracedMedianWallNS float64  `json:"traced_median_wall_ns,omitempty"`
	ErrTracedWall      *float64 `json:"err_traced_wall,omitempty"`
	ErrTracedMeanWall  *float64 `json:"err_traced_mean_wall,omitempty"`
	// MedianJudged says the median walls were held to the model run
	// (ErrWall, InSpread, ErrTracedWall), not the means.
	MedianJudged bool `json:"median_judged,omitempty"`
}

// JudgedWallNS is the predicted wall the acceptance holds against the
// model run: the median where it was judged (MedianJudged), else the
// mean.
func (ir *InferenceReport) JudgedWallNS() float64 {
	if ir.MedianJudged {
		return ir.MedianWallNS
	}
	return ir.WallNS
}

// judgedTracedNS is the traced check's wall taken as JudgedWallNS takes
// the prediction's: its median where the median was judged and the
// output has the traced median, else its mean.
func (ir *InferenceReport) judgedTracedNS() float64 {
	if ir.MedianJudged && ir.TracedMedianWallNS > 0 {
		return ir.TracedMedianWallNS
	}
	return ir.TracedWallNS
}

// AcceptBound is the whole-inference acceptance's bound on the wall, the
// time per output token and the energy against the measured run, and on
// how far the measured processes may lie apart for the wall to be held to
// it (otherwise to the run's 10-90% spread).
const AcceptBound = 0.05

// verdict holds the prediction to the acceptance: the wall within
// AcceptBound of the measured median where the processes agree within it
// (or where one process ran), else inside the run's 10-90% spread; the
// time per output token and the energy within AcceptBound; an inference
// without an energy (NoEnergy) is said to have none measured. "" without a
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
	if ir.NoEnergy != "" {
		parts = append(parts, "energy not measured")
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
		TracedWallNS: med(s.Of(UnitTracedWallNS)), MedianWallNS: med(s.Of(UnitMedianWallNS)),
		TracedMedianWallNS: med(s.Of(UnitTracedMedianWallNS)),
	}
	ir.readDesign(w, med)
	if len(s.Joules) == 0 {
		ir.EnergyDesign, ir.NoEnergy = EnergyNone, w.NoEnergy
		if ir.NoEnergy == "" {
			ir.NoEnergy = "the output has no J/op for it"
		}
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
	lo, hi := med(m.Of(bench.UnitSpanP10)), med(m.Of(bench.UnitSpanP90))
	spread := lo > 0 && hi >= lo
	ir.MedianJudged = ir.MedianWallNS > 0 && spread
	wall := ir.JudgedWallNS()
	ir.ErrWall = relErr(wall, med(m.NS))
	if t := ir.judgedTracedNS(); t > 0 {
		ir.ErrTracedWall = relErr(t, med(m.NS))
	}
	if spread {
		in := wall >= lo && wall <= hi
		ir.InSpread = &in
	}
	if mean := med(m.MeanNS); ir.MedianJudged && mean > 0 {
		ir.ErrMeanWall = relErr(ir.WallNS, mean)
		if ir.TracedWallNS > 0 {
			ir.ErrTracedMeanWall = relErr(ir.TracedWallNS, mean)
		}
	}
	if t := med(m.Of(bench.UnitTPOTNS)); t > 0 && ir.TPOTNS > 0 {
		ir.ModelTPOTNS = t
		ir.ErrTPOT = relErr(ir.TPOTNS, t)
	}
	if j := med(m.Joules); j > 0 && ir.NoEnergy == "" {
		ir.ErrEnergy = relErr(ir.EnergyJ, j)
		if ir.IsolatedJ > 0 {
			ir.ErrIsolated = relErr(ir.IsolatedJ, j)
		}
		if ir.UnscaledJ > 0 {
			ir.ErrUnscaled = relErr(ir.UnscaledJ, j)
		}
	}
	if j := med(m.Of(bench.UnitFirstsJoules)); j > 0 && ir.NoEnergy == "" {
		ir.ErrEnergyWithFirsts = relErr(ir.EnergyJ, j)
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
	if ir.MedianWallNS > 0 {
		fmt.Fprintf(w, "inference wall (predicted)\t%s\tthe simulated inferences' median; their mean %s: GPU busy %s, GPU waiting on the host %s, host waiting on the GPU %s%s%s%s\n",
			textfmt.NS(ir.MedianWallNS), textfmt.NS(ir.WallNS), textfmt.NS(ir.BusyNS), textfmt.NS(ir.GPUIdleNS), textfmt.NS(ir.HostWaitNS),
			ir.vsModelWall(ir.ErrWall), meanVsModel(ir.ErrMeanWall), spread)
	} else {
		fmt.Fprintf(w, "inference wall (predicted)\t%s\tGPU busy %s, GPU waiting on the host %s, host waiting on the GPU %s%s%s\n",
			textfmt.NS(ir.WallNS), textfmt.NS(ir.BusyNS), textfmt.NS(ir.GPUIdleNS), textfmt.NS(ir.HostWaitNS), vsModel(ir.ErrWall), spread)
	}
	switch {
	case ir.TracedMedianWallNS > 0:
		fmt.Fprintf(w, "  with the trace's kernel times\t%s\tthe median, mean %s: the same schedule and host, the trace's own kernel times in place of the replays: a check, not a prediction%s%s\n",
			textfmt.NS(ir.TracedMedianWallNS), textfmt.NS(ir.TracedWallNS), ir.vsModelWall(ir.ErrTracedWall), meanVsModel(ir.ErrTracedMeanWall))
	case ir.TracedWallNS > 0:
		fmt.Fprintf(w, "  with the trace's kernel times\t%s\tthe same schedule and host, the trace's own kernel times in place of the replays: a check, not a prediction%s\n",
			textfmt.NS(ir.TracedWallNS), vsModel(ir.ErrTracedWall))
	}
	if ir.Tokens > 0 {
		fmt.Fprintf(w, "time per output token\t%s\tp90 %s, %.0f tokens, time to first token %s%s\n",
			textfmt.NS(ir.TPOTNS), textfmt.NS(ir.TPOTP90NS), ir.Tokens, textfmt.NS(ir.TTFTNS), vsModel(ir.ErrTPOT))
	}
	ir.writeEnergy(w)
	if ir.Tokens > 0 && ir.NoEnergy == "" {
		fmt.Fprintf(w, "energy per output token\t%.4g J\t\n", ir.JPerToken)
	}
	if ir.PacedNS > 0 {
		j := ""
		if ir.PacedJ > 0 {
			j = fmt.Sprintf(", %.4g J", ir.PacedJ)
		}
		fmt.Fprintf(w, "paced timeline (measured)\t%s\tthe replays launched at the recorded host pacing, one inference a pass%s; the predicted wall %+.1f%% from it\n",
			textfmt.NS(ir.PacedNS), j, 100**ir.ErrVsPaced)
	}
	if ir.Verdict != "" {
		fmt.Fprintf(w, "against the acceptance\t\t%s\n", ir.Verdict)
	}
}

// vsModelWall is vsModel of a wall's error, naming the statistic held to
// the model's median where the output has the median: "; the median
// ±x% vs the model's median" (or "; the mean ±x% vs the model" where the
// model run measured no median).
func (ir *InferenceReport) vsModelWall(e *float64) string {
	switch {
	case e == nil:
		return ""
	case ir.MedianJudged:
		return fmt.Sprintf("; the median %+.1f%% vs the model's median", 100**e)
	}
	return fmt.Sprintf("; the mean %+.1f%% vs the model", 100**e)
}

// meanVsModel is "; the mean ±x% vs the model's mean", or "" without it.
func meanVsModel(e *float64) string {
	if e == nil {
		return ""
	}
	return fmt.Sprintf("; the mean %+.1f%% vs the model's mean", 100**e)
}

// vsModel is "; prediction ±x% vs the model", or "" without a model.
func vsModel(e *float64) string {
	if e == nil {
		return ""
	}
	return fmt.Sprintf("; %+.1f%% vs the model", 100**e)
}

// withFirsts is the energy against the model run's with the measured
// blocks' first inferences counted, as a suffix ("" without it).
func withFirsts(e *float64) string {
	if e == nil {
		return ""
	}
	return fmt.Sprintf(" (%+.1f%% against it with each measured block's first inference)", 100**e)
}

// readDesign reads the energy design of w's inference benchmark
// (EnergyDesign and its figures), med taking a figure's runs' center.
func (ir *InferenceReport) readDesign(w *WorkloadResults, med func([]float64) float64) {
	s := w.Inference
	switch {
	case med(s.Of(UnitPacedJ)) > 0:
		ir.EnergyDesign = EnergyInPlace
		ir.IsolatedJ, ir.PassJ, ir.PassWallNS = med(s.Of(UnitIsolatedJ)), med(s.Of(UnitPacedJ)), med(s.Of(UnitPacedWallNS))
		ir.BusyScale, ir.UnscaledJ = med(s.Of(UnitBusyScale)), med(s.Of(UnitUnscaledJ))
	case w.EnergyNotInPlace != "":
		ir.EnergyDesign, ir.NotInPlace = EnergyIsolated, w.EnergyNotInPlace
	}
}

// writeEnergy prints the inference's energy line: the design in place
// with its terms and the isolated total beside, not judged (or that it
// was not measured, where the output has no isolated-J/op); else the
// isolated design's terms, with why it was taken where the output says;
// without an energy, that it was not measured and why.
func (ir *InferenceReport) writeEnergy(w io.Writer) {
	if ir.NoEnergy != "" {
		fmt.Fprintf(w, "inference energy (predicted)\tnot measured\t%s\n", ir.NoEnergy)
		return
	}
	if ir.EnergyDesign == EnergyInPlace {
		isolated := IsolatedNotMeasured
		if ir.IsolatedJ > 0 {
			isolated = fmt.Sprintf("the isolated replays' sum %.4g J", ir.IsolatedJ)
			if ir.ErrIsolated != nil {
				isolated += fmt.Sprintf(" (%+.1f%% vs the model)", 100**ir.ErrIsolated)
			}
			isolated += ", not judged"
		}
		terms := fmt.Sprintf("the paced timeline's %.4g J per pass + waiting %.1f W x (wall - the paced pass's %s)", ir.PassJ, ir.WaitW, textfmt.NS(ir.PassWallNS))
		if ir.BusyScale > 0 {
			terms = fmt.Sprintf("the paced timeline's %.4g J per pass less waiting %.1f W x its %s, x%.3f to the predicted busy time, + waiting x the wall", ir.PassJ, ir.WaitW, textfmt.NS(ir.PassWallNS), ir.BusyScale)
			unscaled := fmt.Sprintf("unscaled %.4g J", ir.UnscaledJ)
			if ir.ErrUnscaled != nil {
				unscaled += fmt.Sprintf(" (%+.1f%% vs the model)", 100**ir.ErrUnscaled)
			}
			isolated = unscaled + ", not judged; " + isolated
		}
		fmt.Fprintf(w, "inference energy (predicted)\t%.4g J\tin place: %s%s; %s\n",
			ir.EnergyJ, terms, vsModel(ir.ErrEnergy)+withFirsts(ir.ErrEnergyWithFirsts), isolated)
		return
	}
	why := ""
	if ir.NotInPlace != "" {
		why = " (isolated replays: no paced energy: " + ir.NotInPlace + ")"
	}
	fmt.Fprintf(w, "inference energy (predicted)\t%.4g J\tkernels %.4g J + waiting %.4g J (%.1f W x (wall - busy))%s%s\n",
		ir.EnergyJ, ir.KernelJ, ir.WaitJ, ir.WaitW, vsModel(ir.ErrEnergy)+withFirsts(ir.ErrEnergyWithFirsts), why)
}
