package predict

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/kreplay/kreplay/internal/errw"
	"github.com/kreplay/kreplay/internal/textfmt"
)

// WriteText prints the prediction as aligned tables.
func (p *Prediction) WriteText(w io.Writer) error {
	ew := &errw.Writer{W: w}
	for i, wp := range p.Workloads {
		if i > 0 {
			fmt.Fprintln(ew)
		}
		wp.writeText(ew, p.Confidence)
	}
	if len(p.NoSet) > 0 {
		fmt.Fprintf(ew, "\nno signature set for workloads %s (pass -sets)\n", strings.Join(p.NoSet, ", "))
	}
	if len(p.NoResults) > 0 {
		fmt.Fprintf(ew, "\nno results for workloads %s\n", strings.Join(p.NoResults, ", "))
	}
	ew.Warnings(p.Warnings)
	return ew.Err
}

func (wp *WorkloadPrediction) writeText(w io.Writer, conf float64) {
	fmt.Fprintf(w, "workload %s (%s", wp.Workload, wp.File)
	switch {
	case wp.Projected:
		fmt.Fprintf(w, ", projected from %s onto %s", wp.TraceGPU, wp.GPU)
	case wp.GPU != "":
		fmt.Fprintf(w, ", %s", wp.GPU)
	case wp.TraceGPU != "":
		fmt.Fprintf(w, ", traced on %s", wp.TraceGPU)
	}
	fmt.Fprintf(w, "): %d signatures, %d measured (up to %d runs), %d missing, %d part of another\n",
		wp.Signatures, wp.Measured, wp.Runs, wp.Missing, wp.Parts)
	bounds := fmt.Sprintf(" (%.0f%% CI)", 100*conf)
	if wp.RangeOnly > 0 {
		bounds = fmt.Sprintf(" (%.0f%% CI; for %d signatures with < 6 runs, their range)", 100*conf, wp.RangeOnly)
	}
	if wp.Runs < 2 {
		bounds = ""
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "predicted GPU time\t%s\t%s%s\n", textfmt.NS(wp.PredictedNS.Center), nsBounds(wp.PredictedNS, wp.Runs), bounds)
	if len(wp.ByFidelity) > 0 {
		var parts []string
		for _, f := range wp.ByFidelity {
			parts = append(parts, fmt.Sprintf("%s %s (%.1f%%)", f.Fidelity, textfmt.NS(f.PredictedNS), 100*f.Share))
		}
		flags := ""
		if wp.Throttled+wp.Unconverged > 0 {
			flags = fmt.Sprintf("; %d signatures throttled", wp.Throttled)
			if wp.ThrottledDiscarded+wp.ThrottledKept > 0 {
				flags += fmt.Sprintf(" (throttled samples discarded in %d, kept in %d)", wp.ThrottledDiscarded, wp.ThrottledKept)
			}
			flags += fmt.Sprintf(", %d unconverged", wp.Unconverged)
		}
		fmt.Fprintf(tw, "  by fidelity\t\t%s%s\n", strings.Join(parts, ", "), flags)
	}
	if wp.ArrivalOff != "" {
		fmt.Fprintf(tw, "  memset arrivals\t\t%s\n", wp.ArrivalOff)
	}
	if wp.Arrivals > 0 {
		fmt.Fprintf(tw, "  memset arrivals\t\t%s of it (%.2f%%): %d memsets the host launched 1.2-2.0 µs after the GPU went idle, charged %.2f x the time left to 2.0 µs (an estimate fitted on H100 traces; -memset-arrival=false leaves it out)\n",
			textfmt.NS(wp.ArrivalNS), 100*wp.ArrivalNS/max(wp.PredictedNS.Center, 1), wp.Arrivals, MemsetArrivalSlope)
	}
	fmt.Fprintf(tw, "traced, measured signatures\t%s\t%.1f%% of the traced %s%s\n", textfmt.NS(float64(wp.CoveredNS)), 100*wp.Coverage, textfmt.NS(float64(wp.TracedNS)), errText(wp.ErrCovered))
	if wp.Interpolated > 0 {
		fmt.Fprintf(tw, "  interpolated\t%s\t%d signatures interpolated (%.1f%% of the traced time) between measured members of their families, not measured\n",
			textfmt.NS(float64(wp.InterpolatedNS)), wp.Interpolated, 100*wp.InterpolatedShare)
	}
	fmt.Fprintf(tw, "trace GPU busy\t%s\tof wall %s%s\n", textfmt.NS(float64(wp.BusyNS)), textfmt.NS(float64(wp.TraceWallNS)), errText(wp.ErrBusy))
	if tl := wp.Timeline; tl != nil {
		fmt.Fprintf(tw, "timeline replay\t%s\t%s, %s traced skipped%s%s\n", textfmt.NS(tl.NS.Center), nsBounds(tl.NS.Interval, tl.NS.Runs),
			textfmt.NS(tl.SkippedNS), errVs("predicted", tl.ErrPredicted), errVs("busy", tl.ErrBusy))
		if g := tl.Graph; g != nil {
			fmt.Fprintf(tw, "  in the graph\t%s\tits activities busy under CUPTI%s; %.0f gaps between them, %s in all (median %s), which busy time does not count\n",
				textfmt.NS(g.BusyNS), errVs("busy", g.ErrBusy), g.Gaps, textfmt.NS(g.GapNS), textfmt.NS(g.MedianGapNS))
		}
	}
	if wp.Model == nil && wp.NoModel != "" {
		fmt.Fprintf(tw, "model\tnot run\t%s\n", textfmt.OneLine(wp.NoModel, 200))
	}
	if m := wp.Model; m != nil {
		what := ""
		if m.MeanWallNS != nil {
			what = fmt.Sprintf(", the median inference (mean %s)", textfmt.NS(m.MeanWallNS.Center))
		}
		fmt.Fprintf(tw, "model wall time\t%s\t%s%s%s\n", textfmt.NS(m.WallNS.Center), nsBounds(m.WallNS.Interval, m.WallNS.Runs), what, errText(wp.ErrModel))
	}
	if pj := wp.PredictedJ; pj != nil {
		fmt.Fprintf(tw, "predicted kernel energy\t%.4g J\t%s, %d signatures, %.1f%% of the traced time\n",
			pj.Center, jBounds(*pj, wp.Runs), wp.EnergySignatures, 100*wp.EnergyCoverage)
		if wp.EnergyThrottled > 0 && pj.Center > 0 {
			fmt.Fprintf(tw, "  throttled windows\t%.4g J\t%.1f%% of it, %d signatures: measured at a power- or heat-capped clock; a real run that keeps its clocks spends more per launch\n",
				wp.ThrottledJ, 100*wp.ThrottledJ/pj.Center, wp.EnergyThrottled)
		}
		if wp.EnergyDuty > 0 && pj.Center > 0 {
			fmt.Fprintf(tw, "  duty-cycled windows\t%.4g J\t%.1f%% of it, %d signatures: capped back to back, measured again in bursts with idle gaps under the cap\n",
				wp.DutyJ, 100*wp.DutyJ/pj.Center, wp.EnergyDuty)
		}
		if wp.EnergyEstimated > 0 && pj.Center > 0 {
			fmt.Fprintf(tw, "  estimated, not measured\t%.4g J\t%.1f%% of it, %d signatures: their time x their class's measured power (a guess)\n",
				wp.EstimatedJ, 100*wp.EstimatedJ/pj.Center, wp.EnergyEstimated)
		}
	}
	if wp.IdleJ != nil {
		fmt.Fprintf(tw, "idle-gap energy\t%.4g J\tidle %.1f W (the model run's idle power, measured right after it) x (model wall - trace busy)\n", *wp.IdleJ, wp.Model.IdleW.Center)
		if wp.TraceIdleJ != nil {
			fmt.Fprintf(tw, "  from the trace alone\t%.4g J\tthe same power x (trace wall - busy): the profiled run's gaps, an estimate without a model run\n", *wp.TraceIdleJ)
		}
	}
	if t := wp.TotalJ; t != nil && wp.IdleJ != nil {
		fmt.Fprintf(tw, "predicted energy\t%.4g J\t%s\n", t.Center, jBounds(*t, wp.Runs))
		if wp.CapJ != nil {
			fmt.Fprintf(tw, "  bounded by the power limit\t%.4g J\tpower limit %.0f W x model wall: the sum above came out higher\n", *wp.CapJ, wp.PowerLimitW)
		}
	}
	if m := wp.Model; m != nil && m.J != nil {
		fmt.Fprintf(tw, "model energy\t%.4g J\t%s%s\n", m.J.Center, jBounds(m.J.Interval, m.J.Runs), errText(wp.ErrEnergy))
	}
	if ir := wp.Inference; ir != nil {
		ir.writeText(tw)
	}
	if tl := wp.Timeline; tl != nil && tl.J != nil {
		gap := "no gap"
		if tl.GapNS > 0 {
			gap = "the model's idle " + textfmt.NS(tl.GapNS) + " after each"
		}
		fmt.Fprintf(tw, "timeline energy\t%.4g J\t%s, every kernel in order under the power limiter, %s%s\n",
			tl.J.Center, jBounds(tl.J.Interval, tl.J.Runs), gap, errVs("model energy", tl.ErrEnergy))
	}
	tw.Flush()

	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "\ntier\tclass\tsignatures\tmeasured\ttraced\tof it measured\tpredicted\tx traced\t")
	for _, list := range [][]GroupPrediction{wp.Tiers, wp.Classes} {
		for _, g := range list {
			class := string(g.Class)
			if class == "" {
				class = "all"
			}
			fmt.Fprintf(tw, "%d\t%s\t%d\t%d\t%s\t%s\t%s\t%s\t\n", g.Tier, class, g.Signatures, g.Measured,
				textfmt.NS(float64(g.TracedNS)), textfmt.NS(float64(g.CoveredNS)), textfmt.NS(g.PredictedNS.Center), ratio(g.Ratio))
		}
	}
	tw.Flush()

	if len(wp.Top) > 0 {
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "\ntop %d signatures by predicted time\nid\ttier\tclass\tcount\ttraced/call\treplay/call\t±\tx traced\tpredicted\tshare\tlabel\n", len(wp.Top))
		for _, s := range wp.Top {
			share := 0.0
			if wp.PredictedNS.Center > 0 {
				share = s.PredictedNS.Center / wp.PredictedNS.Center
			}
			fmt.Fprintf(tw, "%s\t%d\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%.1f%%\t%s\n", s.ID, s.Tier, s.Class, s.Count,
				textfmt.NS(s.TracedPerCallNS), textfmt.NS(s.ReplayNS.Center), halfWidth(s.ReplayNS), ratio(s.Ratio),
				textfmt.NS(s.PredictedNS.Center), 100*share, sigLabel(s))
		}
		tw.Flush()
	}
	wp.writeRoofline(w)
	if len(wp.MissingSigs) > 0 {
		var share float64
		for _, m := range wp.MissingSigs {
			share += m.Share
		}
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "\n%d signatures missing from the results, %.1f%% of the traced time\nid\ttier\tclass\tcount\ttraced\tshare\treason\tlabel\n", len(wp.MissingSigs), 100*share)
		for _, m := range wp.MissingSigs {
			reason := m.Reason
			if reason == "" {
				reason = "not in the output"
			}
			fmt.Fprintf(tw, "%s\t%d\t%s\t%d\t%s\t%.2f%%\t%s\t%s\n", m.ID, m.Tier, m.Class, m.Count,
				textfmt.NS(float64(m.TracedNS)), 100*m.Share, truncate(reason, 60), truncate(m.Label, 50))
		}
		tw.Flush()
	}
}

func errText(e *float64) string {
	if e == nil {
		return ""
	}
	return fmt.Sprintf("; prediction %+.1f%%", 100**e)
}

// nsBounds writes an interval of times, or says there is none: one run
// gives no interval.
func nsBounds(iv Interval, runs int) string {
	if runs < 2 {
		return fmt.Sprintf("n/a (%d run)", runs)
	}
	return fmt.Sprintf("[%s, %s], %d runs", textfmt.NS(iv.Lo), textfmt.NS(iv.Hi), runs)
}

// jBounds writes an interval of energies as nsBounds does times.
func jBounds(iv Interval, runs int) string {
	if runs < 2 {
		return fmt.Sprintf("n/a (%d run)", runs)
	}
	return fmt.Sprintf("[%.4g, %.4g], %d runs", iv.Lo, iv.Hi, runs)
}

func ratio(r float64) string {
	if r == 0 {
		return "-"
	}
	return fmt.Sprintf("x%.3f", r)
}

// halfWidth is the larger distance from the center to a bound, relative
// to the center, marked "r" when the bounds are a range.
func halfWidth(s Summary) string {
	if s.Center <= 0 {
		return "-"
	}
	h := max(s.Center-s.Lo, s.Hi-s.Center) / s.Center
	mark := ""
	if s.Range {
		mark = " r"
	}
	return fmt.Sprintf("%.1f%%%s", 100*h, mark)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return textfmt.OneLine(s, n)
}

// errVs formats a relative error against a named reference, or "".
func errVs(ref string, e *float64) string {
	if e == nil {
		return ""
	}
	return fmt.Sprintf("; %+.1f%% vs %s", 100**e, ref)
}

// sigLabel is a top signature's label, marked when its result was
// interpolated.
func sigLabel(s *SigPrediction) string {
	if s.Interpolated {
		return "interpolated: " + truncate(s.Label, 56)
	}
	return truncate(s.Label, 70)
}
