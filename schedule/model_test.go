package schedule

import (
	"slices"
	"testing"
)

// TestGPUPlacementOnTrace checks the model's GPU side on the profiled
// generate: with the constants sampled from the trace (sampleTrace) and the
// traced op durations, each simulated op starts after its simulated launch
// where the trace's op started after its traced one. The launch, not the
// inference's start, is the reference: a wait exits its target's time +
// WakeNS, one value where the trace's wakes spread from 5 to 16 µs, so the
// host's later calls shift by a few µs at each wait (TestEmbeddedTraces
// bounds what that does to the wall).
func TestGPUPlacementOnTrace(t *testing.T) {
	set, rt, s := loadGenerate(t)
	b, err := Bind(s, 0, set, rt, equalNames)
	if err != nil {
		t.Fatal(err)
	}
	inf := &s.Inferences[0]
	ts := sampleTrace(s, set, b)
	c := ts.constants()
	m := newSim(s, c)
	errs := make([]float64, 0, len(b))
	j := 0
	for k := range inf.Calls {
		if !inf.Calls[k].Kind.GPU() {
			m.step(0, k, nil)
			continue
		}
		inv := set.Timeline[b[j].Timeline[0]]
		j++
		st := m.step(0, k, &Op{DurNS: []int64{inv.Dur}})
		start := m.spans[len(m.spans)-1][0]
		d := float64((start - st.enter) - (inv.Start - inf.Start - inf.Calls[k].Enter))
		errs = append(errs, max(d, -d))
	}
	q := quantiles(slices.Clone(errs))
	t.Logf("submit %d ns (%d samples), queue gap %d ns (%d samples), wake %d ns (%d samples); |start after launch error| median %.0f ns, p90 %.0f ns, max %.0f ns",
		c.SubmitNS, len(ts.submit), c.QueueGapNS, len(ts.gap), c.WakeNS, len(ts.wake), q.Median, q.P90, slices.Max(errs))
	// Tolerances: the launch latency varies around its median by a few µs
	// under the profiler.
	if q.Median > 2000 || q.P90 > 6000 {
		t.Errorf("simulated op starts after their launch are off the trace's by a median %.0f ns and a p90 %.0f ns; want at most 2 and 6 µs", q.Median, q.P90)
	}
}
