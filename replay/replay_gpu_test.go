package replay

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/kreplay/kreplay/internal/cuda"
	"github.com/kreplay/kreplay/internal/gputest"
	"github.com/kreplay/kreplay/internal/traces/tracetest"
	"github.com/kreplay/kreplay/signatures"
)

func openGPU(t *testing.T) *Device {
	t.Helper()
	gputest.Require(t, cuda.Init)
	d, err := Open(0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		err := d.Close()
		switch {
		case err != nil && d.Lost() != nil:
			// A test that lost the context on purpose, or failed on it.
			t.Logf("close after the context was lost: %v", err)
		case err != nil:
			t.Error(err)
		}
	})
	return d
}

// openMeteredGPU is openGPU for a test that needs the GPU's NVML meter:
// it skips (a failure under KREPLAY_REQUIRE_GPU) without one.
func openMeteredGPU(t *testing.T) *Device {
	t.Helper()
	d := openGPU(t)
	if d.Meter == nil {
		gputest.Skipf(t, "no NVML: %v", d.NVMLErr)
	}
	return d
}

func embedded(t *testing.T, name string) *signatures.Set {
	return tracetest.ImportSet(t, name)
}

var quick = Options{Budget: 200 * time.Millisecond, Warmup: 10 * time.Millisecond, MinTime: 10 * time.Millisecond}

// Every tier-1 and tier-2 signature of the BLOOM-560M prefill trace
// replays, and CUPTI sees the traced kernel run for each GEMM.
func TestGPURunSetPrefill(t *testing.T) {
	d := openGPU(t)
	if d.Meter == nil {
		t.Logf("no NVML: %v", d.NVMLErr)
	}
	set := embedded(t, "h100_bloom-560m_prefill.trace.json.gz")
	var lines int
	entries := d.RunSet(set, SuiteOptions{Tiers: []signatures.Tier{1, 2}, Cache: Rotating, Measure: quick,
		Done: func(Entry) { lines++ }})
	if lines != len(entries) || len(entries) == 0 {
		t.Fatalf("Done called %d times for %d entries", lines, len(entries))
	}
	for _, e := range entries {
		if e.PartOf != "" {
			continue
		}
		if e.Err != "" || e.Result == nil {
			t.Errorf("%s %s: %s", e.ID, e.Label, e.Err)
			continue
		}
		r := e.Result
		if r.MedianNS <= 0 || r.KernelMedianNS <= 0 || r.Samples < 10 || r.MinNS > r.MedianNS || r.MedianNS > r.MaxNS {
			t.Errorf("%s %s: result %+v", e.ID, e.Label, r)
		}
		checkSameKernel(t, e, set.Source.GPU(), d.Name)
		if r.GPU == nil && d.Meter != nil {
			t.Errorf("%s: no NVML samples", e.ID)
		}
		// The interval is the reported kernel time's, and the samples
		// that NVML saw throttled are accounted for.
		if k := r.KernelMedianNS; k > 0 && math.Abs(r.RelCI-max(k-r.KernelLoNS, r.KernelHiNS-k)/k) > 1e-9 {
			t.Errorf("%s: RelCI %v is not the kernel time's interval [%v, %v] around %v", e.ID, r.RelCI, r.KernelLoNS, r.KernelHiNS, k)
		}
		if r.ThrottledSamples > 0 {
			t.Logf("%s: %s", e.ID, r)
			if !r.ThrottledKept && (r.Samples < 10 || r.MedianAllNS <= 0 || r.KernelMedianAllNS <= 0) {
				t.Errorf("%s: throttled samples discarded: %+v", e.ID, r)
			}
		}
	}
}

// Bad signatures get a *SignatureError naming them, and the device keeps
// working for the next one.
func TestGPUBadSignatures(t *testing.T) {
	d := openGPU(t)
	set := embedded(t, "h100_bloom-560m_prefill.trace.json.gz")
	var gemm *signatures.Signature
	for _, s := range set.Signatures {
		if s.Class == signatures.ClassGEMM && gemm == nil && s.GEMM != nil {
			gemm = s
		}
	}
	// A collective needs a Group of GPUs, not one Device.
	coll := &signatures.Signature{ID: "collective", Label: "allreduce", Tier: signatures.TierLibrary,
		Class: signatures.ClassCollective, Collective: &signatures.Collective{Op: "allreduce", Nelems: 1024, DType: "f16", Ranks: 2}}
	huge := *gemm
	g := *gemm.GEMM
	g.M = 1 << 26 // operands of hundreds of GB
	huge.GEMM = &g
	unrep := *gemm
	unrep.Unreplayable = "unreplayable: test"
	for _, tc := range []struct {
		sig  *signatures.Signature
		want error
		text string
	}{
		{&huge, nil, "bytes of device memory"},
		{&unrep, ErrUnreplayable, "unreplayable: test"},
		{coll, ErrNotImplemented, "Group"},
	} {
		_, err := d.Prepare(tc.sig)
		var se *SignatureError
		if !errors.As(err, &se) || se.ID != tc.sig.ID {
			t.Errorf("%s: error %v is not a SignatureError naming it", tc.sig.Label, err)
			continue
		}
		if (tc.want != nil && !errors.Is(err, tc.want)) || !strings.Contains(err.Error(), tc.text) {
			t.Errorf("%s: error %q, want %v / %q", tc.sig.Label, err, tc.want, tc.text)
		}
	}
	p, err := d.Prepare(gemm)
	if err != nil {
		t.Fatalf("after bad signatures: %v", err)
	}
	defer p.Close()
	if _, err := d.Measure(p, quick); err != nil {
		t.Fatalf("after bad signatures: %v", err)
	}
}

// The cache modes order as they should: a GEMM whose operands fit in L2
// runs no slower warm than with rotating buffers.
func TestGPUCacheModes(t *testing.T) {
	d := openGPU(t)
	sig := lastSig(t, "h100_bloom-560m_prefill.trace.json.gz", func(s *signatures.Signature) bool { return s.Op == "aten::bmm" })
	res := map[CacheMode]float64{}
	for _, c := range []CacheMode{Warm, Rotating, Cold} {
		r := measureIn(t, d, sig, c, quick)
		res[c] = r.KernelMedianNS
		t.Logf("%s: %s, kernel %.2fµs, sets %d", c, r, r.KernelMedianNS/1e3, r.Sets)
	}
	if res[Warm] > res[Rotating]*1.02 || res[Warm] > res[Cold]*1.02 {
		t.Errorf("warm %.0f ns slower than rotating %.0f or cold %.0f", res[Warm], res[Rotating], res[Cold])
	}
}

// Energy per invocation comes from whole NVML counter ticks while the
// replay runs, and is physically plausible.
func TestGPUEnergy(t *testing.T) {
	d := openMeteredGPU(t)
	set := embedded(t, "h100_llama-7b_prefill.trace.json.gz")
	sig := set.Signatures[0] // the largest GEMM
	r := measureWithEnergy(t, d, sig, Rotating, 10, 200*time.Millisecond)
	e := r.Energy
	t.Logf("%s: %.4f J/op, %.0f W over %.2f s (%d ticks, %.0f ops), clocks %v", sig.Label, e.JoulesPerOp, e.Watts, e.Seconds, e.Ticks, e.Ops, e.GPU)
	// A window that ran power-capped is measured again duty-cycled
	// (DutyEnergy): its W is then the power while the op runs, above the
	// cap (about 900-980 W for the H100's large GEMMs, see
	// results/h100/capture/README.md),
	// and its window holds idle gaps between the bursts.
	most, sPerOp := 1000.0, e.Seconds/e.Ops
	if e.Duty != nil {
		most, sPerOp = 1200, e.JoulesPerOp/e.Watts
		t.Logf("duty-cycled: %+v", *e.Duty)
	}
	if e.Ticks < 10 || e.Ops <= 0 || e.Watts < 50 || e.Watts > most {
		t.Errorf("implausible energy %+v", e)
	}
	// J/op and W must agree with the time per op: W = J/op / (s/op).
	if sPerOp < 0.5*r.MedianNS*1e-9 || sPerOp > 2*r.MedianNS*1e-9 {
		t.Errorf("energy window gives %.1f µs/op, Measure %.1f µs", sPerOp*1e6, r.MedianNS/1e3)
	}
}

// The primed mode leaves the primers out of the replay time and the
// activities, and reproduces what warm launches hide: a 32 MiB input
// written just before is not all in L2, as it is when the same launch
// repeats on the same buffers (Llama-7B's mean over f32[4,512,4096] on an
// H100: 7.7 µs warm, 18.4 with rotating buffers, 21.1 traced).
func TestGPUPrimedMode(t *testing.T) {
	d := openGPU(t)
	sig := lastSig(t, "h100_llama-7b_prefill.trace.json.gz", func(s *signatures.Signature) bool { return s.Label == "mean f32[4,512,4096]" })
	if got := Auto.For(sig); got != Primed {
		t.Fatalf("Auto.For(%s) = %v, want primed", sig.Label, got)
	}
	res := map[CacheMode]*Result{}
	for _, c := range []CacheMode{Warm, Primed} {
		r := measureIn(t, d, sig, c, quick)
		if r.KernelMedianNS <= 0 {
			t.Fatalf("%s: no CUPTI kernel time: %s", c, r.KernelErr)
		}
		res[c] = r
		t.Logf("%s: %s, kernel %.2fµs, ran %+v", c, r, r.KernelMedianNS/1e3, r.Ran)
	}
	pr := res[Primed]
	if pr.Cache != "primed" {
		t.Errorf("primed measurement ran %s", pr.Cache)
	}
	if w := res[Warm].Ran; len(pr.Ran) != len(w) || len(w) == 0 || pr.Ran[0].Name != w[0].Name {
		t.Errorf("primed replay ran %+v, want what the warm one ran: %+v", pr.Ran, w)
	}
	if pr.MedianNS <= pr.KernelMedianNS {
		t.Errorf("event time %.0f ns does not include the primers (kernel %.0f ns)", pr.MedianNS, pr.KernelMedianNS)
	}
	if w := res[Warm].KernelMedianNS; pr.KernelMedianNS < 1.5*w {
		t.Errorf("primed %.0f ns is not slower than warm %.0f ns: the input stayed in L2", pr.KernelMedianNS, w)
	}
	// The energy window runs the op without its primers: its time per
	// invocation is the op's, well under the primed event time.
	if d.Meter == nil {
		t.Fatalf("no NVML: %v", d.NVMLErr)
	}
	r := measureWithEnergy(t, d, sig, Primed, 5, 100*time.Millisecond)
	perOp := r.Energy.Seconds / r.Energy.Ops * 1e9
	t.Logf("primed energy: %.3g J/op, %.0f W, %.2f µs/op in the window; event %.2f µs, kernel %.2f µs",
		r.Energy.JoulesPerOp, r.Energy.Watts, perOp/1e3, r.MedianNS/1e3, r.KernelMedianNS/1e3)
	if perOp > 0.8*r.MedianNS {
		t.Errorf("energy window ran %.0f ns per op, the primed event time is %.0f: primers counted", perOp, r.MedianNS)
	}
}

// measureWithEnergy prepares sig for the cache mode and measures it with
// its energy over ticks NVML counter ticks after warmup (quick options
// otherwise); an error or a missing energy fails the test.
func measureWithEnergy(t *testing.T, d *Device, sig *signatures.Signature, cache CacheMode, ticks int, warmup time.Duration) *Result {
	t.Helper()
	o := quick
	o.Energy, o.EnergyTicks, o.EnergyWarmup = true, ticks, warmup
	r := measureIn(t, d, sig, cache, o)
	if r.Energy == nil {
		t.Fatalf("no energy: %s", r.EnergyErr)
	}
	return r
}

// measureIn prepares sig for the cache mode and measures it with o; an
// error fails the test.
func measureIn(t *testing.T, d *Device, sig *signatures.Signature, cache CacheMode, o Options) *Result {
	t.Helper()
	p, err := d.PrepareFor(sig, cache)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	r, err := d.Measure(p, o)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// lastSig returns the last signature of an embedded trace that match
// accepts; the test fails when none does.
func lastSig(t *testing.T, trace string, match func(*signatures.Signature) bool) *signatures.Signature {
	t.Helper()
	var sig *signatures.Signature
	for _, s := range embedded(t, trace).Signatures {
		if match(s) {
			sig = s
		}
	}
	if sig == nil {
		t.Fatalf("%s: no signature to test", trace)
	}
	return sig
}

// checkSameKernel holds a replayed entry to the kernel identity: CUPTI
// must have said whether the traced kernel ran, and a GEMM must have run
// it where the replay GPU is the trace's. On another GPU cuBLAS's
// heuristics may pick another kernel (the H100 trace's nvjet tiles are not
// H200's), which is logged.
func checkSameKernel(t *testing.T, e Entry, traceGPU, replayGPU string) {
	t.Helper()
	if e.SameKernel == nil {
		t.Errorf("%s %s: the kernel identity was not checked", e.ID, e.Label)
		return
	}
	if e.Class != signatures.ClassGEMM || *e.SameKernel {
		return
	}
	ran := ""
	if e.Result != nil {
		ran = fmt.Sprintf("%+v", e.Result.Ran)
	}
	if traceGPU == replayGPU {
		t.Errorf("%s %s: traced %s on this GPU kind, replay ran %s", e.ID, e.Label, e.Kernel, ran)
		return
	}
	t.Logf("%s %s: traced %s on %s, replay on %s ran %s", e.ID, e.Label, e.Kernel, traceGPU, replayGPU, ran)
}
