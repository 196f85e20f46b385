package roofline

import (
	"errors"
	"fmt"
	"strings"

	"github.com/kreplay/kreplay/replay"
)

// Hardware is the device's data-sheet side: the roofs Nsight Compute holds
// throughput against, beside the peaks kreplay measures. It travels with
// the peaks (cached with them, and in benchmark output as configuration
// lines).
type Hardware struct {
	// DRAMGBps is the device memory's peak bandwidth from NVML: maximum
	// memory clock x bus width x 2 (double data rate) / 8, over 1e9 (3352.3
	// on an H100 SXM: 2619 MHz, 5120 bits). Like Work.Bytes it counts
	// bytes read and written together. 0 when NVML did not say.
	DRAMGBps float64 `json:"dram_gbps,omitempty"`
	// MaxMemClockMHz and BusWidthBits are the NVML figures DRAMGBps comes
	// from (0 when read from configuration lines).
	MaxMemClockMHz int `json:"max_mem_clock_mhz,omitempty"`
	BusWidthBits   int `json:"bus_width_bits,omitempty"`
	// SMs is the number of streaming multiprocessors; CC the compute
	// capability ("9.0").
	SMs int    `json:"sms,omitempty"`
	CC  string `json:"cc,omitempty"`
	// MaxSMClockMHz is NVML's maximum SM clock: the clock assumed for a
	// replay whose own clock was not sampled. 0 when NVML did not say.
	MaxSMClockMHz float64 `json:"max_sm_clock_mhz,omitempty"`
	// Missing says which figures are missing, and why; "" when none is.
	Missing string `json:"missing,omitempty"`
}

// flopsPerClock are dense FLOPs per SM per SM clock cycle, per compute
// capability and dtype. They are DATA-SHEET CONSTANTS, NVIDIA's published
// peak rates divided by SMs x boost clock, not measured by kreplay:
//
//   - 9.0 (H100, H200; Hopper whitepaper): tensor cores f16 and bf16 4096
//     (132 SMs x 4096 x 1.83 GHz = 989.4 TFLOP/s on an H100 SXM), f8e4m3
//     and f8e5m2 8192, tf32 2048; f32 on the CUDA cores 256 (128 FP32
//     lanes, an FMA counted as 2 FLOPs);
//   - 8.0 (A100; Ampere whitepaper): tensor cores f16 and bf16 2048
//     (108 x 2048 x 1.41 GHz = 312 TFLOP/s), tf32 1024; f32 128.
//
// Other architectures and dtypes are left out rather than guessed: they
// get no hardware compute share.
var flopsPerClock = map[string]map[string]float64{
	"9.0": {"f16": 4096, "bf16": 4096, "f8e4m3": 8192, "f8e5m2": 8192, "tf32": 2048, "f32": 256},
	"8.0": {"f16": 2048, "bf16": 2048, "tf32": 1024, "f32": 128},
}

// FLOPsPerClock returns the data-sheet FLOPs per SM per clock for dtype
// (as PeakDType names it) on compute capability cc ("9.0"), or 0 and why
// there is none: an architecture or dtype kreplay has no data-sheet figure
// for.
func FLOPsPerClock(cc, dtype string) (float64, string) {
	rates, ok := flopsPerClock[cc]
	if !ok {
		if cc == "" {
			return 0, "no compute capability"
		}
		return 0, fmt.Sprintf("no data-sheet FLOP rate for compute capability %s", cc)
	}
	if r, ok := rates[dtype]; ok {
		return r, ""
	}
	return 0, fmt.Sprintf("no data-sheet %s FLOP rate for compute capability %s", dtype, cc)
}

// HardwareOf reads d's hardware figures: SMs and compute capability from
// CUDA, the DRAM bandwidth and the maximum SM clock from NVML (Missing
// says why when NVML is not there or does not answer).
func HardwareOf(d *replay.Device) *Hardware {
	h := &Hardware{SMs: d.SMs, CC: fmt.Sprintf("%d.%d", d.CC[0], d.CC[1])}
	if d.Meter == nil {
		h.Missing = "no NVML"
		if d.NVMLErr != nil {
			h.Missing += ": " + d.NVMLErr.Error()
		}
		return h
	}
	nv, err := d.Meter.Hardware()
	h.MaxMemClockMHz, h.BusWidthBits = int(nv.MaxMemClockMHz), int(nv.MemoryBusWidthBits)
	h.DRAMGBps = nv.DRAMBytesPerSecond() / 1e9
	h.MaxSMClockMHz = float64(nv.MaxSMClockMHz)
	h.Missing = h.missing()
	if err != nil {
		h.Missing = err.Error()
	}
	return h
}

// missing lists what of h the hardware roof lacks, "" when nothing.
func (h *Hardware) missing() string {
	var no []string
	if !(h.DRAMGBps > 0) {
		no = append(no, "DRAM bandwidth")
	}
	if h.SMs <= 0 {
		no = append(no, "SM count")
	}
	if h.CC == "" {
		no = append(no, "compute capability")
	}
	if !(h.MaxSMClockMHz > 0) {
		no = append(no, "maximum SM clock")
	}
	if len(no) == 0 {
		return ""
	}
	return "no " + strings.Join(no, ", ")
}

// validate checks hardware figures read from a cache file.
func (h *Hardware) validate() error {
	if h.DRAMGBps < 0 || h.MaxSMClockMHz < 0 || h.SMs < 0 || h.MaxMemClockMHz < 0 || h.BusWidthBits < 0 {
		return errors.New("hw: negative figures")
	}
	return nil
}

// Where the hardware roof's SM clock came from (Point.ClockSource).
const (
	// ClockProbe is the clock kreplay's probe measured on the GPU during
	// the replay: SM cycles (clock64) over %globaltimer's nanoseconds
	// (replay.Options.ClockProbe).
	ClockProbe = "probe"
	// ClockNVML is the mean of NVML's SM clock samples during the replay.
	ClockNVML = "nvml"
	// ClockMax is the device's maximum SM clock, assumed for a replay
	// whose clock was neither probed nor sampled.
	ClockMax = "max (assumed)"
)

// PickClock returns the SM clock to take the hardware compute roof at for
// w, and its source: the probe's (Work.ProbeClockMHz) over NVML's mean
// (Work.SMClockMHz) over the device's maximum (h.MaxSMClockMHz, assumed);
// 0 and "" when none is known. NVML's readings can stand far above the
// clock the work ran at (heavy GEMMs under the power cap), so a probed
// clock is preferred.
func PickClock(w Work, h *Hardware) (float64, string) {
	switch {
	case w.ProbeClockMHz > 0:
		return w.ProbeClockMHz, ClockProbe
	case w.SMClockMHz > 0:
		return w.SMClockMHz, ClockNVML
	case h != nil && h.MaxSMClockMHz > 0:
		return h.MaxSMClockMHz, ClockMax
	}
	return 0, ""
}

// placeHW adds the hardware roof's fields to pt (see Point): the memory
// share over h's DRAM bandwidth, the compute share over SMs x
// FLOPsPerClock(dtype) x the clock, and their larger one as HWShare when
// both that apply are known; HWMissing says what is not.
func placeHW(pt *Point, h *Hardware, dtype string, w Work) {
	if h == nil {
		pt.HWMissing = "no hardware figures among the peaks"
		return
	}
	var no []string
	if h.DRAMGBps > 0 {
		pt.HWPeakGBps = h.DRAMGBps
		pt.HWMemoryShare = pt.GBps / h.DRAMGBps
	} else {
		no = append(no, "no DRAM bandwidth")
	}
	pt.ClockMHz, pt.ClockSource = PickClock(w, h)
	pt.ClockAssumed = pt.ClockSource == ClockMax
	if w.FLOPs > 0 {
		rate, why := FLOPsPerClock(h.CC, dtype)
		switch {
		case why != "":
			no = append(no, why)
		case h.SMs <= 0:
			no = append(no, "no SM count")
		case !(pt.ClockMHz > 0):
			no = append(no, "no SM clock (not probed, none sampled, no maximum)")
		default:
			pt.HWPeakTFLOPs = float64(h.SMs) * rate * pt.ClockMHz * 1e6 / 1e12
			pt.HWComputeShare = pt.TFLOPs / pt.HWPeakTFLOPs
		}
	}
	if len(no) > 0 {
		pt.HWMissing = strings.Join(no, "; ")
		return
	}
	pt.HWShare = max(pt.HWMemoryShare, pt.HWComputeShare)
}
