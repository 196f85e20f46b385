package predict

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"

	"golang.org/x/perf/benchmath"

	"github.com/kreplay/kreplay/bench"
	"github.com/kreplay/kreplay/replay"
	"github.com/kreplay/kreplay/roofline"
	"github.com/kreplay/kreplay/signatures"
)

// Interval is a central value with the bounds around it.
type Interval struct {
	Center float64 `json:"center"`
	Lo     float64 `json:"lo"`
	Hi     float64 `json:"hi"`
}

func (iv Interval) scale(k float64) Interval {
	return Interval{iv.Center * k, iv.Lo * k, iv.Hi * k}
}

func (iv *Interval) add(o Interval) {
	iv.Center += o.Center
	iv.Lo += o.Lo
	iv.Hi += o.Hi
}

// Summary is benchmath's summary of one benchmark's values over its
// runs: AssumeNothing, the median with a distribution-free confidence
// interval, as benchstat computes it.
type Summary struct {
	Interval
	Runs int `json:"runs"`
	// Range is true when there were too few runs for the confidence
	// interval (benchmath needs 6 at 95%): Lo and Hi are then the
	// smallest and largest value, not a confidence interval.
	Range bool `json:"range,omitempty"`
}

// Summarize summarises values with benchmath.AssumeNothing at the given
// confidence; see Summary.
func Summarize(values []float64, confidence float64) Summary {
	if len(values) == 0 {
		return Summary{}
	}
	v := slices.Clone(values)
	s := benchmath.AssumeNothing.Summary(benchmath.NewSample(v, &benchmath.DefaultThresholds), confidence)
	out := Summary{Interval: Interval{s.Center, s.Lo, s.Hi}, Runs: len(values)}
	if math.IsInf(s.Lo, 0) || math.IsInf(s.Hi, 0) || math.IsNaN(s.Lo) || math.IsNaN(s.Hi) {
		out.Lo, out.Hi, out.Range = slices.Min(values), slices.Max(values), true
	}
	return out
}

// ReportOptions tune Report.
type ReportOptions struct {
	// Top is how many signatures the top list holds (default 15;
	// negative: none).
	Top int
	// Confidence of the per-signature intervals (default 0.95).
	Confidence float64
	// NoMemsetArrival leaves out the memsets' arrival term (arrival.go).
	NoMemsetArrival bool
}

func (o *ReportOptions) defaults() {
	if o.Top == 0 {
		o.Top = 15
	}
	if o.Top < 0 {
		o.Top = 0
	}
	if o.Confidence <= 0 || o.Confidence >= 1 {
		o.Confidence = 0.95
	}
}

// Prediction is what Report computes: per workload, the predicted GPU time
// and energy against the trace and the model.
type Prediction struct {
	Confidence float64               `json:"confidence"`
	Workloads  []*WorkloadPrediction `json:"workloads"`
	// NoSet lists workloads in the benchmark output with no signature
	// set; NoResults workloads with a set but no results.
	NoSet     []string `json:"no_set,omitempty"`
	NoResults []string `json:"no_results,omitempty"`
	Warnings  []string `json:"warnings,omitempty"`
}

// WorkloadPrediction is one workload's prediction. Times are in
// nanoseconds per inference (one run of the traced workload), energies
// in joules.
//
// The predicted GPU time is the sum over the measured signatures of
// t_i x n_i: t_i the center of benchmath's summary of the signature's
// ns/op values over the runs, n_i its invocations in the trace. Its bounds
// are the sums of the signatures' bounds, Lo = sum(lo_i x n_i) and Hi =
// sum(hi_i x n_i): a conservative interval, as wide as if the signatures'
// errors were perfectly correlated (independent errors would add in
// quadrature and give a narrower one); it holds the true total with at
// least the per-signature confidence when every signature's interval
// holds its value. Signatures that are part of another (PartOf: a split-K
// reduce, a memset inside a GEMM call) are not counted: their time is
// inside their parent's replay, and their traced time is added to the
// parent's for the comparisons.
type WorkloadPrediction struct {
	Workload string `json:"workload"`
	File     string `json:"file"`
	// GPU is the GPU the replays ran on, from the results' "gpu"
	// configuration line ("" in outputs that do not say); TraceGPU the
	// GPU the trace came from, from their "trace-gpu" line or else the
	// set. Projected is true when both are known and differ: the replay
	// projects the trace onto another GPU, where a vendor library's
	// choice of another kernel than the traced one is right, not a loss
	// of fidelity (see FidelityTarget).
	GPU       string `json:"gpu,omitempty"`
	TraceGPU  string `json:"trace_gpu,omitempty"`
	Projected bool   `json:"projected,omitempty"`
	// Runs is the most runs any signature has.
	Runs int `json:"runs"`
	// Signatures counts the set's signatures: Parts of them are part of
	// another, Measured have results, Missing (the rest) have none.
	Signatures int `json:"signatures"`
	Parts      int `json:"parts"`
	Measured   int `json:"measured"`
	Missing    int `json:"missing"`
	// RangeOnly counts measured signatures whose bounds are the range of
	// too few runs (see Summary.Range).
	RangeOnly int `json:"range_only,omitempty"`

	// PredictedNS is sum(t_i x n_i) with its bounds, plus ArrivalNS.
	PredictedNS Interval `json:"predicted_ns"`
	// Arrivals and ArrivalNS sum the signatures' memset arrival terms
	// (arrival.go): included in PredictedNS, an estimate.
	Arrivals  int     `json:"arrivals,omitempty"`
	ArrivalNS float64 `json:"arrival_ns,omitempty"`
	// ArrivalOff says why the arrival term was not applied, where the
	// output ran outside its fit (arrivalScope).
	ArrivalOff string `json:"arrival_off,omitempty"`
	// ByFidelity splits the predicted time by how close each signature's
	// replay is to the trace (bench.FidelityLine; "unknown" for outputs
	// without those lines; under a projection, another kernel counts as
	// FidelityTarget), most exact first; Throttled and Unconverged count
	// the signatures whose line flags them. Of the throttled ones,
	// ThrottledDiscarded counts those whose timed samples that NVML saw
	// throttled were left out of their time, and ThrottledKept those that
	// kept them for want of enough others (bench.Fidelity).
	ByFidelity         []FidelityShare `json:"by_fidelity,omitempty"`
	Throttled          int             `json:"throttled,omitempty"`
	ThrottledDiscarded int             `json:"throttled_discarded,omitempty"`
	ThrottledKept      int             `json:"throttled_kept,omitempty"`
	Unconverged        int             `json:"unconverged,omitempty"`
	// Interpolated counts the signatures whose results were interpolated
	// between measured members of their families, not measured
	// (bench.Fidelity); InterpolatedNS is their traced time and
	// InterpolatedShare its share of TracedNS.
	Interpolated      int     `json:"interpolated,omitempty"`
	InterpolatedNS    int64   `json:"interpolated_ns,omitempty"`
	InterpolatedShare float64 `json:"interpolated_share,omitempty"`
	// TracedNS is the traced time of all signatures (the sum of their
	// durations); CoveredNS that of the measured ones (with their parts),
	// and Coverage CoveredNS / TracedNS.
	TracedNS  int64   `json:"traced_ns"`
	CoveredNS int64   `json:"covered_ns"`
	Coverage  float64 `json:"coverage"`
	// BusyNS is the trace's GPU-busy time (the union of activity
	// intervals, signatures.Set.Summary); TraceWallNS its wall span.
	BusyNS      int64 `json:"busy_ns"`
	TraceWallNS int64 `json:"trace_wall_ns"`
	// Relative errors of the prediction, predicted / reference - 1:
	// against the busy time, against the traced time of the measured
	// signatures (the replay's error, without the coverage's), and
	// against the model's wall time. Nil where the reference is missing.
	ErrBusy    *float64 `json:"err_busy,omitempty"`
	ErrCovered *float64 `json:"err_covered,omitempty"`
	ErrModel   *float64 `json:"err_model,omitempty"`

	// PredictedJ is sum(e_i x n_i) over the signatures with J/op, with
	// bounds summed likewise; EnergySignatures counts them and
	// EnergyCoverage is their share of the traced time. Nil without J/op.
	PredictedJ       *Interval `json:"predicted_j,omitempty"`
	EnergySignatures int       `json:"energy_signatures,omitempty"`
	EnergyCoverage   float64   `json:"energy_coverage,omitempty"`
	// EnergyThrottled counts the signatures whose energy window ran
	// throttled (bench.Fidelity), and ThrottledJ is their share of
	// PredictedJ's center: energy per launch at a capped clock, which
	// underestimates a real run that keeps its clocks (see
	// results/h100/capture/README.md).
	EnergyThrottled int     `json:"energy_throttled,omitempty"`
	ThrottledJ      float64 `json:"throttled_j,omitempty"`
	// EnergyDuty counts the signatures whose energy was measured again
	// duty-cycled, under the power cap, and DutyJ is their share of
	// PredictedJ's center; EnergyEstimated and EstimatedJ likewise those
	// whose energy was estimated from their class's power, not measured.
	EnergyDuty      int     `json:"energy_duty,omitempty"`
	DutyJ           float64 `json:"duty_j,omitempty"`
	EnergyEstimated int     `json:"energy_estimated,omitempty"`
	EstimatedJ      float64 `json:"estimated_j,omitempty"`
	// IdleJ is the energy of the GPU's idle gaps, idle power x (model
	// wall time - trace busy time), when the model benchmark reports
	// idle-W; TotalJ = PredictedJ + IdleJ; ErrEnergy = TotalJ / model
	// J/op - 1 (PredictedJ alone when there is no idle term).
	IdleJ *float64 `json:"idle_j,omitempty"`
	// TraceIdleJ is the idle term from the trace alone: the same idle
	// power over the traced inference's gaps (trace wall - busy), an
	// estimate for a workload without a measured wall time (the profiled
	// run's gaps are longer than the unprofiled run's).
	TraceIdleJ *float64  `json:"trace_idle_j,omitempty"`
	TotalJ     *Interval `json:"total_j,omitempty"`
	// CapJ is set when the sum came out above what the GPU's power limit
	// allows over the model's wall time (limit x wall): the GPU's power
	// limiter holds the average power under it (a capped run draws just
	// under the limit), so TotalJ is bounded by it.
	CapJ *float64 `json:"cap_j,omitempty"`
	// PowerLimitW is the GPU's power limit the results name (0: none).
	PowerLimitW float64  `json:"power_limit_w,omitempty"`
	ErrEnergy   *float64 `json:"err_energy,omitempty"`

	// Model is the whole-model benchmark, when the output has one;
	// NoModel says why it did not run, when the output says.
	Model   *ModelResult `json:"model,omitempty"`
	NoModel string       `json:"no_model,omitempty"`
	// Timeline is the timeline benchmark (the whole trace replayed in
	// order), when the output has one.
	Timeline *TimelineResult `json:"timeline,omitempty"`
	// Inference is the predicted whole inference (the inference
	// benchmark) against the model run, when the output has one.
	Inference *InferenceReport `json:"inference,omitempty"`

	// Peaks are the GPU's peaks from the output's configuration lines
	// (roofline.FromConfig); nil when it has none, and then no signature
	// is placed on the roofline. ByBound splits the predicted time by what
	// bounds each signature (roofline.Classify; "not placed" for those
	// without a point).
	Peaks   *roofline.Peaks `json:"peaks,omitempty"`
	ByBound []BoundShare    `json:"by_bound,omitempty"`

	Tiers   []GroupPrediction `json:"tiers"`
	Classes []GroupPrediction `json:"classes"`
	// Top are the signatures with the largest predicted time.
	Top []*SigPrediction `json:"top"`
	// Sigs are all measured signatures, in the set's order.
	Sigs []*SigPrediction `json:"measured_signatures"`
	// MissingSigs are the signatures without results (parts excluded),
	// by traced time.
	MissingSigs []MissingSig `json:"missing_signatures,omitempty"`
}

// ModelResult summarises the whole-model benchmark.
type ModelResult struct {
	// WallNS summarises ns/op: the median inference's span where the run
	// measured its spread, the mean wall time otherwise
	// (bench.ModelMetrics). MeanWallNS summarises the mean wall time
	// (mean-ns) where ns/op is the median; the idle gaps' energy and the
	// power limit's bound take it (ModelResult.EnergyWallNS).
	WallNS     Summary  `json:"wall_ns"`
	MeanWallNS *Summary `json:"mean_wall_ns,omitempty"`
	J          *Summary `json:"j,omitempty"`
	IdleW      *Summary `json:"idle_w,omitempty"`
}

// EnergyWallNS is the wall time per inference the energy per inference
// belongs to: the mean where the run reported it, ns/op otherwise.
func (m *ModelResult) EnergyWallNS() float64 {
	if m.MeanWallNS != nil {
		return m.MeanWallNS.Center
	}
	return m.WallNS.Center
}

// TimelineResult summarises the timeline benchmark: the replay of the
// whole traced timeline in order, one CUDA graph per timeline.
type TimelineResult struct {
	// NS summarises ns/op, the replay's time per timeline.
	NS Summary `json:"ns"`
	// SkippedNS is the median traced time the replay skipped (skipped-ns);
	// zero when not reported.
	SkippedNS float64 `json:"skipped_ns"`
	// GapNS is the idle gap after each launch (gap-ns; 0: back to back).
	GapNS float64 `json:"gap_ns,omitempty"`
	// J summarises the energy of a launch and its gap (J/op), when
	// measured: the inference's energy with its kernels in order under
	// the power limiter; ErrEnergy is J.Center / the model's J/op - 1.
	J         *Summary `json:"j,omitempty"`
	ErrEnergy *float64 `json:"err_energy,omitempty"`
	// Relative errors of the timeline's time, NS.Center / reference - 1,
	// against the predicted sum and the trace's busy time; nil where the
	// reference is missing.
	ErrPredicted *float64 `json:"err_predicted,omitempty"`
	ErrBusy      *float64 `json:"err_busy,omitempty"`
	// Graph is where a launch's time went, as CUPTI recorded the graph's
	// activities (graph-busy-ns and the rest), when reported.
	Graph *GraphTime `json:"graph,omitempty"`
}

// GraphTime splits a timeline launch's time, as CUPTI recorded the
// graph's activities (replay.TimelineGaps, medians over the runs): the
// time some activity ran, against the trace's busy time (ErrBusy), and
// the idle gaps the graph left between its activities, which the trace's
// busy time does not count: how long in all, how many, the median one.
type GraphTime struct {
	BusyNS      float64  `json:"busy_ns"`
	ErrBusy     *float64 `json:"err_busy,omitempty"`
	GapNS       float64  `json:"gap_ns"`
	Gaps        float64  `json:"gaps"`
	MedianGapNS float64  `json:"median_gap_ns"`
}

// graphTime summarises the graph-* metrics of the timeline's runs
// against the trace's busy time; nil where none was reported.
func graphTime(tl *Samples, busyNS int64, confidence float64) *GraphTime {
	busy := tl.Of(bench.UnitGraphBusyNS)
	if len(busy) == 0 {
		return nil
	}
	center := func(unit string) float64 {
		if v := tl.Of(unit); len(v) > 0 {
			return Summarize(v, confidence).Center
		}
		return 0
	}
	g := &GraphTime{BusyNS: Summarize(busy, confidence).Center, GapNS: center(bench.UnitGraphGapNS),
		Gaps: center(bench.UnitGraphGaps), MedianGapNS: center(bench.UnitGraphGapMedianNS)}
	g.ErrBusy = relErr(g.BusyNS, float64(busyNS))
	return g
}

// GroupPrediction compares a tier's or class's prediction with its traced
// time.
type GroupPrediction struct {
	Tier       signatures.Tier  `json:"tier"`
	Class      signatures.Class `json:"class,omitempty"`
	Signatures int              `json:"signatures"`
	Measured   int              `json:"measured"`
	TracedNS   int64            `json:"traced_ns"`
	CoveredNS  int64            `json:"covered_ns"`
	// PredictedNS is the sum over the measured signatures; Ratio is
	// PredictedNS.Center / CoveredNS (0 when none is measured).
	PredictedNS Interval `json:"predicted_ns"`
	Ratio       float64  `json:"ratio"`
}

// SigPrediction is one measured signature.
type SigPrediction struct {
	ID    string           `json:"id"`
	Label string           `json:"label"`
	Tier  signatures.Tier  `json:"tier"`
	Class signatures.Class `json:"class"`
	Count int              `json:"count"`
	// Fidelity is how close the replay is to the trace ("unknown" when
	// the output does not say; FidelityTarget for another kernel under a
	// projection).
	Fidelity string `json:"fidelity"`
	// Interpolated is set when its result was interpolated between
	// measured members of its family, not measured (bench.Fidelity).
	Interpolated bool `json:"interpolated,omitempty"`
	// TracedNS is the signature's traced total with its parts';
	// TracedPerCallNS that per invocation (its median plus its parts'
	// medians per call, as replay.Entry counts it).
	TracedNS        int64   `json:"traced_ns"`
	TracedPerCallNS float64 `json:"traced_per_call_ns"`
	// ReplayNS summarises ns/op over the runs; PredictedNS is it times
	// Count, plus ArrivalNS; Ratio is ReplayNS.Center / TracedPerCallNS.
	ReplayNS    Summary  `json:"replay_ns"`
	PredictedNS Interval `json:"predicted_ns"`
	Ratio       float64  `json:"ratio"`
	// Arrivals counts a memset's invocations that arrived 1.2-2.0 µs
	// after the GPU went idle, and ArrivalNS is their arrival term
	// (arrival.go).
	Arrivals  int     `json:"arrivals,omitempty"`
	ArrivalNS float64 `json:"arrival_ns,omitempty"`
	// J summarises J/op when reported; PredictedJ is it times Count.
	J          *Summary  `json:"j,omitempty"`
	PredictedJ *Interval `json:"predicted_j,omitempty"`
	// Roofline places it on the roofline of the output's peaks: its bytes
	// and FLOPs per invocation (from GB/s and TFLOP/s) over ReplayNS's
	// center. Nil without peaks, or when it is not placed; NotPlaced then
	// says why.
	Roofline  *roofline.Point `json:"roofline,omitempty"`
	NotPlaced string          `json:"not_placed,omitempty"`
}

// MissingSig is a signature with no results.
type MissingSig struct {
	ID    string           `json:"id"`
	Label string           `json:"label"`
	Tier  signatures.Tier  `json:"tier"`
	Class signatures.Class `json:"class"`
	Count int              `json:"count"`
	// TracedNS with its parts'; Share of the workload's traced time.
	TracedNS int64   `json:"traced_ns"`
	Share    float64 `json:"share"`
	// Reason is go test's skip or failure message when the output has
	// it (go test -v), else why kreplay knows it cannot replay.
	Reason string `json:"reason,omitempty"`
}

// Report reads `go test -bench` outputs of generated benchmark packages
// and predicts each workload's GPU time and energy with its signature set
// (matched by Workload). See WorkloadPrediction for the method.
func Report(inputs []Input, sets []*signatures.Set, opt ReportOptions) (*Prediction, error) {
	rs, err := ReadResults(inputs)
	if err != nil {
		return nil, err
	}
	return Predict(rs, sets, opt)
}

// Predict computes the prediction from results already read.
func Predict(rs *Results, sets []*signatures.Set, opt ReportOptions) (*Prediction, error) {
	opt.defaults()
	bySet, err := setsByWorkload(sets)
	if err != nil {
		return nil, err
	}
	p := &Prediction{Confidence: opt.Confidence, Warnings: slices.Clone(rs.Warnings)}
	for _, w := range rs.Workloads {
		set := bySet[w.Name]
		if set == nil {
			p.NoSet = append(p.NoSet, w.Name)
			continue
		}
		wp, warn := predictWorkload(w, set, opt)
		p.Workloads = append(p.Workloads, wp)
		p.Warnings = append(p.Warnings, warn...)
	}
	for _, name := range slices.Sorted(maps.Keys(bySet)) {
		if rs.Workload(name) == nil {
			p.NoResults = append(p.NoResults, name)
		}
	}
	return p, nil
}

func setsByWorkload(sets []*signatures.Set) (map[string]*signatures.Set, error) {
	m := map[string]*signatures.Set{}
	for _, s := range sets {
		w := bench.Workload(s.Source)
		if o := m[w]; o != nil && o != s {
			return nil, fmt.Errorf("bench: two signature sets for workload %s (%s and %s)", w, o.Source.File, s.Source.File)
		}
		m[w] = s
	}
	return m, nil
}

// tracedWithParts returns each signature's traced total and per-call
// median with the signatures that are part of it, and which signatures
// are parts of another in the set.
func tracedWithParts(set *signatures.Set) (total map[string]int64, perCall map[string]float64, isPart map[string]bool) {
	total, perCall, isPart = map[string]int64{}, map[string]float64{}, map[string]bool{}
	for _, s := range set.Signatures {
		total[s.ID] += s.TracedNS.Total
		perCall[s.ID] += float64(s.TracedNS.Median)
	}
	for _, s := range set.Signatures {
		parent := set.ByID(s.PartOf)
		if s.PartOf == "" || parent == nil || parent == s {
			continue
		}
		isPart[s.ID] = true
		total[parent.ID] += s.TracedNS.Total
		// Parts run once per call of the signature they belong to.
		perCall[parent.ID] += float64(s.TracedNS.Median) * float64(s.Count) / float64(max(parent.Count, 1))
	}
	return total, perCall, isPart
}

// model compares the prediction with the whole-model benchmark, when the
// output has one, or says why there is none.
func (wp *WorkloadPrediction) model(w *WorkloadResults, opt ReportOptions) {
	m := w.Model
	if m.Runs() == 0 {
		wp.NoModel = w.NoModel
		return
	}
	wp.Model = &ModelResult{WallNS: Summarize(m.NS, opt.Confidence)}
	if len(m.MeanNS) > 0 {
		s := Summarize(m.MeanNS, opt.Confidence)
		wp.Model.MeanWallNS = &s
	}
	if len(m.Joules) > 0 {
		s := Summarize(m.Joules, opt.Confidence)
		wp.Model.J = &s
	}
	if len(m.IdleW) > 0 {
		s := Summarize(m.IdleW, opt.Confidence)
		wp.Model.IdleW = &s
	}
	if wp.Measured > 0 {
		wp.ErrModel = relErr(wp.PredictedNS.Center, wp.Model.WallNS.Center)
	}
	if wp.PredictedJ == nil {
		return
	}
	tot := *wp.PredictedJ
	if iw := wp.Model.IdleW; iw != nil {
		// The GPU idles between kernels for the wall time not covered by
		// the trace's busy time.
		gapS := max(0, wp.Model.EnergyWallNS()-float64(wp.BusyNS)) / 1e9
		idle := iw.Center * gapS
		wp.IdleJ = &idle
		traceIdle := iw.Center * float64(max(0, wp.TraceWallNS-wp.BusyNS)) / 1e9
		wp.TraceIdleJ = &traceIdle
		tot.add(Interval{idle, iw.Lo * gapS, iw.Hi * gapS})
	}
	wp.PowerLimitW = w.PowerLimitW
	if lim := w.PowerLimitW; lim > 0 && wp.Model.EnergyWallNS() > 0 {
		// The power limiter holds the average power at or under the
		// limit: an inference cannot spend more than limit x wall time.
		capJ := lim * wp.Model.EnergyWallNS() / 1e9
		if tot.Center > capJ {
			wp.CapJ = &capJ
			tot = Interval{capJ, min(tot.Lo, capJ), min(tot.Hi, capJ)}
		}
	}
	wp.TotalJ = &tot
	if wp.Model.J != nil {
		wp.ErrEnergy = relErr(tot.Center, wp.Model.J.Center)
	}
}

// timeline summarises the timeline benchmark's results, when there are
// any, against the prediction, the busy time and the model's energy.
func (wp *WorkloadPrediction) timeline(tl *Samples, opt ReportOptions) {
	if tl.Runs() == 0 {
		return
	}
	wp.Timeline = &TimelineResult{NS: Summarize(tl.NS, opt.Confidence)}
	if len(tl.SkippedNS) > 0 {
		wp.Timeline.SkippedNS = Summarize(tl.SkippedNS, opt.Confidence).Center
	}
	if wp.Measured > 0 {
		wp.Timeline.ErrPredicted = relErr(wp.Timeline.NS.Center, wp.PredictedNS.Center)
	}
	wp.Timeline.ErrBusy = relErr(wp.Timeline.NS.Center, float64(wp.BusyNS))
	wp.Timeline.Graph = graphTime(tl, wp.BusyNS, opt.Confidence)
	if len(tl.GapNS) > 0 {
		wp.Timeline.GapNS = Summarize(tl.GapNS, opt.Confidence).Center
	}
	if len(tl.Joules) > 0 {
		j := Summarize(tl.Joules, opt.Confidence)
		wp.Timeline.J = &j
		if m := wp.Model; m != nil && m.J != nil {
			wp.Timeline.ErrEnergy = relErr(j.Center, m.J.Center)
		}
	}
}

func predictWorkload(w *WorkloadResults, set *signatures.Set, opt ReportOptions) (*WorkloadPrediction, []string) {
	var warn []string
	wp := &WorkloadPrediction{Workload: w.Name, File: set.Source.File, Signatures: len(set.Signatures)}
	wp.GPU, wp.TraceGPU, wp.Projected = projection(w, set)
	for _, d := range set.Summary {
		wp.BusyNS += d.BusyNS
		wp.TraceWallNS += d.WallNS
	}
	total, perCall, isPart := tracedWithParts(set)
	type groupKey struct {
		tier  signatures.Tier
		class signatures.Class
	}
	groups := map[groupKey]*GroupPrediction{}
	group := func(k groupKey) *GroupPrediction {
		g := groups[k]
		if g == nil {
			g = &GroupPrediction{Tier: k.tier, Class: k.class}
			groups[k] = g
		}
		return g
	}
	var energyCovered int64
	byFid := map[string]float64{}
	var arrivals []signatures.Arrivals
	if !opt.NoMemsetArrival {
		if wp.ArrivalOff = arrivalScope(w); wp.ArrivalOff == "" {
			arrivals = set.WindowArrivals()
		}
	}
	for i, s := range set.Signatures {
		wp.TracedNS += s.TracedNS.Total
		smp := w.Sigs[s.ID]
		if isPart[s.ID] {
			wp.Parts++
			if smp.Runs() > 0 {
				warn = append(warn, fmt.Sprintf("%s: signature %s is part of %s but has results: not counted, its time is inside its parent's replay", w.Name, s.ID, s.PartOf))
			}
			continue
		}
		gs := []*GroupPrediction{group(groupKey{s.Tier, ""}), group(groupKey{s.Tier, s.Class})}
		for _, g := range gs {
			g.Signatures++
			g.TracedNS += total[s.ID]
		}
		if smp.Runs() == 0 {
			reason := w.Skipped[s.ID]
			if reason == "" {
				reason = s.Unreplayable
			}
			wp.MissingSigs = append(wp.MissingSigs, MissingSig{ID: s.ID, Label: s.Label, Tier: s.Tier, Class: s.Class,
				Count: s.Count, TracedNS: total[s.ID], Reason: reason})
			continue
		}
		sp := &SigPrediction{ID: s.ID, Label: s.Label, Tier: s.Tier, Class: s.Class, Count: s.Count,
			TracedNS: total[s.ID], TracedPerCallNS: perCall[s.ID], ReplayNS: Summarize(smp.NS, opt.Confidence)}
		n := float64(s.Count)
		sp.PredictedNS = sp.ReplayNS.Interval.scale(n)
		if arrivals != nil {
			wp.addArrivals(sp, arrivals[i])
		}
		if sp.TracedPerCallNS > 0 {
			sp.Ratio = sp.ReplayNS.Center / sp.TracedPerCallNS
		}
		if len(smp.Joules) > 0 {
			j := Summarize(smp.Joules, opt.Confidence)
			pj := j.Interval.scale(n)
			sp.J, sp.PredictedJ = &j, &pj
			if wp.PredictedJ == nil {
				wp.PredictedJ = &Interval{}
			}
			wp.PredictedJ.add(pj)
			wp.EnergySignatures++
			energyCovered += total[s.ID]
		}
		if sp.ReplayNS.Range {
			wp.RangeOnly++
		}
		wp.Runs = max(wp.Runs, sp.ReplayNS.Runs)
		wp.Measured++
		wp.CoveredNS += total[s.ID]
		wp.PredictedNS.add(sp.PredictedNS)
		for _, g := range gs {
			g.Measured++
			g.CoveredNS += total[s.ID]
			g.PredictedNS.add(sp.PredictedNS)
		}
		wp.Sigs = append(wp.Sigs, sp)
		f, ok := w.Fidelity[s.ID]
		wp.countFidelity(sp, f, ok, byFid)
	}
	wp.ByFidelity = fidelityShares(byFid, wp.PredictedNS.Center)
	for id := range w.Sigs {
		if set.ByID(id) == nil {
			warn = append(warn, fmt.Sprintf("%s: signature %s has results but is not in the set %s: ignored", w.Name, id, set.Source.File))
		}
	}
	slices.Sort(warn)
	wp.Missing = len(wp.MissingSigs)
	if wp.TracedNS > 0 {
		wp.Coverage = float64(wp.CoveredNS) / float64(wp.TracedNS)
		wp.InterpolatedShare = float64(wp.InterpolatedNS) / float64(wp.TracedNS)
		wp.EnergyCoverage = float64(energyCovered) / float64(wp.TracedNS)
		for i := range wp.MissingSigs {
			wp.MissingSigs[i].Share = float64(wp.MissingSigs[i].TracedNS) / float64(wp.TracedNS)
		}
	}
	slices.SortStableFunc(wp.MissingSigs, func(a, b MissingSig) int { return cmp.Compare(b.TracedNS, a.TracedNS) })
	if wp.Measured > 0 {
		wp.ErrBusy = relErr(wp.PredictedNS.Center, float64(wp.BusyNS))
		wp.ErrCovered = relErr(wp.PredictedNS.Center, float64(wp.CoveredNS))
	}

	wp.place(w, set)
	wp.model(w, opt)
	wp.inference(w, opt)

	wp.timeline(w.Timeline, opt)

	for k, g := range groups {
		if g.CoveredNS > 0 {
			g.Ratio = g.PredictedNS.Center / float64(g.CoveredNS)
		}
		if k.class == "" {
			wp.Tiers = append(wp.Tiers, *g)
		} else {
			wp.Classes = append(wp.Classes, *g)
		}
	}
	slices.SortFunc(wp.Tiers, func(a, b GroupPrediction) int { return cmp.Compare(a.Tier, b.Tier) })
	slices.SortFunc(wp.Classes, func(a, b GroupPrediction) int {
		return cmp.Or(cmp.Compare(b.TracedNS, a.TracedNS), cmp.Compare(a.Tier, b.Tier), cmp.Compare(a.Class, b.Class))
	})
	wp.Top = slices.Clone(wp.Sigs)
	slices.SortStableFunc(wp.Top, func(a, b *SigPrediction) int { return cmp.Compare(b.PredictedNS.Center, a.PredictedNS.Center) })
	wp.Top = wp.Top[:min(opt.Top, len(wp.Top))]
	return wp, warn
}

// FidelityTarget is the fidelity a report gives, under a projection, a
// signature whose vendor library ran another kernel than the traced one
// (replay.FidelityOther): on another GPU the library's choice for that GPU
// is what a real run there would run, so it is counted apart from the
// other kernels of a replay on the traced GPU, which are a fidelity loss.
const FidelityTarget = "library's choice on the target"

// fidelityOrder lists the fidelities from the most to the least exact:
// replay.Fidelities, with FidelityTarget before another kernel.
var fidelityOrder = func() []string {
	var out []string
	for _, k := range replay.Fidelities {
		if k == replay.FidelityOther {
			out = append(out, FidelityTarget)
		}
		out = append(out, k)
	}
	return out
}()

// projection says which GPU the results ran on and which the trace came
// from (see WorkloadPrediction.GPU), and whether they differ.
func projection(w *WorkloadResults, set *signatures.Set) (gpu, traceGPU string, projected bool) {
	gpu = w.Config["gpu"]
	traceGPU = w.Config["trace-gpu"]
	if traceGPU == "" || traceGPU == "unknown" {
		traceGPU = set.Source.GPU()
	}
	return gpu, traceGPU, gpu != "" && traceGPU != "" && gpu != traceGPU
}

// FidelityShare is the predicted time of the signatures of one fidelity.
type FidelityShare struct {
	Fidelity    string  `json:"fidelity"`
	PredictedNS float64 `json:"predicted_ns"`
	Share       float64 `json:"share"`
}

// fidelityShares orders the split by fidelity, most exact first
// (fidelityOrder), then any other kind.
func fidelityShares(by map[string]float64, total float64) []FidelityShare {
	var out []FidelityShare
	seen := map[string]bool{}
	add := func(k string) {
		if v, ok := by[k]; ok && !seen[k] {
			seen[k] = true
			fs := FidelityShare{Fidelity: k, PredictedNS: v}
			if total > 0 {
				fs.Share = v / total
			}
			out = append(out, fs)
		}
	}
	for _, k := range fidelityOrder {
		add(k)
	}
	rest := make([]string, 0, len(by))
	for k := range by {
		rest = append(rest, k)
	}
	slices.Sort(rest)
	for _, k := range rest {
		add(k)
	}
	return out
}

// relErr is got / want - 1, or nil when want is not positive.
func relErr(got, want float64) *float64 {
	if want <= 0 || math.IsNaN(got) || math.IsInf(got, 0) {
		return nil
	}
	e := got/want - 1
	return &e
}

// countFidelity records a measured signature's fidelity line (f; ok false
// when the output has none for it) in sp, in the split by fidelity and in
// the flags' counts.
func (wp *WorkloadPrediction) countFidelity(sp *SigPrediction, f bench.Fidelity, ok bool, byFid map[string]float64) {
	if !ok {
		f.Kind = "unknown"
	}
	if wp.Projected && f.Kind == replay.FidelityOther {
		f.Kind = FidelityTarget
	}
	sp.Fidelity = f.Kind
	byFid[f.Kind] += sp.PredictedNS.Center
	if f.Interpolated {
		sp.Interpolated = true
		wp.Interpolated++
		wp.InterpolatedNS += sp.TracedNS
	}
	if f.Throttled {
		wp.Throttled++
	}
	switch {
	case f.ThrottledSamples > 0 && f.ThrottledKept:
		wp.ThrottledKept++
	case f.ThrottledSamples > 0:
		wp.ThrottledDiscarded++
	}
	if f.Unconverged {
		wp.Unconverged++
	}
	if sp.PredictedJ != nil {
		wp.countEnergy(f, sp.PredictedJ.Center)
	}
}

// countEnergy adds a signature's predicted energy j to the energy flags'
// counts and shares.
func (wp *WorkloadPrediction) countEnergy(f bench.Fidelity, j float64) {
	if f.EnergyThrottled {
		wp.EnergyThrottled++
		wp.ThrottledJ += j
	}
	if f.EnergyDuty {
		wp.EnergyDuty++
		wp.DutyJ += j
	}
	if f.EnergyEstimated {
		wp.EnergyEstimated++
		wp.EstimatedJ += j
	}
}
