package replay

import (
	"math"
	"testing"
	"time"

	"github.com/kreplay/kreplay/internal/cuda"
	"github.com/kreplay/kreplay/signatures"
	"github.com/kreplay/kreplay/tier3"
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
	// The launch series holds every sample, in order, with the clock
	// where NVML read one during it.
	var clocked int
	for i, l := range r.Launches {
		if l.NS <= 0 || (i > 0 && l.AtMS <= r.Launches[i-1].AtMS) {
			t.Errorf("launch %d of the series: %+v", i, l)
		}
		if l.MHz > 0 {
			clocked++
		}
	}
	if len(r.Launches) != r.Samples || (d.Meter != nil && clocked == 0) {
		t.Errorf("%d launches in the series (%d with a clock) for %d samples", len(r.Launches), clocked, r.Samples)
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
	// The graph's split: every launch's activities, busy within its span,
	// the gaps the rest, and the span one launch (CUPTI slows it some).
	if g := r.Gaps; g == nil || g.Launches != contextPasses || g.Activities <= 0 || g.BusyNS <= 0 ||
		g.BusyNS > g.SpanNS || math.Abs(g.SpanNS-g.BusyNS-g.GapNS) > 1 || g.SpanNS > 1.5*r.MedianNS {
		t.Errorf("the graph's split: %+v, for %d invocations and a %.1f µs timeline", g, tl.Launched, r.MedianNS/1e3)
	} else {
		t.Logf("under CUPTI a launch spans %.1f µs: %d activities busy %.1f µs, %d gaps %.1f µs (median %.2f µs)",
			g.SpanNS/1e3, g.Activities, g.BusyNS/1e3, g.Gaps, g.GapNS/1e3, g.MedianGapNS/1e3)
	}
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

// Restricting tiers skips the others with the reason. The BLOOM-560M
// generate trace has tier-1 copies of their own (the prefill's one memset
// is part of a GEMM, so a tier-1 timeline of it has nothing to launch).
func TestGPUTimelineTiers(t *testing.T) {
	d := openGPU(t)
	set := embedded(t, "h100_bloom-560m_generate.trace.json.gz")
	tl, err := d.PrepareTimeline(set, TimelineOptions{Tiers: []signatures.Tier{signatures.TierMemory}})
	if err != nil {
		t.Fatalf("a tier-1 timeline of the generate trace: %v", err)
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

// touchSig is a tier-3 signature whose kernel the caller builds
// (withTouch): tier 3's kr_touch copying 16 KiB.
var touchSig = &signatures.Signature{ID: "0123456789ab", Label: "with kr_touch f32[4096]", Tier: signatures.TierKernel,
	Class: signatures.ClassCopy, Activity: signatures.ActivityKernel, Kernel: tier3.TouchKernel, Op: "test::touch"}

// withTouch builds touchSig's kernel: kr_touch from x into y.
func withTouch(e *tier3.Env, _ *signatures.Signature) (*tier3.Instance, error) {
	x, err := e.NewTensor([]int64{4096}, []int64{1}, "f32")
	if err != nil {
		return nil, err
	}
	y, err := e.Output([]int64{4096}, "f32")
	if err != nil {
		return nil, err
	}
	f, err := e.Function(tier3.Util, tier3.TouchKernel)
	if err != nil {
		return nil, err
	}
	return &tier3.Instance{Inputs: []*tier3.Tensor{x}, Outputs: []*tier3.Tensor{y}, Launch: func(s *cuda.Stream) error {
		return f.Launch([3]uint32{4, 1, 1}, [3]uint32{256, 1, 1}, 0, s, y.Ptr, x.Ptr, uint64(x.Bytes()), uint32(0))
	}}, nil
}

// A kernel the caller builds (PrepareWith) replays with its path and is
// the same kernel when CUPTI sees it run; substituted for every
// invocation of BLOOM-560M's attention-mask add, it launches in their
// place, the add is not prepared, and its launches have their times in
// context.
func TestGPUTimelineSubstitute(t *testing.T) {
	d := openGPU(t)
	with, err := d.PrepareWith(touchSig, Warm, withTouch)
	if err != nil {
		t.Fatal(err)
	}
	defer with.Close()
	r, err := d.Measure(with, quick)
	if err != nil {
		t.Fatal(err)
	}
	if r.Path != PathWith+tier3.TouchKernel || r.Fidelity != FidelitySame || r.Work.Bytes != 2*16384 {
		t.Errorf("alone: path %q, fidelity %q, work %+v", r.Path, r.Fidelity, r.Work)
	}
	set := embedded(t, "h100_bloom-560m_prefill.trace.json.gz")
	add := set.ByID("ead9ce6de968") // add f16[4,16,512,512] f16[4,1,512,512], once a layer
	if add == nil {
		t.Fatal("no mask add in the BLOOM-560M prefill")
	}
	var subs []Substitution
	for i, inv := range set.Timeline {
		if set.Signatures[inv.Sig] == add {
			subs = append(subs, Substitution{Invocations: []int{i}, With: with})
		}
	}
	plainLaunched, tl := plainAnd(t, d, set, TimelineOptions{Substitute: subs})
	defer tl.Close()
	if tl.Substituted != len(subs) || tl.Launched != plainLaunched || len(subs) != add.Count {
		t.Errorf("%d substituted of %d, %d launched, %d plain", tl.Substituted, add.Count, tl.Launched, plainLaunched)
	}
	for _, p := range tl.Prepared {
		if p.Sig == add {
			t.Error("the substituted add was prepared")
		}
	}
	res, err := tl.Measure(quick)
	if err != nil {
		t.Fatal(err)
	}
	t.Log(res)
	if res.Substituted != len(subs) || res.ContextErr != "" {
		t.Errorf("result: %d substituted, context error %q", res.Substituted, res.ContextErr)
	}
	found := false
	for _, c := range res.Context {
		found = found || c.ID == touchSig.ID && c.Invocations == len(subs)
	}
	if !found {
		t.Errorf("no time in context for the substitute's %d launches", len(subs))
	}
}

// The again timeline launches each of BLOOM-560M's attention-mask adds a
// second time right after itself: one more launch each, and their time
// in context counts both.
func TestGPUTimelineAgain(t *testing.T) {
	d := openGPU(t)
	set := embedded(t, "h100_bloom-560m_prefill.trace.json.gz")
	add := set.ByID("ead9ce6de968")
	if add == nil {
		t.Fatal("no mask add in the BLOOM-560M prefill")
	}
	var runs [][]int
	for i, inv := range set.Timeline {
		if set.Signatures[inv.Sig] == add {
			runs = append(runs, []int{i})
		}
	}
	for _, times := range []int{1, 2} {
		plainLaunched, tl := plainAnd(t, d, set, TimelineOptions{Again: runs, AgainTimes: times})
		if tl.Again != times*len(runs) || tl.Launched != plainLaunched+times*len(runs) {
			t.Errorf("times %d: %d launched again of %d runs, %d launched, %d plain", times, tl.Again, len(runs), tl.Launched, plainLaunched)
		}
		res, err := tl.Measure(quick)
		tl.Close()
		if err != nil {
			t.Fatal(err)
		}
		t.Log(res)
		found := false
		for _, c := range res.Context {
			found = found || c.ID == add.ID && c.Invocations == (times+1)*len(runs)
		}
		if !found || res.ContextErr != "" {
			t.Errorf("times %d: no time in context for the add's %d launches (context error %q)", times, (times+1)*len(runs), res.ContextErr)
		}
	}
}

// plainAnd returns how many launches set's plain timeline makes, and its
// timeline prepared with o (the caller closes it).
func plainAnd(t *testing.T, d *Device, set *signatures.Set, o TimelineOptions) (int, *Timeline) {
	t.Helper()
	plain, err := d.PrepareTimeline(set, TimelineOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n := plain.Launched
	plain.Close()
	tl, err := d.PrepareTimeline(set, o)
	if err != nil {
		t.Fatal(err)
	}
	return n, tl
}

// A timeline launched from the host at a pacing: every launch after its
// gap, a sync where the pacing says; a pass lasts at least its gaps, and
// the graph-free passes still run every invocation.
func TestGPUTimelinePaced(t *testing.T) {
	d := openGPU(t)
	set := embedded(t, "h100_bloom-560m_generate.trace.json.gz")
	tl, err := d.PrepareTimeline(set, TimelineOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer tl.Close()
	invs := tl.Invocations()
	if len(invs) != tl.Launched || len(invs) == 0 {
		t.Fatalf("%d invocations for %d launches", len(invs), tl.Launched)
	}
	p := Pacing{Gap: make([]time.Duration, len(invs)), Sync: make([]bool, len(invs))}
	for k := range p.Gap {
		p.Gap[k] = 20 * time.Microsecond
	}
	p.Sync[len(p.Sync)/2] = true
	o := quick
	o.Energy, o.EnergyTicks, o.EnergyWarmup = d.Meter != nil, 5, 200*time.Millisecond
	r, err := tl.MeasurePaced(p, o)
	if err != nil {
		t.Fatal(err)
	}
	gaps := time.Duration(len(invs)) * 20 * time.Microsecond
	t.Logf("%d launches paced 20 µs apart: wall %+v over %d passes (the gaps alone %v); energy %+v %s", len(invs), r.Wall, r.Passes, gaps, r.Energy, r.EnergyErr)
	if r.Passes < pacedMinPasses || r.Wall.MedianNS < float64(gaps.Nanoseconds()) || r.Wall.MedianNS > 20*float64(gaps.Nanoseconds()) {
		t.Errorf("paced wall %+v over %d passes, want at least the gaps' %v", r.Wall, r.Passes, gaps)
	}
	if o.Energy && (r.Energy == nil || r.Energy.JoulesPerOp <= 0) {
		t.Errorf("no energy: %s", r.EnergyErr)
	}
	// The same launches at times since the last sync (Pacing.At): the
	// launch path's own cost does not add up, so a pass lasts its
	// schedule, within the last kernel's time and the sync's return.
	const step = 50 * time.Microsecond
	at := Pacing{At: make([]time.Duration, len(invs)), WaitAt: make([]time.Duration, len(invs)), Sync: make([]bool, len(invs))}
	mid := len(invs) / 2
	for k := range at.At {
		at.At[k] = time.Duration(k) * step
		if k > mid {
			at.At[k] = time.Duration(k-mid-1) * step
		}
	}
	at.Sync[mid], at.WaitAt[mid] = true, time.Duration(mid)*step+step/2
	o.Energy = false
	ra, err := tl.MeasurePaced(at, o)
	if err != nil {
		t.Fatal(err)
	}
	sched := at.WaitAt[mid] + at.At[len(invs)-1]
	t.Logf("%d launches at recorded times %v apart, a sync after launch %d: wall %+v (the schedule %v)", len(invs), step, mid, ra.Wall, sched)
	if ra.Wall.MedianNS < float64(sched.Nanoseconds()) || ra.Wall.MedianNS > 1.05*float64(sched.Nanoseconds())+float64(time.Millisecond) {
		t.Errorf("paced at times since the last sync: wall %.0f ns, want the schedule's %v to 5%% + 1 ms over it", ra.Wall.MedianNS, sched)
	}
}
