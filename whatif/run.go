package whatif

import (
	"fmt"
	"io"
	"time"

	"github.com/kreplay/kreplay/bench"
	"github.com/kreplay/kreplay/replay"
)

// Options tune Evaluate.
type Options struct {
	// Tolerance of the output check, relative to the chain output's
	// largest magnitude (default DefaultTolerance).
	Tolerance float64
	// Baseline gives the totals and the replaced signatures' times
	// (BaselineFromBench); nil: the replaced signatures are replayed
	// alone now, and the prediction has no totals.
	Baseline *Baseline
	// Measure tunes the replays alone: the kernel's and, without a
	// Baseline, the replaced signatures' (replay.Measure in the Auto cache
	// mode, as kreplay predict replays them; Energy adds J/op).
	Measure replay.Options
	// NoTimeline skips the timeline check.
	NoTimeline bool
	// Rounds is how many times the plain and the substituted timelines
	// are each timed, alternately (default 3).
	Rounds int
	// Timeline tunes each timing of a timeline (zero: a budget of 3 s, a
	// target of ±0.2% for the median's interval and DefaultSettle of
	// warm-up before each timing); the CUPTI pass for
	// the times in context runs in the last round only, and the energy,
	// with Measure.Energy, there too.
	Timeline replay.Options
	// Progress receives a line per step; nil: none.
	Progress io.Writer
	// Again adds the again timeline to the check (the plain timeline
	// with the replaced runs launched twice), and predicts at the cap from
	// the two timelines and the Rotating replays alone (again.go); it
	// needs Measure.Energy.
	Again bool
	// Removed adds the removed timeline to the check (the plain timeline
	// with the replaced runs removed, nothing in their place), and
	// predicts at the cap from the plain and removed timelines and the
	// Rotating replays alone (removed.go); it needs Measure.Energy.
	Removed bool
	// Modes replays the kernel and the replaced signatures alone in
	// each of these cache modes, a probe (Result.Modes).
	Modes []replay.CacheMode
	// ModelRun is the baseline model's measured run (ModelRunFromBundle),
	// which the timeline design's energy rule reads; nil: none, and
	// NoModelRun says why.
	ModelRun   *ModelRun
	NoModelRun string
}

// DefaultSettle is the timelines' warm-up before each timing: the plain,
// substituted and again timelines alternate, and at the power cap the
// limiter's clock settles after each switch. The limiter runs a cycle
// of about a second locked to each timing's start, its first cut the
// deepest right after the switch, so a warm-up shorter than a cycle
// biases the timings; one second keeps the mean near the median (see
// results/h100/roofline-whatif/README.md).
const DefaultSettle = time.Second

func (o *Options) defaults() {
	if o.Tolerance <= 0 {
		o.Tolerance = DefaultTolerance
	}
	if o.Rounds <= 0 {
		o.Rounds = 3
	}
	if o.Timeline.Budget <= 0 {
		o.Timeline.Budget = 3 * time.Second
	}
	if o.Timeline.TargetRelCI <= 0 {
		o.Timeline.TargetRelCI = 0.002
	}
	if o.Timeline.Warmup <= 0 {
		o.Timeline.Warmup = DefaultSettle
	}
	if o.Progress == nil {
		o.Progress = io.Discard
	}
}

// VariantResult is one variant's check and its kernel replayed alone.
type VariantResult struct {
	Index   int      `json:"index"`
	Runs    int      `json:"runs"`
	Recipe  string   `json:"recipe"`
	RowNorm *RowNorm `json:"binding"`
	// Sig is the kernel's signature ID for the variant.
	Sig   string `json:"sig"`
	Check *Check `json:"check,omitempty"`
	// CheckErr says why the output check could not run.
	CheckErr string         `json:"check_error,omitempty"`
	Times    Times          `json:"times"`
	Alone    *replay.Result `json:"alone"`
}

// SigResult is a replaced signature replayed alone (without a Baseline).
type SigResult struct {
	ID    string         `json:"id"`
	Label string         `json:"label"`
	Times Times          `json:"times"`
	Alone *replay.Result `json:"alone"`
}

// Result is what Evaluate found.
type Result struct {
	Workload string           `json:"workload"`
	GPU      string           `json:"gpu"`
	Kernel   *Kernel          `json:"kernel"`
	Match    *Match           `json:"match"`
	Variants []*VariantResult `json:"variants"`
	Baseline *Baseline        `json:"baseline"`
	// Replaced are the replaced signatures replayed now (without a
	// Baseline from benchmark output).
	Replaced   []SigResult    `json:"replaced,omitempty"`
	Prediction *Prediction    `json:"prediction"`
	Timeline   *TimelineCheck `json:"timeline,omitempty"`
	// TimelineErr says why there is no timeline check.
	TimelineErr string `json:"timeline_error,omitempty"`
	// Modes are the probe's replays alone in other cache modes
	// (Options.Modes).
	Modes []ModeTime `json:"modes,omitempty"`
	// Rotating are the kernel's and the replaced signatures' replays alone
	// in the Rotating cache mode, by signature ID (Prediction.InContext,
	// and the again and removed models' energies).
	Rotating map[string]Times `json:"rotating,omitempty"`
}

// OK reports whether every variant's output check passed.
func (r *Result) OK() bool {
	for _, v := range r.Variants {
		if v.Check == nil || !v.Check.OK() {
			return false
		}
	}
	return len(r.Variants) > 0
}

// timesOf is a replay's time and energy per invocation.
func timesOf(r *replay.Result) Times {
	t := Times{NS: bench.ReplayNS(r)}
	if r.Energy != nil {
		t.J = r.Energy.JoulesPerOp
	}
	if r.GPU != nil {
		t.MHz = r.GPU.MeanSMClockMHz
	}
	return t
}

// Evaluate does the what-if on the GPU: each variant's output check, its
// kernel replayed alone, the replaced signatures replayed alone (without
// a Baseline), the prediction, and the timeline check. An output check
// that failed, or could not run (VariantResult.CheckErr), is in the
// result (Result.OK), not an error; so is the timeline check's failure
// (TimelineErr).
func Evaluate(d *replay.Device, p *Plan, o Options) (*Result, error) {
	o.defaults()
	r := &Result{Workload: p.Set.Source.Workload, GPU: d.Name, Kernel: p.Kernel, Match: p.Match, Baseline: o.Baseline}
	var subs []replay.Substitution
	for _, b := range p.Variants {
		// The kernel in the Warm cache mode: checked, then substituted.
		warm, err := d.PrepareWith(b.Sig, replay.Warm, p.Kernel.Builder(b.RowNorm))
		if err != nil {
			return nil, err
		}
		defer warm.Close()
		vr := &VariantResult{Index: b.Index, Runs: b.Variant.Runs, Recipe: b.Recipe.Name, RowNorm: b.RowNorm, Sig: b.Sig.ID}
		r.Variants = append(r.Variants, vr)
		if vr.Check, err = CheckOutput(d, p.Set, b, warm, o.Tolerance); err != nil {
			vr.CheckErr = err.Error()
			fmt.Fprintf(o.Progress, "check: variant %d: not done: %v\n", b.Index, err)
		} else {
			fmt.Fprintf(o.Progress, "check: variant %d: against the chain %v; against the host reference %v\n", b.Index, vr.Check.Chain, vr.Check.Host)
		}
		if vr.Alone, err = measureWith(d, b, p.Kernel, o.Measure); err != nil {
			return nil, err
		}
		vr.Times = timesOf(vr.Alone)
		fmt.Fprintf(o.Progress, "alone: %s %s: %s\n", b.Sig.ID, b.Sig.Label, vr.Alone)
		for _, run := range p.Match.Runs {
			if run.Variant == b.Index {
				subs = append(subs, replay.Substitution{Invocations: run.Invocations, With: warm})
			}
		}
	}
	if r.Baseline == nil {
		base, err := replayReplaced(d, p, o, r)
		if err != nil {
			return nil, err
		}
		r.Baseline = base
	}
	if b := r.Baseline; b.PowerLimitW == 0 && b.TotalNS > 0 && d.Meter != nil {
		if w, err := d.Meter.PowerLimit(); err == nil {
			b.PowerLimitW, b.PowerLimitFrom = w, "the device (NVML)"
		}
	}
	fused := make([]Times, len(r.Variants))
	for i, v := range r.Variants {
		fused[i] = v.Times
	}
	var err error
	if r.Prediction, err = Predict(p.Match, r.Baseline, fused); err != nil {
		return nil, err
	}
	if len(o.Modes) > 0 {
		r.Modes = probeModes(d, p, o.Modes, o)
	}
	if r.Rotating, err = measureRotating(d, p, o); err != nil {
		return nil, err
	}
	if r.Prediction.InContext, err = predictInContext(p, r.Rotating); err != nil {
		r.Prediction.InContextErr = err.Error()
	}
	if !o.NoTimeline {
		tc, err := CheckTimeline(d, p.Set, subs, o)
		if err != nil {
			r.TimelineErr = err.Error()
		} else {
			here := ""
			if d.Meter != nil {
				here = d.Meter.UUID()
			}
			atCap(r.Prediction, r.Baseline, tc, here)
			if o.Again {
				againAtCap(r.Prediction, p, tc, r.Rotating)
			}
			if o.Removed {
				removedAtCap(r.Prediction, p, tc, r.Rotating)
			}
			tc.compare(r.Prediction)
			r.Timeline = tc
		}
	}
	r.Prediction.timelineDesign(r, o, d)
	return r, nil
}

// timelineDesign fills p.TimelineDesign (design.go), or
// p.TimelineDesignErr, from the result's timeline check, o's measured run
// and the power limit: the baseline's (kreplay predict's power-limit
// line, or NVML's where Evaluate took it for the totals), else NVML's.
func (p *Prediction) timelineDesign(r *Result, o Options, d *replay.Device) {
	in := DesignInput{Check: r.Timeline, NoCheck: r.TimelineErr, Run: o.ModelRun, NoRun: o.NoModelRun,
		PowerLimitW: r.Baseline.PowerLimitW, PowerLimitFrom: r.Baseline.PowerLimitFrom}
	if o.NoTimeline {
		in.NoCheck = "skipped (-no-timeline)"
	}
	if in.PowerLimitW <= 0 && d.Meter != nil {
		if w, err := d.Meter.PowerLimit(); err == nil {
			in.PowerLimitW, in.PowerLimitFrom = w, "the device (NVML)"
		}
	}
	td, err := PredictTimelineDesign(in)
	if err != nil {
		p.TimelineDesignErr = err.Error()
		return
	}
	p.TimelineDesign = td
}

// measureWith replays a variant's kernel alone as kreplay replays a
// tier-3 signature (the Auto cache mode: primed).
func measureWith(d *replay.Device, b *Bound, k *Kernel, o replay.Options) (*replay.Result, error) {
	p, err := d.PrepareWith(b.Sig, replay.Auto, k.Builder(b.RowNorm))
	if err != nil {
		return nil, err
	}
	defer p.Close()
	return d.Measure(p, o)
}

// replayReplaced replays each replaced signature alone (parts aside) and
// returns the baseline of their times, without totals.
func replayReplaced(d *replay.Device, p *Plan, o Options, r *Result) (*Baseline, error) {
	base := &Baseline{From: "the replaced signatures replayed alone now", Sigs: map[string]Times{}}
	for _, sig := range p.replaced() {
		prep, err := d.PrepareFor(sig, replay.Auto)
		if err != nil {
			return nil, err
		}
		res, err := d.Measure(prep, o.Measure)
		prep.Close()
		if err != nil {
			return nil, err
		}
		t := timesOf(res)
		base.Sigs[sig.ID] = t
		r.Replaced = append(r.Replaced, SigResult{ID: sig.ID, Label: sig.Label, Times: t, Alone: res})
		fmt.Fprintf(o.Progress, "alone: %s %s: %s\n", sig.ID, sig.Label, res)
	}
	return base, nil
}

// atCap fills p.Cap, calibrated on the plain timeline of the check (the
// baseline run whole at the cap), when the baseline's replays draw more
// than the power limit: its sustained time per launch (the rounds'
// means), its clock (NVML's, the rounds' mean) and its energy at the
// power its energy window drew. The substituted timeline is not used.
// gpu is this GPU's UUID ("" when unknown), held against the baseline's.
func atCap(p *Prediction, b *Baseline, tc *TimelineCheck, gpu string) {
	if !p.AtLimit {
		return
	}
	run := CapRun{NS: tc.PlainMeanNS, MHz: tc.PlainMHz, From: "the plain timeline timed here"}
	if tc.Plain != nil && tc.Plain.Energy != nil {
		run.J = tc.Plain.Energy.Watts * tc.PlainMeanNS / 1e9
	}
	cp, err := PredictAtCap(p, b.ReplayMHz, run)
	if err != nil {
		p.CapErr = err.Error()
		return
	}
	cp.Warning = gpuWarning(b.GPUUUID, gpu)
	p.Cap = cp
}

// kernelsOf counts the kernel's runs by its signature for each variant.
func kernelsOf(p *Plan) map[string]int {
	kernels := map[string]int{}
	for _, b := range p.Variants {
		kernels[b.Sig.ID] += b.Variant.Runs
	}
	return kernels
}

// removedAtCap fills p.Removed from the plain and removed timelines
// (removed.go), or p.RemovedErr.
func removedAtCap(pr *Prediction, p *Plan, tc *TimelineCheck, rot map[string]Times) {
	in, err := removedInput(tc, replacedIDs(p.Match), kernelsOf(p), rot)
	if err == nil {
		pr.Removed, err = PredictRemoved(in)
	}
	if err != nil {
		pr.RemovedErr = err.Error()
	}
}

// againAtCap fills p.Again from the plain and again timelines (again.go),
// or p.AgainErr.
func againAtCap(pr *Prediction, p *Plan, tc *TimelineCheck, rot map[string]Times) {
	in, err := againInput(tc, replacedIDs(p.Match), kernelsOf(p), rot)
	if err == nil {
		pr.Again, err = PredictAgain(in)
	}
	if err != nil {
		pr.AgainErr = err.Error()
	}
}
