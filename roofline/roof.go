package roofline

import (
	"errors"
	"fmt"
	"math"
)

// Bound says what limits a signature's replay (see Classify).
type Bound string

// The bounds.
const (
	Memory  Bound = "memory"
	Compute Bound = "compute"
	Latency Bound = "latency"
)

// The thresholds of the bound rule (Classify): a rule of kreplay's.
const (
	// LatencyShare: under this share of its roof, a replay is latency
	// bound whatever its length.
	LatencyShare = 0.10
	// ShortNS and ShortShare: a replay shorter than ShortNS nanoseconds
	// and under ShortShare of its roof is latency bound.
	ShortNS    = 5000.0
	ShortShare = 0.50
)

// Work is one invocation's work and replay time.
type Work struct {
	// Bytes is the device memory read plus written (replay's Work.Bytes).
	Bytes float64
	// FLOPs is the floating-point operations (0 for a copy).
	FLOPs float64
	// NS is the replay time per invocation, in nanoseconds.
	NS float64
	// ProbeClockMHz is the SM clock the replay ran at as kreplay's clock
	// probe measured it on the GPU (replay.Result.SMClockMHz); 0 when not
	// probed. The hardware roof prefers it to SMClockMHz.
	ProbeClockMHz float64
	// SMClockMHz is the mean of NVML's SM clock samples during the replay
	// (replay.Result.GPU.MeanSMClockMHz); 0 when not sampled. Without it
	// or the probe's, the hardware roof assumes the device's maximum.
	SMClockMHz float64
}

// Point places one signature on the roofline. Rates are per second:
// GB/s (1e9 bytes) and TFLOP/s (1e12 FLOPs).
type Point struct {
	// DType names the peak that holds its FLOPs ("bf16", "f32"; see
	// PeakDType); "" for work without FLOPs.
	DType string `json:"dtype,omitempty"`
	// AI is the arithmetic intensity, FLOPs per byte (0 without FLOPs).
	AI float64 `json:"ai"`
	// GBps and TFLOPs are the achieved rates.
	GBps   float64 `json:"gbps"`
	TFLOPs float64 `json:"tflops"`
	// PeakGBps is the copy bandwidth; PeakTFLOPs the peak of DType (0
	// when the peaks have none: then only the memory roof holds it, and
	// NoComputePeak is set).
	PeakGBps      float64 `json:"peak_gbps"`
	PeakTFLOPs    float64 `json:"peak_tflops,omitempty"`
	NoComputePeak bool    `json:"no_compute_peak,omitempty"`
	// RoofTFLOPs is the attainable rate, min(PeakTFLOPs, AI x PeakGBps),
	// for work with FLOPs; 0 without FLOPs (the roof is then PeakGBps).
	RoofTFLOPs float64 `json:"roof_tflops,omitempty"`
	// MemoryShare is GBps / PeakGBps; ComputeShare TFLOPs / PeakTFLOPs
	// (0 without a peak); Share, the share of the roof, the larger one.
	MemoryShare  float64 `json:"memory_share"`
	ComputeShare float64 `json:"compute_share"`
	Share        float64 `json:"share"`
	// NS is the replay time it was placed with.
	NS float64 `json:"ns"`
	// Bound is Classify of the measured shares above.
	Bound Bound `json:"bound"`

	// The hardware roof (see the package documentation): the same work
	// against the data sheet's peaks, the ones Nsight Compute's
	// throughput percentages hold it against. HWPeakGBps is the DRAM
	// bandwidth (Hardware.DRAMGBps); HWPeakTFLOPs is SMs x FLOPsPerClock
	// of DType x ClockMHz. HWMemoryShare is GBps / HWPeakGBps,
	// HWComputeShare TFLOPs / HWPeakTFLOPs, HWShare the larger one. A
	// figure that cannot be had is 0 and HWMissing says why; HWShare is 0
	// whenever a share it needs is missing.
	HWPeakGBps     float64 `json:"hw_peak_gbps,omitempty"`
	HWPeakTFLOPs   float64 `json:"hw_peak_tflops,omitempty"`
	HWMemoryShare  float64 `json:"hw_memory_share,omitempty"`
	HWComputeShare float64 `json:"hw_compute_share,omitempty"`
	HWShare        float64 `json:"hw_share,omitempty"`
	HWMissing      string  `json:"hw_missing,omitempty"`
	// ClockMHz is the SM clock the hardware compute roof is taken at, and
	// ClockSource where it came from (PickClock): the clock probe's
	// (ClockProbe), NVML's mean (ClockNVML), or the device's maximum,
	// assumed (ClockMax; ClockAssumed is then set too). 0 and "" when
	// none is known.
	ClockMHz     float64 `json:"clock_mhz,omitempty"`
	ClockSource  string  `json:"clock_source,omitempty"`
	ClockAssumed bool    `json:"clock_assumed,omitempty"`
}

// ErrNoWork is returned by Place for work with neither bytes nor FLOPs.
var ErrNoWork = errors.New("no bytes and no FLOPs")

// Place places work on the roofline of peaks, its FLOPs held against the
// peak of dtype (see PeakDType), and on the hardware roof of peaks.HW
// where it has one (the HW fields of Point). Work with FLOPs and no
// bytes, a time that is not positive, negative work, or peaks without a
// copy bandwidth are errors.
func Place(p *Peaks, dtype string, w Work) (Point, error) {
	switch {
	case p == nil || !(p.CopyGBps > 0):
		return Point{}, errors.New("roofline: no copy bandwidth among the peaks")
	case !(w.NS > 0) || math.IsInf(w.NS, 0):
		return Point{}, fmt.Errorf("roofline: replay time %g ns: want a positive time", w.NS)
	case w.Bytes < 0 || w.FLOPs < 0 || math.IsNaN(w.Bytes) || math.IsNaN(w.FLOPs):
		return Point{}, fmt.Errorf("roofline: work %g bytes, %g FLOPs: want non-negative numbers", w.Bytes, w.FLOPs)
	case w.Bytes == 0 && w.FLOPs == 0:
		return Point{}, fmt.Errorf("roofline: %w", ErrNoWork)
	case w.Bytes == 0:
		return Point{}, fmt.Errorf("roofline: %g FLOPs and no bytes: no arithmetic intensity", w.FLOPs)
	}
	pt := Point{NS: w.NS, PeakGBps: p.CopyGBps,
		GBps: w.Bytes / w.NS, TFLOPs: w.FLOPs / w.NS / 1e3}
	pt.MemoryShare = pt.GBps / pt.PeakGBps
	if w.FLOPs > 0 {
		pt.DType = dtype
		pt.AI = w.FLOPs / w.Bytes
		memRoof := pt.AI * pt.PeakGBps / 1e3 // TFLOP/s the copy bandwidth allows
		if peak, ok := p.TFLOPs[dtype]; ok && peak > 0 {
			pt.PeakTFLOPs = peak
			pt.ComputeShare = pt.TFLOPs / peak
			pt.RoofTFLOPs = min(peak, memRoof)
		} else {
			pt.NoComputePeak = true
			pt.RoofTFLOPs = memRoof
		}
	}
	pt.Share = max(pt.MemoryShare, pt.ComputeShare)
	pt.Bound = Classify(pt.Share, pt.MemoryShare, pt.ComputeShare, w.NS)
	placeHW(&pt, p.HW, dtype, w)
	return pt, nil
}

// Classify is the bound rule (see the package documentation): Latency when
// share < LatencyShare, or ns < ShortNS and share < ShortShare; else
// Compute when computeShare >= memoryShare, else Memory.
func Classify(share, memoryShare, computeShare, ns float64) Bound {
	switch {
	case share < LatencyShare, ns < ShortNS && share < ShortShare:
		return Latency
	case computeShare >= memoryShare:
		return Compute
	}
	return Memory
}

// RidgeAI is the arithmetic intensity at which the copy bandwidth reaches
// a peak of peakTFLOPs: peak / bandwidth, in FLOPs per byte.
func RidgeAI(peakTFLOPs, copyGBps float64) float64 {
	if !(copyGBps > 0) {
		return 0
	}
	return peakTFLOPs * 1e3 / copyGBps
}
