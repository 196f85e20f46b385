package schedule

import (
	"slices"
	"testing"
)

// TestGPUPlacementOnTrace checks the model's GPU side on the profiled
// generate: with the host's calls at their traced times (no cap),
// SubmitNS and QueueGapNS estimated from the trace (medians of a kernel's
// start after its launch's enter when the stream was idle, and of the gap
// to the previous op when it was busy) and the traced op durations, the
// simulated ops start where the trace's did.
func TestGPUPlacementOnTrace(t *testing.T) {
	set, rt, s := loadGenerate(t)
	b, err := Bind(s, 0, set, rt, equalNames)
	if err != nil {
		t.Fatal(err)
	}
	inf := &s.Inferences[0]
	var submit, gap []float64
	prevEnd := map[int64]int64{}
	for _, op := range b {
		inv := set.Timeline[op.Timeline[0]]
		enter := inf.Start + inf.Calls[op.Call].Enter
		if p, ok := prevEnd[inv.Stream]; ok && p > enter {
			gap = append(gap, float64(inv.Start-p))
		} else {
			submit = append(submit, float64(inv.Start-enter))
		}
		prevEnd[inv.Stream] = inv.Start + inv.Dur
	}
	c := Constants{SubmitNS: int64(quantiles(submit).Median), QueueGapNS: int64(quantiles(gap).Median)}
	ops := make([]Op, len(b))
	for j, op := range b {
		ops[j] = Op{DurNS: []int64{set.Timeline[op.Timeline[0]].Dur}}
	}
	m := newSim(s, c)
	m.inference(0, ops)
	if len(m.spans) != len(b) {
		t.Fatalf("%d spans for %d ops", len(m.spans), len(b))
	}
	errs := make([]float64, len(b))
	for j, op := range b {
		traced := set.Timeline[op.Timeline[0]].Start - inf.Start
		d := float64(m.spans[j][0] - traced)
		errs[j] = max(d, -d)
	}
	q := quantiles(slices.Clone(errs))
	t.Logf("submit %d ns (%d samples), queue gap %d ns (%d samples); |start error| median %.0f ns, p90 %.0f ns, max %.0f ns",
		c.SubmitNS, len(submit), c.QueueGapNS, len(gap), q.Median, q.P90, slices.Max(errs))
	// Tolerances: the launch latency varies around its median by a few µs
	// under the profiler.
	if q.Median > 2000 || q.P90 > 6000 {
		t.Errorf("simulated op starts are off the trace's by a median %.0f ns and a p90 %.0f ns; want at most 2 and 6 µs", q.Median, q.P90)
	}
}
