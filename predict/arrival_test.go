package predict

import (
	"math"
	"testing"

	"github.com/kreplay/kreplay/signatures"
)

// The REAL trace of a bf16 SDPA prefill whose cuDNN memsets queued
// 1.2-2.0 µs behind a kernel, with SYNTHETIC replay times (the traced
// medians, memsets at their paced 768 ns): each window arrival of a
// measured memset signature adds MemsetArrivalSlope x its time left to the
// window's end to its prediction, and nothing else changes;
// NoMemsetArrival leaves the term out.
func TestReportMemsetArrivals(t *testing.T) {
	set, err := signatures.ImportFile("../signatures/testdata/l1b-bf16-sdpa_prefill.s16.trace.json.gz", signatures.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want, early := 0, int64(0)
	for i, a := range set.WindowArrivals() {
		if set.Signatures[i].PartOf == "" {
			want += a.N
			early += a.EarlyNS
		}
	}
	if want == 0 {
		t.Fatal("no window arrivals outside a GEMM call in the test trace")
	}
	// Memsets replayed paced take 768 ns on the H100 (tier 1); the other
	// signatures their traced medians.
	o := synth{runs: 1, factor: func(s *signatures.Signature) float64 {
		if s.Class == signatures.ClassMemset && s.TracedNS.Median > 0 {
			return 768 / float64(s.TracedNS.Median)
		}
		return 1
	}, config: h100Config}
	with := report(t, set, o, ReportOptions{})
	without := report(t, set, o, ReportOptions{NoMemsetArrival: true})
	if with.Arrivals != want || without.Arrivals != 0 || without.ArrivalNS != 0 {
		t.Errorf("arrivals %d (without: %d, %g ns), want %d and none", with.Arrivals, without.Arrivals, without.ArrivalNS, want)
	}
	add := MemsetArrivalSlope * float64(early)
	if d := with.PredictedNS.Center - without.PredictedNS.Center; math.Abs(d-add) > 1e-6 || with.ArrivalNS != add {
		t.Errorf("the term added %.0f ns (ArrivalNS %.0f), want %.0f", d, with.ArrivalNS, add)
	}
	for _, sp := range with.Sigs {
		if sp.Arrivals > 0 && sp.Class != signatures.ClassMemset {
			t.Errorf("%s (%s): %d arrivals charged", sp.ID, sp.Class, sp.Arrivals)
		}
	}
	// The memset class against its traced time: closer with the term.
	ratio := func(wp *WorkloadPrediction) float64 {
		for _, g := range wp.Classes {
			if g.Class == signatures.ClassMemset {
				return g.Ratio
			}
		}
		t.Fatal("no memset class")
		return 0
	}
	rw, ro := ratio(with), ratio(without)
	if math.Abs(rw-1) >= math.Abs(ro-1) {
		t.Errorf("memset class x%.3f with the term, x%.3f without: not closer to the traced time", rw, ro)
	}
	t.Logf("memset class x%.3f with the arrival term, x%.3f without (%d arrivals)", rw, ro, want)
}

// h100Config are the configuration lines of an output replayed on the
// GPU and driver the arrival term was fitted on, from a trace of it.
var h100Config = []string{"gpu: " + MemsetArrivalFit.GPU, "trace-gpu: " + MemsetArrivalFit.GPU, "driver: " + MemsetArrivalFit.Driver}

// The arrival term applies only inside its fit: an output replayed on
// another GPU, from another GPU's trace, or with another driver leaves it
// out and says why.
func TestMemsetArrivalScope(t *testing.T) {
	set, err := signatures.ImportFile("../signatures/testdata/l1b-bf16-sdpa_prefill.s16.trace.json.gz", signatures.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		config []string
		on     bool
	}{
		{"the fit's GPU and driver", h100Config, true},
		{"an H200", []string{"gpu: NVIDIA H200", "trace-gpu: NVIDIA H200", "driver: " + MemsetArrivalFit.Driver}, false},
		{"an H100 trace replayed on an H200", []string{"gpu: NVIDIA H200", "trace-gpu: " + MemsetArrivalFit.GPU, "driver: " + MemsetArrivalFit.Driver}, false},
		{"another driver", []string{"gpu: " + MemsetArrivalFit.GPU, "trace-gpu: " + MemsetArrivalFit.GPU, "driver: 590.1"}, false},
		{"no configuration", nil, false},
	} {
		wp := report(t, set, synth{runs: 1, config: tc.config}, ReportOptions{})
		if on := wp.Arrivals > 0; on != tc.on || (wp.ArrivalOff == "") != tc.on {
			t.Errorf("%s: %d arrivals, off %q; want applied %v", tc.name, wp.Arrivals, wp.ArrivalOff, tc.on)
		}
	}
}
