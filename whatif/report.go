package whatif

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/kreplay/kreplay/internal/textfmt"
)

// WriteText writes the match: the runs, the replaced signatures and their
// traced time.
func (m *Match) WriteText(w io.Writer) error {
	ew := &errWriter{w: w}
	recipe := ""
	if r := RecipeFor(m.Steps); r != nil {
		recipe = " (recipe " + r.Name + ")"
	}
	ew.printf("what-if: replace %s%s in %s\n", strings.Join(m.Steps, ","), recipe, m.Workload)
	if len(m.Runs) == 0 {
		ew.printf("no run matched: %s\n", m.Hint)
		return ew.err
	}
	streams := map[[2]int64]bool{}
	inv := 0
	for _, r := range m.Runs {
		streams[[2]int64{r.Device, r.Stream}] = true
		inv += len(r.Invocations)
	}
	ew.printf("%d runs on %d stream(s), %d variant(s); %d invocations, %s traced (%.1f%% of the trace's %s busy)\n\n",
		len(m.Runs), len(streams), len(m.Variants), inv, textfmt.NS(float64(m.TracedNS)), pct(float64(m.TracedNS), float64(m.BusyNS)),
		textfmt.NS(float64(m.BusyNS)))
	tw := tabwriter.NewWriter(ew, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "replaced\top\tin runs\tof\ttraced in runs\tlabel")
	for _, r := range m.Sorted() {
		label := r.Label
		if r.PartOf != "" {
			label += " (part of " + r.PartOf + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%s\n", r.ID, r.Op, r.Invocations, r.Count, textfmt.NS(float64(r.TracedNS)), label)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	return ew.err
}

// WriteText writes how the kernel is bound to each variant.
func (p *Plan) WriteText(w io.Writer) error {
	ew := &errWriter{w: w}
	k := p.Kernel
	how := "source, compiled with NVRTC on the GPU machine"
	if k.CUBIN != nil {
		how = "module image"
	}
	ew.printf("\nkernel %s (%s: %s)\nABI: %s\n", k.Name, k.File, how, RowNormABI)
	for _, b := range p.Variants {
		rn := b.RowNorm
		eps := "traced"
		if !rn.EpsTraced {
			eps = "given (-eps): the trace does not record it"
		}
		grid, _ := k.LaunchFor(rn)
		ew.printf("variant %d: %d runs, recipe %s: x %s%v as %d rows of %d, w %s[%d], T = %s, eps %g (%s)\n",
			b.Index, b.Variant.Runs, b.Recipe.Name, rn.DType, rn.Shape, rn.Rows, rn.Cols, rn.DType, rn.Cols, rn.DType, rn.Eps, eps)
		ew.printf("  launch: grid %v (%s,%s,%s), block %v, %d B shared; signature %s\n",
			grid, k.Grid[0], k.Grid[1], k.Grid[2], k.Block, k.Shared, b.Sig.ID)
	}
	return ew.err
}

// WriteText writes the result: the output checks, the replays alone, the
// prediction and the timeline check.
func (r *Result) WriteText(w io.Writer) error {
	ew := &errWriter{w: w}
	ew.printf("\non %s\n", r.GPU)
	for _, v := range r.Variants {
		switch {
		case v.Check == nil:
			ew.printf("output check, variant %d: NOT DONE: %s\n", v.Index, v.CheckErr)
		default:
			verdict := "OK"
			if !v.Check.OK() {
				verdict = "FAILED"
			}
			ew.printf("output check, variant %d: %s\n  against the chain replayed by kreplay's kernels: %v\n  against the host reference: %v\n"+
				"  (the chain against the host reference: %v)\n", v.Index, verdict, v.Check.Chain, v.Check.Host, v.Check.ChainHost)
		}
		ew.printf("kernel alone, variant %d: %s per launch%s\n", v.Index, textfmt.NS(v.Times.NS), joules(v.Times.J))
	}
	ew.printf("replaced signatures' times from %s:\n", r.Baseline.From)
	tw := tabwriter.NewWriter(ew, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  id\ttime\tenergy\tin runs\ttotal\tlabel")
	for _, rep := range r.Match.Replaced {
		if rep.PartOf != "" {
			continue
		}
		t := r.Baseline.Sigs[rep.ID]
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%d\t%s\t%s\n", rep.ID, textfmt.NS(t.NS), strings.TrimPrefix(joules(t.J), ", "), rep.Invocations,
			textfmt.NS(t.NS*float64(rep.Invocations)), rep.Label)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, m := range r.Modes {
		if m.Err != "" {
			ew.printf("probe, alone in the %s cache mode: %s %s: not replayed: %s\n", m.Mode, m.ID, m.Label, m.Err)
			continue
		}
		ew.printf("probe, alone in the %s cache mode: %s %s: %s\n", m.Mode, m.ID, m.Label, textfmt.NS(m.KernelNS))
	}
	r.Prediction.write(ew)
	if r.Timeline != nil {
		r.Timeline.write(ew, r.Prediction)
	} else if r.TimelineErr != "" {
		ew.printf("timeline check: not done: %s\n", r.TimelineErr)
	}
	return ew.err
}

func (p *Prediction) write(ew *errWriter) {
	ew.printf("prediction: the runs' signatures %s, the kernel %s (%d runs): saving %s\n",
		textfmt.NS(p.ReplacedNS), textfmt.NS(p.FusedNS), p.Runs, textfmt.NS(p.SavingNS))
	if p.BaseNS > 0 {
		ew.printf("  predicted GPU time %s -> %s (%+.1f%%)\n", textfmt.NS(p.BaseNS), textfmt.NS(p.NewNS), 100*(p.NewNS/p.BaseNS-1))
	} else {
		ew.printf("  (no predicted total: give -bench, kreplay predict's output, for it)\n")
	}
	switch {
	case !p.Energy:
		ew.printf("  energy: not predicted: %s\n", p.NoEnergy)
	case p.BaseJ > 0:
		ew.printf("  energy: saving %.3f J; the signatures' %.2f J -> %.2f J (%+.1f%%; the idle gaps' energy not included)\n",
			p.SavingJ, p.BaseJ, p.NewJ, 100*(p.NewJ/p.BaseJ-1))
	default:
		ew.printf("  energy: saving %.3f J per inference\n", p.SavingJ)
	}
	p.writeInContext(ew)
	p.writeLimit(ew)
	p.writeAgain(ew) // with or without the baseline's totals and limit
	p.writeRemoved(ew)
	p.writeTimelineDesign(ew)
}

// writeTimelineDesign prints the timeline design's saving (design.go).
func (p *Prediction) writeTimelineDesign(ew *errWriter) {
	d := p.TimelineDesign
	if d == nil {
		if p.TimelineDesignErr != "" {
			ew.printf("  timeline design: not given: %s\n", p.TimelineDesignErr)
		}
		return
	}
	if !d.Energy {
		ew.printf("  timeline design: saving %s per inference (time: the timeline check's measured saving); energy not given: %s\n", textfmt.NS(d.SavingNS), d.NoEnergy)
		return
	}
	where := "under"
	if d.PowerLimited {
		where = "at or above"
	}
	ew.printf("  timeline design: saving %s, %.3f J per inference (time: the timeline check's measured saving; energy: %s, "+
		"the measured run's %.0f W %s %.0f%% of the %.0f W limit (%s))\n",
		textfmt.NS(d.SavingNS), d.SavingJ, d.EnergyRule, d.MeanPowerW, where, 100*PowerLimitedShare, d.PowerLimitW, d.PowerLimitFrom)
}

// writeInContext prints the saving from the replays with operands from
// device memory.
func (p *Prediction) writeInContext(ew *errWriter) {
	c := p.InContext
	if c == nil {
		if p.InContextErr != "" {
			ew.printf("  in context (Rotating replays): not done: %s\n", p.InContextErr)
		}
		return
	}
	compared := ""
	if p.inContextCompared() {
		compared = " (the prediction the check compares)"
	}
	energy := ""
	if c.Energy {
		energy = fmt.Sprintf(", %.3f J", c.SavingJ)
	}
	ew.printf("  in context (replayed alone with operands from device memory, as between a model's GEMMs): the runs' signatures %s, the kernel %s: saving %s%s%s\n",
		textfmt.NS(c.ReplacedNS), textfmt.NS(c.FusedNS), textfmt.NS(c.SavingNS), energy, compared)
}

// writeLimit prints the power limit's view (limit.go).
func (p *Prediction) writeLimit(ew *errWriter) {
	if p.PowerLimitW <= 0 {
		return
	}
	draw := p.BaseJ / p.BaseNS * 1e9
	if !p.AtLimit {
		ew.printf("  power limit %.0f W (%s): the signatures draw %.0f W back to back, under it: the saving is the kernels' own, %s\n",
			p.PowerLimitW, p.PowerLimitFrom, draw, textfmt.NS(p.SavingNS))
		return
	}
	ew.printf("  power limit %.0f W (%s): the signatures draw %.0f W back to back (%.4g J in %s), over it: the power cap sets the clocks,\n",
		p.PowerLimitW, p.PowerLimitFrom, draw, p.BaseJ, textfmt.NS(p.BaseNS))
	ew.printf("    and time is energy over the limit: %s -> %s, saving %s (the kernels' own saving, %s, is what a GPU under its limit saves)\n",
		textfmt.NS(p.BaseLimitNS), textfmt.NS(p.NewLimitNS), textfmt.NS(p.LimitSavingNS), textfmt.NS(p.SavingNS))
	switch c := p.Cap; {
	case c != nil:
		ew.printf("  at the cap, calibrated on %s (%s, %.2f J, %.0f MHz; the replays ran at %.0f MHz):\n",
			c.From, textfmt.NS(c.BaseNS), c.BaseJ, c.BaseMHz, c.ReplayMHz)
		ew.printf("    clock-bound share %.3f, energy per operation -%.1f%% per -10%% of clock; the what-if runs at %.0f MHz:\n",
			c.ClockShare, 10*c.EnergySlope, c.NewMHz)
		compared := " (the prediction the check compares)"
		if p.Again != nil || p.Removed != nil {
			compared = ""
		}
		ew.printf("    %s -> %s, saving %s; %.2f J -> %.2f J, saving %.3f J%s\n",
			textfmt.NS(c.BaseNS), textfmt.NS(c.NewNS), textfmt.NS(c.SavingNS), c.BaseJ, c.NewJ, c.SavingJ, compared)
		if c.Warning != "" {
			ew.printf("    warning: %s\n", c.Warning)
		}
	case p.CapErr != "":
		ew.printf("  at the cap, calibrated: not done: %s\n", p.CapErr)
	}
}

// writeAgain prints the prediction from the plain and again timelines.
func (p *Prediction) writeAgain(ew *errWriter) {
	a := p.Again
	if a == nil {
		if p.AgainErr != "" {
			ew.printf("  at the cap, from the plain and again timelines: not done: %s\n", p.AgainErr)
		}
		return
	}
	ew.printf("  at the cap, from the plain and again timelines (%.0f W held): plain %s at %.0f MHz, the replaced runs twice %s at %.0f MHz;\n",
		a.PowerW, textfmt.NS(a.PlainNS), a.PlainMHz, textfmt.NS(a.AgainNS), a.AgainMHz)
	ew.printf("    the replaced signatures in context %s (%.3f J at their power alone, rotating), the kernel's runs %s (%.3f J, alone rotating);\n",
		textfmt.NS(a.ReplacedNS), a.ReplacedJ, textfmt.NS(a.FusedNS), a.FusedJ)
	ew.printf("    the rest (the other kernels and the gaps) took %s and %s (fitted as a + b / clock), %.2f J at %.0f MHz, %+.4f J per MHz;\n",
		textfmt.NS(a.PlainNS-a.ReplacedNS), textfmt.NS(a.AgainNS-a.AgainReplacedNS), a.KeptJ, a.PlainMHz, a.EnergySlope)
	a.CapFit.write(ew, a.PlainNS, p.Removed == nil)
}

// write prints the fit's clock scaling and the what-if's run against the
// plain run's time, marked as the prediction compared when it is.
func (f *CapFit) write(ew *errWriter, plainNS float64, compared bool) {
	if f.AloneMHz > 0 {
		ew.printf("    their and the kernel's power scaled by the clock over the replays' alone, %.0f MHz (a guess: memory-bound power follows the SM clock);\n", f.AloneMHz)
	}
	mark := ""
	if compared {
		mark = " (the prediction the check compares)"
	}
	ew.printf("    the what-if runs at %.0f MHz, where it draws the power held:\n", f.NewMHz)
	ew.printf("    %s -> %s, saving %s; saving %.3f J%s\n",
		textfmt.NS(plainNS), textfmt.NS(f.NewNS), textfmt.NS(f.SavingNS), f.SavingJ, mark)
}

// writeRemoved prints the prediction from the plain and removed timelines.
func (p *Prediction) writeRemoved(ew *errWriter) {
	r := p.Removed
	if r == nil {
		if p.RemovedErr != "" {
			ew.printf("  at the cap, from the plain and removed timelines: not done: %s\n", p.RemovedErr)
		}
		return
	}
	ew.printf("  at the cap, a measured ablation plus the kernel (the plain and removed timelines, %.0f W held): plain %s at %.0f MHz, the replaced runs removed %s at %.0f MHz;\n",
		r.PowerW, textfmt.NS(r.PlainNS), r.PlainMHz, textfmt.NS(r.RemovedNS), r.RemovedMHz)
	add := "+" + textfmt.NS(r.SavingNS-r.AblationNS)
	if r.SavingNS < r.AblationNS {
		add = "-" + textfmt.NS(r.AblationNS-r.SavingNS)
	}
	ew.printf("    with no model, plain - removed - the kernel's runs alone saves %s; the model adds the clock's rise with the kernel's runs: %s\n",
		textfmt.NS(r.AblationNS), add)
	ew.printf("    the replaced signatures in context %s (%.3f J at their power alone, rotating), the kernel's runs %s (%.3f J, alone rotating: a guess);\n",
		textfmt.NS(r.ReplacedNS), r.ReplacedJ, textfmt.NS(r.FusedNS), r.FusedJ)
	ew.printf("    the rest (the other kernels and the gaps) took %s and %s (fitted as a + b / clock), %.2f J at %.0f MHz, %+.4f J per MHz;\n",
		textfmt.NS(r.PlainNS-r.ReplacedNS), textfmt.NS(r.RemovedNS), r.KeptJ, r.RemovedMHz, r.EnergySlope)
	r.CapFit.write(ew, r.PlainNS, true)
}

func (tc *TimelineCheck) write(ew *errWriter, p *Prediction) {
	ew.printf("timeline check (%d rounds, alternating): plain %s, substituted %s per launch\n", len(tc.Rounds), textfmt.NS(tc.PlainNS), textfmt.NS(tc.SubstNS))
	ew.printf("  measured saving %s, predicted %s: predicted/measured %.3f (%+.1f%%)\n",
		textfmt.NS(tc.SavingNS), textfmt.NS(p.Saving()), tc.Ratio, 100*(tc.Ratio-1))
	if tc.MeanSavingNS != 0 && tc.MeanRatio != 0 {
		what := ""
		if p.AtLimit {
			what = " (at the cap, the one to compare: the limiter's slow launches count)"
		}
		ew.printf("  sustained (the rounds' means): plain %s, substituted %s, saving %s: predicted/sustained %.3f (%+.1f%%)%s\n",
			textfmt.NS(tc.PlainMeanNS), textfmt.NS(tc.SubstMeanNS), textfmt.NS(tc.MeanSavingNS), tc.MeanRatio, 100*(tc.MeanRatio-1), what)
	}
	if tc.ContextErr == "" {
		ew.printf("  in context (CUPTI kernel times, without the gaps): saving %s: predicted/in-context %.3f (%+.1f%%)\n",
			textfmt.NS(tc.KernelSavingNS), tc.KernelRatio, 100*(tc.KernelRatio-1))
	} else {
		ew.printf("  in context: not measured: %s\n", tc.ContextErr)
	}
	switch {
	case tc.SavingJ != 0 && tc.EnergyRatio != 0:
		ew.printf("  energy: %.3f -> %.3f J per launch, saving %.3f J: predicted/measured %.3f\n", tc.PlainJ, tc.SubstJ, tc.SavingJ, tc.EnergyRatio)
	case tc.SavingJ != 0:
		ew.printf("  energy: %.3f -> %.3f J per launch, saving %.3f J\n", tc.PlainJ, tc.SubstJ, tc.SavingJ)
	case tc.EnergyErr != "":
		ew.printf("  energy: not measured: %s\n", tc.EnergyErr)
	}
	if tc.Plain != nil && tc.Subst != nil && tc.Plain.GPU != nil && tc.Subst.GPU != nil && tc.Plain.GPU.MeanSMClockMHz > 0 && tc.Subst.GPU.MeanSMClockMHz > 0 {
		g, h := tc.Plain.GPU, tc.Subst.GPU
		ew.printf("  NVML while timed: plain mean SM clock %.0f MHz, %.0f W; substituted %.0f MHz, %.0f W\n",
			g.MeanSMClockMHz, g.MeanPowerW, h.MeanSMClockMHz, h.MeanPowerW)
	}
	ew.printf("  launches: %d plain, %d substituted (%d invocations replaced by %d launches)\n",
		tc.PlainLaunches, tc.SubstLaunches, tc.Substituted, p.Runs)
	if tc.RunsSkipped > 0 {
		ew.printf("  warning: the plain timeline skipped %d of the runs' invocations, which the prediction counts\n", tc.RunsSkipped)
	}
	if tc.Again != nil {
		ew.printf("  probe, the replaced runs twice (%d launches): %.3fms per launch, sustained %.3fms (plain %+.3fms), %.0f MHz%s\n",
			tc.AgainLaunches, tc.AgainNS/1e6, tc.AgainMeanNS/1e6, (tc.AgainMeanNS-tc.PlainMeanNS)/1e6, tc.AgainMHz, joules(tc.AgainJ))
	}
	if r := tc.Removed; r != nil {
		ew.printf("  probe, the replaced runs removed (%d launches): %.3fms per launch, sustained %.3fms (plain %+.3fms), %.0f MHz%s\n",
			r.Launches, r.NS/1e6, r.MeanNS/1e6, (r.MeanNS-tc.PlainMeanNS)/1e6, r.MHz, joules(r.J))
	}
	if tc.Plain != nil && tc.Plain.Energy != nil && tc.Plain.Energy.Throttled && p.Removed == nil && p.RemovedErr == "" {
		ew.printf("  note: the plain timeline ran at the power cap; -removed predicts there from it and a run with the replaced runs removed\n")
	}
}

// joules formats an energy per launch, "" for none.
func joules(j float64) string {
	if j <= 0 {
		return ""
	}
	return fmt.Sprintf(", %.4g J", j)
}

func pct(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return 100 * a / b
}

// errWriter keeps the first write error.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}

func (e *errWriter) printf(format string, args ...any) { fmt.Fprintf(e, format, args...) }
