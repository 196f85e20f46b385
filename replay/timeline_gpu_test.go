package replay

import (
	"errors"
	"testing"
	"time"

	"github.com/kreplay/kreplay/signatures"
)

// The whole BLOOM-560M prefill timeline replays as one CUDA graph: every
// invocation is launched or skipped with a reason, parts excepted, and
// the graph times.
func TestGPUTimelinePrefill(t *testing.T) {
	d := openGPU(t)
	set := embedded(t, "h100_bloom-560m_prefill.trace.json.gz")
	tl, err := d.PrepareTimeline(set, TimelineOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := tl.Close(); err != nil {
			t.Error(err)
		}
	})
	parts := 0
	for _, inv := range set.Timeline {
		if set.Signatures[inv.Sig].PartOf != "" {
			parts++
		}
	}
	if tl.Parts != parts {
		t.Errorf("%d part invocations, want %d", tl.Parts, parts)
	}
	if got, want := tl.Launched+tl.Skipped, len(set.Timeline)-parts; got != want {
		t.Errorf("%d launched + %d skipped = %d, want %d timeline invocations less %d parts", tl.Launched, tl.Skipped, got, want, parts)
	}
	if tl.Launched == 0 || len(tl.Prepared) == 0 {
		t.Fatalf("nothing launched: %+v", tl.Skips)
	}
	var skipped int
	var skippedNS int64
	for _, sk := range tl.Skips {
		t.Logf("skipped %s %s: %dx, %d ns traced: %s", sk.ID, sk.Label, sk.Invocations, sk.TracedNS, sk.Reason)
		if sk.Reason == "" {
			t.Errorf("%s skipped without a reason", sk.ID)
		}
		skippedNS += sk.TracedNS
		if set.ByID(sk.ID).PartOf == "" {
			skipped += sk.Invocations
		}
	}
	if skipped != tl.Skipped || skippedNS != tl.SkippedNS {
		t.Errorf("skips list %d invocations, %d ns; timeline counts %d, %d ns", skipped, skippedNS, tl.Skipped, tl.SkippedNS)
	}
	t.Logf("%d signatures prepared, %d MB of buffers, %d invocations launched, %d skipped, %d parts",
		len(tl.Prepared), tl.BufferBytes>>20, tl.Launched, tl.Skipped, tl.Parts)

	r, err := tl.Measure(Options{Budget: time.Second, Warmup: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Log(r)
	if r.MedianNS <= 0 || r.Samples < 10 || r.MinNS > r.MedianNS || r.MedianNS > r.MaxNS || r.LoNS > r.HiNS {
		t.Errorf("result %+v", r)
	}
	if r.Invocations != tl.Launched || r.Skipped != tl.Skipped || r.SkippedNS != tl.SkippedNS {
		t.Errorf("result counts %d/%d/%d, timeline %d/%d/%d", r.Invocations, r.Skipped, r.SkippedNS, tl.Launched, tl.Skipped, tl.SkippedNS)
	}
	if r.GPU == nil && d.Meter != nil {
		t.Error("no NVML samples")
	}
	// Every replayed kernel signature has its time in context, and the
	// in-context times add up to about the timeline's own time.
	if r.ContextErr != "" {
		t.Errorf("no times in context: %s", r.ContextErr)
	}
	var inContext float64
	for _, c := range r.Context {
		if c.MedianNS <= 0 || c.Invocations <= 0 || c.Samples != c.Invocations*contextPasses {
			t.Errorf("in context %+v", c)
		}
		inContext += c.MeanNS * float64(c.Invocations)
	}
	if len(r.Context) == 0 || inContext > 1.05*r.MedianNS {
		t.Errorf("%d signatures in context, %.1f µs summed, timeline %.1f µs", len(r.Context), inContext/1e3, r.MedianNS/1e3)
	}
	t.Logf("in context: %d signatures, %.1f µs summed against the timeline's %.1f µs", len(r.Context), inContext/1e3, r.MedianNS/1e3)
	if r.BusyNS > 0 {
		t.Logf("timeline replay %.1f µs against the trace's %.1f µs busy (x%.3f), %.1f µs of summed durations; %.1f µs traced not replayed",
			r.MedianNS/1e3, float64(r.BusyNS)/1e3, r.MedianNS/float64(r.BusyNS), float64(r.TracedNS)/1e3, float64(r.SkippedNS)/1e3)
	}

	// Closing twice is harmless; measuring a closed timeline fails.
	if err := tl.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := tl.Measure(quick); err == nil {
		t.Error("measured a closed timeline")
	}
}

// Restricting tiers skips the others with the reason.
func TestGPUTimelineTiers(t *testing.T) {
	d := openGPU(t)
	set := embedded(t, "h100_bloom-560m_prefill.trace.json.gz")
	tl, err := d.PrepareTimeline(set, TimelineOptions{Tiers: []signatures.Tier{signatures.TierMemory}})
	if errors.Is(err, ErrTimelineMemory) {
		t.Fatal(err)
	}
	if err != nil {
		t.Skipf("no tier-1 invocation to replay: %v", err)
	}
	defer tl.Close()
	for _, p := range tl.Prepared {
		if p.Sig.Tier != signatures.TierMemory {
			t.Errorf("%s of tier %d prepared", p.Sig.ID, p.Sig.Tier)
		}
	}
	r, err := tl.Measure(quick)
	if err != nil {
		t.Fatal(err)
	}
	t.Log(r)
}
