package roofline

import (
	"errors"
	"math"
	"strings"
	"testing"
)

// synthPeaks are SYNTHETIC peaks, round numbers of an H100's order, not a
// measurement.
func synthPeaks() *Peaks {
	return &Peaks{Version: FormatVersion, CopyGBps: 2000, TFLOPs: map[string]float64{"bf16": 800, "f16": 800, "f32": 50}}
}

func near(got, want float64) bool {
	return math.Abs(got-want) <= 1e-9*math.Max(1, math.Abs(want))
}

func TestPlace(t *testing.T) {
	p := synthPeaks()
	tests := []struct {
		name  string
		dtype string
		w     Work
		// want
		bound        Bound
		memShare     float64
		computeShare float64
		ai, roof     float64 // roof: RoofTFLOPs
		noPeak       bool
	}{
		// 64 MB at 1600 GB/s: 80% of the copy; 0.4 TFLOP/s of f32's 50.
		{"elementwise, memory", "f32", Work{Bytes: 64e6, FLOPs: 16e6, NS: 40e3}, Memory, 0.8, 0.008, 0.25, 0.5, false},
		// 4096^3 bf16 GEMM in 250 µs: 549.8 TFLOP/s of 800.
		{"GEMM, compute", "bf16", Work{Bytes: 3 * 4096 * 4096 * 2, FLOPs: 2 * 4096 * 4096 * 4096, NS: 250e3}, Compute,
			3 * 4096 * 4096 * 2 / 250e3 / 2000, 2 * 4096 * 4096 * 4096 / 250e3 / 1e3 / 800, 4096.0 / 3, 800, false},
		// A device copy: no FLOPs, the roof is the copy bandwidth.
		{"copy, memory", "", Work{Bytes: 2e9, NS: 1.1e6}, Memory, 2e9 / 1.1e6 / 2000, 0, 0, 0, false},
		// Short and under half the roof.
		{"short, latency", "f32", Work{Bytes: 1e6, FLOPs: 1e5, NS: 3000}, Latency, 1e6 / 3000 / 2000.0, 1e5 / 3000 / 1e3 / 50, 0.1, 0.2, false},
		// Long but under 10% of the roof.
		{"long, latency", "f32", Work{Bytes: 1e7, NS: 100e3}, Latency, 0.05, 0, 0, 0, false},
		// Short but 75% of the roof: memory.
		{"short, near the roof", "f32", Work{Bytes: 6e6, NS: 4000}, Memory, 0.75, 0, 0, 0, false},
		// Exactly 10% of the roof and long: not latency (the rule is "under").
		{"at the latency share", "", Work{Bytes: 2e7, NS: 100e3}, Memory, 0.1, 0, 0, 0, false},
		// 5 µs exactly is not short.
		{"at the short time", "", Work{Bytes: 3e6, NS: 5000}, Memory, 0.3, 0, 0, 0, false},
		// Just under 5 µs at 30%: latency.
		{"just short", "", Work{Bytes: 2.9994e6, NS: 4999}, Latency, 0.3, 0, 0, 0, false},
		// At the ridge point (AI 400 for 800 TFLOP/s over 2000 GB/s) both
		// shares are equal: compute.
		{"at the ridge", "bf16", Work{Bytes: 1e8, FLOPs: 4e10, NS: 100e3}, Compute, 0.5, 0.5, 400, 800, false},
		// Operands in the L2 beat the device-memory copy: share over 1.
		{"above the roof", "", Work{Bytes: 2.6e6, NS: 1000}, Memory, 1.3, 0, 0, 0, false},
		// No f8e4m3 peak: only the memory roof holds it.
		{"no compute peak", "f8e4m3", Work{Bytes: 3e9, FLOPs: 1e12, NS: 2e6}, Memory, 0.75, 0, 1e12 / 3e9, 1e12 / 3e9 * 2, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pt, err := Place(p, tt.dtype, tt.w)
			if err != nil {
				t.Fatal(err)
			}
			if pt.Bound != tt.bound {
				t.Errorf("bound %s, want %s (%+v)", pt.Bound, tt.bound, pt)
			}
			if !near(pt.MemoryShare, tt.memShare) || !near(pt.ComputeShare, tt.computeShare) {
				t.Errorf("shares memory %g compute %g, want %g and %g", pt.MemoryShare, pt.ComputeShare, tt.memShare, tt.computeShare)
			}
			if !near(pt.Share, math.Max(tt.memShare, tt.computeShare)) {
				t.Errorf("share %g, want the larger of %g and %g", pt.Share, tt.memShare, tt.computeShare)
			}
			if !near(pt.AI, tt.ai) || !near(pt.RoofTFLOPs, tt.roof) || pt.NoComputePeak != tt.noPeak {
				t.Errorf("AI %g roof %g no peak %v, want %g %g %v", pt.AI, pt.RoofTFLOPs, pt.NoComputePeak, tt.ai, tt.roof, tt.noPeak)
			}
			// The share of the roof is achieved over attainable FLOP/s
			// too, where there are FLOPs and a peak.
			if tt.w.FLOPs > 0 && !tt.noPeak && !near(pt.Share, pt.TFLOPs/pt.RoofTFLOPs) {
				t.Errorf("share %g, achieved over attainable %g", pt.Share, pt.TFLOPs/pt.RoofTFLOPs)
			}
			if tt.w.FLOPs == 0 && pt.DType != "" {
				t.Errorf("dtype %q for work without FLOPs", pt.DType)
			}
		})
	}
}

func TestPlaceErrors(t *testing.T) {
	p := synthPeaks()
	tests := []struct {
		name  string
		p     *Peaks
		w     Work
		want  string
		isErr error
	}{
		{"nil peaks", nil, Work{Bytes: 1, NS: 1}, "no copy bandwidth", nil},
		{"no copy", &Peaks{TFLOPs: p.TFLOPs}, Work{Bytes: 1, NS: 1}, "no copy bandwidth", nil},
		{"zero time", p, Work{Bytes: 1}, "want a positive time", nil},
		{"NaN time", p, Work{Bytes: 1, NS: math.NaN()}, "want a positive time", nil},
		{"negative bytes", p, Work{Bytes: -1, NS: 1}, "want non-negative", nil},
		{"no work", p, Work{NS: 1}, "no bytes and no FLOPs", ErrNoWork},
		{"FLOPs without bytes", p, Work{FLOPs: 1, NS: 1}, "no arithmetic intensity", nil},
	}
	for _, tt := range tests {
		_, err := Place(tt.p, "f32", tt.w)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want an error with %q", tt.name, err, tt.want)
		}
		if tt.isErr != nil && !errors.Is(err, tt.isErr) {
			t.Errorf("%s: %v is not %v", tt.name, err, tt.isErr)
		}
	}
}

func TestClassify(t *testing.T) {
	tests := []struct {
		share, mem, comp, ns float64
		want                 Bound
	}{
		{0.09, 0.09, 0, 1e6, Latency},
		{0.10, 0.10, 0, 1e6, Memory},
		{0.49, 0.49, 0.1, 4999, Latency},
		{0.50, 0.50, 0.1, 4999, Memory},
		{0.49, 0.1, 0.49, 5000, Compute},
		{0.9, 0.9, 0.9, 1e6, Compute},
		{0.9, 0.9, 0.89, 1e6, Memory},
	}
	for _, tt := range tests {
		if got := Classify(tt.share, tt.mem, tt.comp, tt.ns); got != tt.want {
			t.Errorf("Classify(%g, %g, %g, %g) = %s, want %s", tt.share, tt.mem, tt.comp, tt.ns, got, tt.want)
		}
	}
}

func TestRidgeAI(t *testing.T) {
	if got := RidgeAI(800, 2000); !near(got, 400) {
		t.Errorf("RidgeAI(800, 2000) = %g, want 400 FLOP/B", got)
	}
	if got := RidgeAI(800, 0); got != 0 {
		t.Errorf("RidgeAI without bandwidth = %g, want 0", got)
	}
}
