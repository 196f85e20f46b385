package predict

import (
	"fmt"

	"github.com/kreplay/kreplay/replay"
	"github.com/kreplay/kreplay/signatures"
	"github.com/kreplay/kreplay/workload"
)

// TracedCheck is a bundle's whole inference simulated from its host
// schedules with the trace's own kernel times in place of replays, and no
// host probe: a check of the host model on the CPU, apart from the
// replays' error, not a prediction (the trace's times come from the run
// it would predict). WallNS and MedianWallNS are the simulated
// inferences' mean and median walls (a group's slowest rank's).
// MeasuredNS is the measured run's median inference, as the acceptance
// takes it (its spans' median where the capture recorded them, else its
// mean wall per inference; the slowest rank's), and MeasuredMeanNS its
// mean wall per inference; 0 without a measured run. Err is WallNS
// against MeasuredNS, ErrMedian MedianWallNS against it (the statistic
// the acceptance compares), ErrMean WallNS against MeasuredMeanNS.
// NoSpans says the measured run recorded no spans: MeasuredNS is its mean.
type TracedCheck struct {
	Ranks          int      `json:"ranks"`
	Source         string   `json:"source"`
	WallNS         float64  `json:"wall_ns"`
	MedianWallNS   float64  `json:"median_wall_ns"`
	MeasuredNS     float64  `json:"measured_ns,omitempty"`
	MeasuredMeanNS float64  `json:"measured_mean_ns,omitempty"`
	Err            *float64 `json:"err,omitempty"`
	ErrMedian      *float64 `json:"err_median,omitempty"`
	ErrMean        *float64 `json:"err_mean,omitempty"`
	NoSpans        bool     `json:"measured_no_spans,omitempty"`
}

// TracedEntries stands the trace's own times in for the replays of set's
// signatures: each its traced median, a collective its shortest traced
// run (the transfer, without the wait for the other ranks that its longer
// runs hold).
func TracedEntries(set *signatures.Set) []replay.Entry {
	out := make([]replay.Entry, 0, len(set.Signatures))
	for _, sig := range set.Signatures {
		ns := sig.TracedNS.Median
		if sig.Class == signatures.ClassCollective {
			ns = sig.TracedNS.Min
		}
		out = append(out, replay.Entry{ID: sig.ID, Label: sig.Label, Tier: sig.Tier, Class: sig.Class, Count: sig.Count,
			Result: &replay.Result{Stats: replay.Stats{MedianNS: float64(ns)}}})
	}
	return out
}

// traced is in with the trace's own kernel times (TracedEntries) in
// place of its replays and no what-if, its schedule, constants and power
// limit kept.
func traced(in InferenceInput) InferenceInput {
	in.Entries, in.FasterHost, in.GraphLaunch = TracedEntries(in.Set), []float64{}, nil
	return in
}

// TracedWall is the mean and the median wall of in's inference traced:
// the trace's own kernel times in place of its replays.
func TracedWall(in InferenceInput) (mean, median float64, err error) {
	inf, err := PredictInference(traced(in))
	if err != nil {
		return 0, 0, err
	}
	return inf.WallNS, inf.MedianWallNS, nil
}

// tracedGroup is the group's inference with every rank's input traced.
func tracedGroup(ins []InferenceInput) (*GroupInference, error) {
	t := make([]InferenceInput, len(ins))
	for r, in := range ins {
		t[r] = traced(in)
	}
	return PredictGroup(t)
}

// CheckWithTrace simulates the bundle b (input names it) over sets, its
// ranks' signature sets in rank order, traced and with no host probe
// (its constants 0, the model's defaults otherwise), and compares the
// wall with b's measured run.
func CheckWithTrace(input string, b *workload.Bundle, sets []*signatures.Set) (*TracedCheck, error) {
	ins := make([]InferenceInput, len(sets))
	for r, set := range sets {
		s, rt, err := HostScheduleFor(input, b, set)
		if err != nil {
			return nil, fmt.Errorf("rank %d: %w", r, err)
		}
		ins[r] = InferenceInput{Set: set, Runtime: rt, Schedule: s}
	}
	return checkInputs(ins, b)
}

// checkInputs is CheckWithTrace on the ranks' inputs, read from b: their
// sets, runtimes and schedules (the rest of each input is not used).
func checkInputs(from []InferenceInput, b *workload.Bundle) (*TracedCheck, error) {
	ins := make([]InferenceInput, len(from))
	sets := make([]*signatures.Set, len(from))
	for r, in := range from {
		ins[r] = InferenceInput{Set: in.Set, Runtime: in.Runtime, Schedule: in.Schedule, Constants: HostConstants(&replay.HostProbe{})}
		sets[r] = in.Set
	}
	c := &TracedCheck{Ranks: len(ins), Source: ins[0].Schedule.Source}
	var err error
	if len(ins) == 1 {
		c.WallNS, c.MedianWallNS, err = TracedWall(ins[0])
	} else {
		var g *GroupInference
		if g, err = tracedGroup(ins); err == nil {
			c.WallNS, c.MedianWallNS = g.WallNS, g.MedianWallNS
		}
	}
	if err != nil {
		return nil, err
	}
	m, err := b.Measured()
	if err != nil {
		return c, err
	}
	if g, ok := measuredGroup(sets, m); ok {
		c.MeasuredNS, c.Err, c.ErrMedian = g.medianNS, relErr(c.WallNS, g.medianNS), relErr(c.MedianWallNS, g.medianNS)
		c.MeasuredMeanNS, c.ErrMean, c.NoSpans = g.meanNS, relErr(c.WallNS, g.meanNS), !g.spans
	}
	return c, nil
}

// String says what the check found, on one line.
func (c *TracedCheck) String() string {
	s := fmt.Sprintf("the whole inference from the host schedule (%s) with the trace's own kernel times and no host probe: wall median %.2f ms, mean %.2f ms",
		c.Source, c.MedianWallNS/1e6, c.WallNS/1e6)
	if c.Ranks > 1 {
		s = fmt.Sprintf("%s over %d ranks", s, c.Ranks)
	}
	if c.Err != nil {
		what := "median"
		if c.NoSpans {
			what = "wall per inference (no spans recorded: a mean)"
		}
		s += fmt.Sprintf(" against the measured %s %.2f ms (median %+.1f%%, mean %+.1f%%)", what, c.MeasuredNS/1e6, 100**c.ErrMedian, 100**c.Err)
	}
	if c.ErrMean != nil && !c.NoSpans {
		s += fmt.Sprintf(" and the measured mean %.2f ms (mean %+.1f%%)", c.MeasuredMeanNS/1e6, 100**c.ErrMean)
	}
	return s + "; a check of the host model, not a prediction"
}
