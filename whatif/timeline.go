package whatif

import (
	"fmt"
	"slices"

	"github.com/kreplay/kreplay/replay"
	"github.com/kreplay/kreplay/signatures"
)

// TimelineCheck is the prediction's check: the whole trace replayed in
// order as one CUDA graph (replay.Device.PrepareTimeline), as traced
// (plain) and with each run's launches replaced by one launch of the
// kernel (substituted), timed alternately for some rounds.
type TimelineCheck struct {
	Rounds []Round `json:"rounds"`
	// PlainNS and SubstNS are the medians over the rounds of each
	// timeline's median time per launch (CUDA events around the graph:
	// the kernels and the gaps between them); SavingNS is the median of
	// the rounds' differences.
	PlainNS  float64 `json:"plain_ns"`
	SubstNS  float64 `json:"subst_ns"`
	SavingNS float64 `json:"saving_ns"`
	// PlainMeanNS and SubstMeanNS are the means over the rounds of each
	// timeline's mean time per launch, MeanSavingNS their difference: the
	// time a sustained run takes. At the power cap the limiter cycles
	// (about a second, locked to each timing's start; the rounds' launch
	// series show it), and its slow launches, which the median leaves
	// out, are a regular part of each cycle, so the mean runs over the
	// median; energy is spent at the mean's pace.
	PlainMeanNS  float64 `json:"plain_mean_ns,omitempty"`
	SubstMeanNS  float64 `json:"subst_mean_ns,omitempty"`
	MeanSavingNS float64 `json:"mean_saving_ns,omitempty"`
	// PlainMHz and SubstMHz are the means over the rounds of NVML's mean
	// SM clock while each was timed; 0 without NVML.
	PlainMHz float64 `json:"plain_mhz,omitempty"`
	SubstMHz float64 `json:"subst_mhz,omitempty"`
	// PlainKernelNS and SubstKernelNS sum the timelines' kernel times in
	// context (CUPTI, replay.SigContext: mean x invocations), the GPU time
	// without the gaps, as the prediction counts it; KernelSavingNS their
	// difference. 0 when CUPTI could not record (ContextErr).
	PlainKernelNS  float64 `json:"plain_kernel_ns,omitempty"`
	SubstKernelNS  float64 `json:"subst_kernel_ns,omitempty"`
	KernelSavingNS float64 `json:"kernel_saving_ns,omitempty"`
	ContextErr     string  `json:"context_error,omitempty"`
	// PlainLaunches and SubstLaunches are the graphs' launches;
	// Substituted the invocations the runs replaced.
	PlainLaunches int `json:"plain_launches"`
	SubstLaunches int `json:"subst_launches"`
	Substituted   int `json:"substituted"`
	// RunsSkipped counts the runs' invocations the plain timeline could
	// not replay: the prediction counts them, the measured saving not.
	RunsSkipped int `json:"runs_skipped,omitempty"`
	// PlainJ and SubstJ are each timeline's energy per launch (the last
	// round, with Options.Measure.Energy); SavingJ their difference.
	PlainJ    float64 `json:"plain_j,omitempty"`
	SubstJ    float64 `json:"subst_j,omitempty"`
	SavingJ   float64 `json:"saving_j,omitempty"`
	EnergyErr string  `json:"energy_error,omitempty"`
	// Ratio is the predicted saving (Prediction.Saving) over the
	// measured one (SavingNS), MeanRatio over the sustained one
	// (MeanSavingNS), the one to compare at the cap,
	// KernelRatio over the one in context (KernelSavingNS), EnergyRatio
	// the energy's; 0 where either is missing.
	Ratio       float64 `json:"ratio,omitempty"`
	MeanRatio   float64 `json:"mean_ratio,omitempty"`
	KernelRatio float64 `json:"kernel_ratio,omitempty"`
	EnergyRatio float64 `json:"energy_ratio,omitempty"`
	// Plain and Subst are the last round's measurements.
	Plain *replay.TimelineResult `json:"plain"`
	Subst *replay.TimelineResult `json:"subst"`
	// The again timeline (Options.Again, a probe): the plain one with
	// each replaced run launched twice, timed in each round after the
	// other two. AgainNS and AgainMeanNS are the medians and means over
	// the rounds as for the others, AgainMHz its clock, AgainJ its
	// energy per launch; Again the last round's measurement.
	AgainNS       float64                `json:"again_ns,omitempty"`
	AgainMeanNS   float64                `json:"again_mean_ns,omitempty"`
	AgainMHz      float64                `json:"again_mhz,omitempty"`
	AgainJ        float64                `json:"again_j,omitempty"`
	AgainLaunches int                    `json:"again_launches,omitempty"`
	Again         *replay.TimelineResult `json:"again,omitempty"`
	// Removed is the removed timeline (Options.Removed): the plain one
	// with the replaced runs removed, nothing launched in their place,
	// timed in each round after the others.
	Removed *ProbeTimeline `json:"removed,omitempty"`
}

// ProbeTimeline is a timeline the check times beside the plain and the
// substituted ones, summarized as they are: the medians and means over
// the rounds of its median and mean time per launch, its clock (0 unless
// every round has one), its energy per launch in the last round, its
// launches, and the last round's measurement.
type ProbeTimeline struct {
	NS       float64                `json:"ns"`
	MeanNS   float64                `json:"mean_ns"`
	MHz      float64                `json:"mhz,omitempty"`
	J        float64                `json:"j,omitempty"`
	Launches int                    `json:"launches"`
	Last     *replay.TimelineResult `json:"last,omitempty"`
}

// Timing is one round's timing of a probe timeline: its median and mean
// time per launch, NVML's mean SM clock (0 without NVML) and its
// launches in order.
type Timing struct {
	NS     float64               `json:"ns"`
	MeanNS float64               `json:"mean_ns"`
	MHz    float64               `json:"mhz,omitempty"`
	Series []replay.LaunchSample `json:"series,omitempty"`
}

// timingOf is a probe timeline's timing in a round.
func timingOf(r *replay.TimelineResult) *Timing {
	t := &Timing{NS: r.MedianNS, MeanNS: r.MeanNS, Series: r.Launches}
	if r.GPU != nil {
		t.MHz = r.GPU.MeanSMClockMHz
	}
	return t
}

// Round is one round's medians and means, per launch of each timeline,
// and NVML's mean SM clock while each was timed (0 without NVML).
type Round struct {
	PlainNS     float64 `json:"plain_ns"`
	SubstNS     float64 `json:"subst_ns"`
	PlainMeanNS float64 `json:"plain_mean_ns,omitempty"`
	SubstMeanNS float64 `json:"subst_mean_ns,omitempty"`
	PlainMHz    float64 `json:"plain_mhz,omitempty"`
	SubstMHz    float64 `json:"subst_mhz,omitempty"`
	// The again timeline's (Options.Again), as the others'.
	AgainNS     float64 `json:"again_ns,omitempty"`
	AgainMeanNS float64 `json:"again_mean_ns,omitempty"`
	AgainMHz    float64 `json:"again_mhz,omitempty"`
	// PlainSeries, SubstSeries and AgainSeries are each timing's launches
	// in order (replay.TimelineResult.Launches): where the limiter's
	// clock settles after the switch from the previous timeline.
	PlainSeries []replay.LaunchSample `json:"plain_series,omitempty"`
	SubstSeries []replay.LaunchSample `json:"subst_series,omitempty"`
	AgainSeries []replay.LaunchSample `json:"again_series,omitempty"`
	// Removed is the removed timeline's timing (Options.Removed).
	Removed *Timing `json:"removed,omitempty"`
}

// roundOf is a round's times and clocks.
func roundOf(pr, sr *replay.TimelineResult) Round {
	r := Round{PlainNS: pr.MedianNS, SubstNS: sr.MedianNS, PlainMeanNS: pr.MeanNS, SubstMeanNS: sr.MeanNS,
		PlainSeries: pr.Launches, SubstSeries: sr.Launches}
	if pr.GPU != nil && sr.GPU != nil {
		r.PlainMHz, r.SubstMHz = pr.GPU.MeanSMClockMHz, sr.GPU.MeanSMClockMHz
	}
	return r
}

// CheckTimeline prepares set's timeline plain and with subs substituted,
// both on the device at once, and times them alternately, o.Rounds
// times, so that a drift of clocks or heat falls on both; the last round
// also takes the times in context and, with o.Measure.Energy, the
// energies.
func CheckTimeline(d *replay.Device, set *signatures.Set, subs []replay.Substitution, o Options) (*TimelineCheck, error) {
	o.defaults()
	plain, err := d.PrepareTimeline(set, replay.TimelineOptions{})
	if err != nil {
		return nil, fmt.Errorf("the plain timeline: %w", err)
	}
	defer plain.Close()
	subst, err := d.PrepareTimeline(set, replay.TimelineOptions{Substitute: subs})
	if err != nil {
		return nil, fmt.Errorf("the substituted timeline (beside the plain one): %w", err)
	}
	defer subst.Close()
	tc := &TimelineCheck{PlainLaunches: plain.Launched, SubstLaunches: subst.Launched, Substituted: subst.Substituted,
		RunsSkipped: runsSkipped(set, plain, subs)}
	fmt.Fprintf(o.Progress, "timeline: %d launches plain, %d substituted (%d invocations replaced)\n", tc.PlainLaunches, tc.SubstLaunches, tc.Substituted)
	var again *replay.Timeline
	if o.Again {
		if again, err = d.PrepareTimeline(set, replay.TimelineOptions{Again: againRuns(subs)}); err != nil {
			return nil, fmt.Errorf("the again timeline (beside the other two): %w", err)
		}
		defer again.Close()
		tc.AgainLaunches = again.Launched
		fmt.Fprintf(o.Progress, "timeline: %d launches again (the replaced runs twice)\n", tc.AgainLaunches)
	}
	var removed *replay.Timeline
	if o.Removed {
		if removed, err = d.PrepareTimeline(set, replay.TimelineOptions{Substitute: removedRuns(subs)}); err != nil {
			return nil, fmt.Errorf("the removed timeline (beside the others): %w", err)
		}
		defer removed.Close()
		tc.Removed = &ProbeTimeline{Launches: removed.Launched}
		fmt.Fprintf(o.Progress, "timeline: %d launches removed (the replaced runs, nothing in their place)\n", removed.Launched)
	}
	for i := range o.Rounds {
		last := i == o.Rounds-1
		mo := o.Timeline
		mo.NoKernelTime = !last
		mo.Energy = last && o.Measure.Energy
		mo.EnergyTicks, mo.EnergyWarmup = o.Measure.EnergyTicks, o.Measure.EnergyWarmup
		pr, err := plain.Measure(mo)
		if err != nil {
			return nil, fmt.Errorf("the plain timeline: %w", err)
		}
		sr, err := subst.Measure(mo)
		if err != nil {
			return nil, fmt.Errorf("the substituted timeline: %w", err)
		}
		round := roundOf(pr, sr)
		if again != nil {
			ar, err := again.Measure(mo)
			if err != nil {
				return nil, fmt.Errorf("the again timeline: %w", err)
			}
			at := timingOf(ar)
			round.AgainNS, round.AgainMeanNS, round.AgainMHz, round.AgainSeries = at.NS, at.MeanNS, at.MHz, at.Series
			if last {
				tc.Again = ar
			}
		}
		if removed != nil {
			dr, err := removed.Measure(mo)
			if err != nil {
				return nil, fmt.Errorf("the removed timeline: %w", err)
			}
			round.Removed = timingOf(dr)
			if last {
				tc.Removed.Last = dr
			}
		}
		tc.Rounds = append(tc.Rounds, round)
		fmt.Fprintf(o.Progress, "timeline round %d: plain %.1f µs, substituted %.1f µs, saving %.1f µs\n",
			i+1, pr.MedianNS/1e3, sr.MedianNS/1e3, (pr.MedianNS-sr.MedianNS)/1e3)
		if last {
			tc.Plain, tc.Subst = pr, sr
		}
	}
	tc.summarize()
	tc.summarizeAgain()
	tc.summarizeRemoved()
	tc.inContext()
	tc.energy()
	return tc, nil
}

// summarize takes the rounds' medians (the saving the median of their
// differences), means and clocks; the clocks only where every round has
// them.
func (tc *TimelineCheck) summarize() {
	var ps, ss, savings []float64
	var plainMean, substMean, plainMHz, substMHz float64
	clocks := true
	for _, r := range tc.Rounds {
		ps, ss, savings = append(ps, r.PlainNS), append(ss, r.SubstNS), append(savings, r.PlainNS-r.SubstNS)
		plainMean, substMean = plainMean+r.PlainMeanNS, substMean+r.SubstMeanNS
		plainMHz, substMHz = plainMHz+r.PlainMHz, substMHz+r.SubstMHz
		clocks = clocks && r.PlainMHz > 0 && r.SubstMHz > 0
	}
	tc.PlainNS, tc.SubstNS, tc.SavingNS = median(ps), median(ss), median(savings)
	tc.PlainMeanNS, tc.SubstMeanNS, tc.MeanSavingNS, tc.PlainMHz, tc.SubstMHz = 0, 0, 0, 0, 0
	n := float64(len(tc.Rounds))
	if n == 0 {
		return
	}
	tc.PlainMeanNS, tc.SubstMeanNS = plainMean/n, substMean/n
	tc.MeanSavingNS = tc.PlainMeanNS - tc.SubstMeanNS
	if clocks {
		tc.PlainMHz, tc.SubstMHz = plainMHz/n, substMHz/n
	}
}

// summarizeAgain takes the again timeline's medians, means, clock and
// energy as summarize and energy take the others'.
func (tc *TimelineCheck) summarizeAgain() {
	if tc.Again == nil {
		return
	}
	ts := make([]Timing, 0, len(tc.Rounds))
	for _, r := range tc.Rounds {
		ts = append(ts, Timing{NS: r.AgainNS, MeanNS: r.AgainMeanNS, MHz: r.AgainMHz})
	}
	t := overRounds(ts)
	tc.AgainNS, tc.AgainMeanNS, tc.AgainMHz = t.NS, t.MeanNS, t.MHz
	if tc.Again.Energy != nil {
		tc.AgainJ = tc.Again.Energy.JoulesPerOp
	}
}

// summarizeRemoved takes the removed timeline's medians, means, clock and
// energy as summarizeAgain takes the again timeline's.
func (tc *TimelineCheck) summarizeRemoved() {
	pt := tc.Removed
	if pt == nil || pt.Last == nil {
		return
	}
	ts := make([]Timing, 0, len(tc.Rounds))
	for _, r := range tc.Rounds {
		if r.Removed == nil {
			return
		}
		ts = append(ts, *r.Removed)
	}
	t := overRounds(ts)
	pt.NS, pt.MeanNS, pt.MHz = t.NS, t.MeanNS, t.MHz
	if pt.Last.Energy != nil {
		pt.J = pt.Last.Energy.JoulesPerOp
	}
}

// overRounds summarizes a probe timeline's timings as summarize does the
// others': the median of their medians, the mean of their means, and the
// mean clock only where every round has one. No rounds: zeros.
func overRounds(ts []Timing) Timing {
	if len(ts) == 0 {
		return Timing{}
	}
	var ns []float64
	var mean, mhz float64
	clocks := true
	for _, t := range ts {
		ns, mean, mhz = append(ns, t.NS), mean+t.MeanNS, mhz+t.MHz
		clocks = clocks && t.MHz > 0
	}
	n := float64(len(ts))
	out := Timing{NS: median(ns), MeanNS: mean / n}
	if clocks {
		out.MHz = mhz / n
	}
	return out
}

// removedRuns is subs with nothing in the runs' place.
func removedRuns(subs []replay.Substitution) []replay.Substitution {
	out := make([]replay.Substitution, 0, len(subs))
	for _, s := range subs {
		out = append(out, replay.Substitution{Invocations: s.Invocations})
	}
	return out
}

// runsSkipped counts the runs' invocations the plain timeline skipped.
func runsSkipped(set *signatures.Set, plain *replay.Timeline, subs []replay.Substitution) int {
	launched := map[string]bool{}
	for _, p := range plain.Prepared {
		launched[p.Sig.ID] = true
	}
	n := 0
	for _, s := range subs {
		for _, i := range s.Invocations {
			sig := set.Signatures[set.Timeline[i].Sig]
			if sig.PartOf == "" && !launched[sig.ID] {
				n++
			}
		}
	}
	return n
}

// inContext sums the last round's kernel times in context.
func (tc *TimelineCheck) inContext() {
	sum := func(r *replay.TimelineResult) float64 {
		var s float64
		for _, c := range r.Context {
			s += c.MeanNS * float64(c.Invocations)
		}
		return s
	}
	switch {
	case tc.Plain.ContextErr != "":
		tc.ContextErr = "plain: " + tc.Plain.ContextErr
	case tc.Subst.ContextErr != "":
		tc.ContextErr = "substituted: " + tc.Subst.ContextErr
	case len(tc.Plain.Context) == 0 || len(tc.Subst.Context) == 0:
		tc.ContextErr = "no times in context"
	default:
		tc.PlainKernelNS, tc.SubstKernelNS = sum(tc.Plain), sum(tc.Subst)
		tc.KernelSavingNS = tc.PlainKernelNS - tc.SubstKernelNS
	}
}

// energy takes the last round's energies.
func (tc *TimelineCheck) energy() {
	switch {
	case tc.Plain.Energy != nil && tc.Subst.Energy != nil:
		tc.PlainJ, tc.SubstJ = tc.Plain.Energy.JoulesPerOp, tc.Subst.Energy.JoulesPerOp
		tc.SavingJ = tc.PlainJ - tc.SubstJ
	case tc.Plain.EnergyErr != "":
		tc.EnergyErr = tc.Plain.EnergyErr
	case tc.Subst.EnergyErr != "":
		tc.EnergyErr = tc.Subst.EnergyErr
	}
}

// compare sets the ratios of the predicted savings to the measured ones.
func (tc *TimelineCheck) compare(p *Prediction) {
	ratio := func(pred, meas float64) float64 {
		if meas == 0 || pred == 0 {
			return 0
		}
		return pred / meas
	}
	tc.Ratio = ratio(p.Saving(), tc.SavingNS)
	tc.MeanRatio = ratio(p.Saving(), tc.MeanSavingNS)
	tc.KernelRatio = ratio(p.Saving(), tc.KernelSavingNS)
	switch {
	case p.Removed != nil:
		tc.EnergyRatio = ratio(p.Removed.SavingJ, tc.SavingJ)
	case p.Again != nil:
		tc.EnergyRatio = ratio(p.Again.SavingJ, tc.SavingJ)
	case p.Cap != nil:
		tc.EnergyRatio = ratio(p.Cap.SavingJ, tc.SavingJ)
	case p.inContextCompared() && p.InContext.Energy:
		tc.EnergyRatio = ratio(p.InContext.SavingJ, tc.SavingJ)
	case p.Energy:
		tc.EnergyRatio = ratio(p.SavingJ, tc.SavingJ)
	}
}

// median is the median of v (the mean of the middle two for even
// lengths); 0 for none.
func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(v))
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
