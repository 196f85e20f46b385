package roofline

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/kreplay/kreplay/energy"
	"github.com/kreplay/kreplay/internal/launch"
	"github.com/kreplay/kreplay/replay"
	"github.com/kreplay/kreplay/signatures"
)

// h100HW are an H100 SXM's hardware figures as NVML and CUDA give them:
// 2619 MHz x 5120 bits x 2 / 8 = 3352.32 GB/s, 132 SMs, cc 9.0, 1980 MHz.
func h100HW() *Hardware {
	return &Hardware{DRAMGBps: 3352.32, MaxMemClockMHz: 2619, BusWidthBits: 5120, SMs: 132, CC: "9.0", MaxSMClockMHz: 1980}
}

// The hardware roof of signatures an H100 replayed and Nsight Compute
// profiled (results/h100/roofline-whatif: operand bytes and replay times
// of that run, and its measured copy bandwidth and peaks). The clocks are
// not from that run: 1552 MHz for the LM head is the clock issue 20's
// arithmetic takes, the mul's 1755 MHz is SYNTHETIC. The bound stays
// Classify's of the measured roof.
func TestPlaceHW(t *testing.T) {
	p := &Peaks{CopyGBps: 3001.6, TFLOPs: map[string]float64{"f16": 761.7, "f32": 50.9}, HW: h100HW()}
	lmHead := 2.0 * 2048 * 1024 * 250880
	tests := []struct {
		name                    string
		dtype                   string
		w                       Work
		mem, comp, share, clock float64
		assumed                 bool
		missing                 string
	}{
		{"mul", "f32", Work{Bytes: 3 * 4 * 512 * 4096 * 2, FLOPs: 4 * 512 * 4096, NS: 20.00e3, SMClockMHz: 1755},
			0.7507, 0.0071, 0.7507, 1755, false, ""}, // 75.0% in the README: its 20.00 µs is rounded
		{"copy_ f16 to f32", "", Work{Bytes: 4 * 16 * 512 * 512 * (2 + 4), NS: 36.35e3},
			0.826, 0, 0.826, 1980, true, ""},
		{"LM-head mm", "f16", Work{Bytes: 2 * (2048*1024 + 1024*250880 + 2048*250880), FLOPs: lmHead, NS: 1481.28e3, SMClockMHz: 1552},
			0.311, 0.8465, 0.8465, 1552, false, ""},
		{"LM-head mm, clock not sampled", "f16", Work{Bytes: 2 * (2048*1024 + 1024*250880 + 2048*250880), FLOPs: lmHead, NS: 1481.28e3},
			0.311, 0.8465 * 1552 / 1980, 0.8465 * 1552 / 1980, 1980, true, ""},
		{"f64 elementwise: no data-sheet rate", "f64", Work{Bytes: 1e6, FLOPs: 1e5, NS: 1e3, SMClockMHz: 1755},
			0.298, 0, 0, 1755, false, "no data-sheet f64 FLOP rate for compute capability 9.0"},
	}
	for _, tt := range tests {
		pt, err := Place(p, tt.dtype, tt.w)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if math.Abs(pt.HWMemoryShare-tt.mem) > 0.0005 || math.Abs(pt.HWComputeShare-tt.comp) > 0.0005 ||
			math.Abs(pt.HWShare-tt.share) > 0.0005 || pt.ClockMHz != tt.clock || pt.ClockAssumed != tt.assumed ||
			!strings.Contains(pt.HWMissing, tt.missing) || (tt.missing == "") != (pt.HWMissing == "") {
			t.Errorf("%s: hw memory %.4f, compute %.4f, share %.4f at %g MHz (assumed %v), missing %q; want %.4f, %.4f, %.4f at %g (%v), %q",
				tt.name, pt.HWMemoryShare, pt.HWComputeShare, pt.HWShare, pt.ClockMHz, pt.ClockAssumed, pt.HWMissing,
				tt.mem, tt.comp, tt.share, tt.clock, tt.assumed, tt.missing)
		}
		if pt.HWPeakGBps != 3352.32 {
			t.Errorf("%s: hw peak %g GB/s", tt.name, pt.HWPeakGBps)
		}
	}
	// The bound stays the measured roof's: the LM head against 761.7
	// TFLOP/s is compute bound at 93.3%.
	pt, _ := Place(p, "f16", tests[2].w)
	if pt.Bound != Compute || math.Abs(pt.Share-0.933) > 0.0005 || math.Abs(pt.HWPeakTFLOPs-839.1) > 0.05 {
		t.Errorf("LM head: %s at %.4f of the measured roof, hw peak %.2f TFLOP/s", pt.Bound, pt.Share, pt.HWPeakTFLOPs)
	}
}

// Without some hardware figure there is no hardware share, and the point
// says why; the measured roof places it all the same.
func TestPlaceHWMissing(t *testing.T) {
	gemm := Work{Bytes: 3 * 4096 * 4096 * 2, FLOPs: 2 * 4096 * 4096 * 4096, NS: 250e3, SMClockMHz: 1410}
	tests := []struct {
		name      string
		hw        *Hardware
		w         Work
		missing   string
		mem, comp bool // a hardware memory, compute share is there
	}{
		{"no figures", nil, gemm, "no hardware figures among the peaks", false, false},
		{"unknown architecture", &Hardware{DRAMGBps: 1000, SMs: 100, CC: "12.0", MaxSMClockMHz: 2000}, gemm,
			"no data-sheet FLOP rate for compute capability 12.0", true, false},
		{"no compute capability", &Hardware{DRAMGBps: 1000, SMs: 100, MaxSMClockMHz: 2000}, gemm, "no compute capability", true, false},
		{"no DRAM", &Hardware{SMs: 132, CC: "9.0", MaxSMClockMHz: 1980}, gemm, "no DRAM bandwidth", false, true},
		{"no SM count", &Hardware{DRAMGBps: 2039, CC: "8.0"}, gemm, "no SM count", true, false},
		{"no clock", &Hardware{DRAMGBps: 2039, SMs: 108, CC: "8.0"}, Work{Bytes: gemm.Bytes, FLOPs: gemm.FLOPs, NS: gemm.NS},
			"no SM clock", true, false},
	}
	for _, tt := range tests {
		p := synthPeaks()
		p.HW = tt.hw
		pt, err := Place(p, "bf16", tt.w)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if pt.HWShare != 0 || !strings.Contains(pt.HWMissing, tt.missing) ||
			(pt.HWMemoryShare > 0) != tt.mem || (pt.HWComputeShare > 0) != tt.comp || pt.Bound != Compute {
			t.Errorf("%s: %+v; want no hw share, missing %q", tt.name, pt, tt.missing)
		}
	}
	// A copy needs no compute roof: the DRAM alone gives its share.
	p := synthPeaks()
	p.HW = &Hardware{DRAMGBps: 1000, CC: "12.0"}
	pt, err := Place(p, "", Work{Bytes: 1e6, NS: 2e3})
	if err != nil || pt.HWShare != 0.5 || pt.HWMissing != "" {
		t.Errorf("copy on an unknown architecture: %+v, %v", pt, err)
	}
}

// The data-sheet table: sm_90 and sm_80 rates, nothing else.
func TestFLOPsPerClock(t *testing.T) {
	tests := []struct {
		cc, dtype string
		want      float64
	}{
		{"9.0", "f16", 4096}, {"9.0", "bf16", 4096}, {"9.0", "f8e4m3", 8192}, {"9.0", "f8e5m2", 8192},
		{"9.0", "tf32", 2048}, {"9.0", "f32", 256}, {"8.0", "f16", 2048}, {"8.0", "bf16", 2048},
		{"8.0", "tf32", 1024}, {"8.0", "f32", 128},
		{"8.0", "f8e4m3", 0}, {"9.0", "f64", 0}, {"8.9", "f16", 0}, {"10.0", "bf16", 0}, {"", "f16", 0},
	}
	for _, tt := range tests {
		got, why := FLOPsPerClock(tt.cc, tt.dtype)
		if got != tt.want || (got == 0) != (why != "") {
			t.Errorf("FLOPsPerClock(%q, %q) = %g, %q; want %g", tt.cc, tt.dtype, got, why, tt.want)
		}
	}
	// 132 SMs x 4096 x 1.83 GHz: the H100 SXM data sheet's 989.4 TFLOP/s.
	if r, _ := FLOPsPerClock("9.0", "f16"); math.Abs(132*r*1.83e9/1e12-989.4) > 0.1 {
		t.Errorf("H100 f16: %.1f TFLOP/s", 132*r*1.83e9/1e12)
	}
}

// The hardware figures travel as configuration lines: KeyDRAM and
// KeySMClock from Config, the SM count and compute capability from the
// device's own lines; output without them reads with no hardware roof,
// and output with only the device's lines (before kreplay wrote the
// hardware roof) says what is missing.
func TestConfigHW(t *testing.T) {
	p := cachedPeaks()
	items := append(kv("gpu", "NVIDIA H100 80GB HBM3", KeySMs, "132", KeyCC, "9.0"), p.Config()...)
	var text []string
	for _, it := range items {
		text = append(text, fmt.Sprintf("%s: %s", it.Key, it.Value))
	}
	all := strings.Join(text, "\n")
	for _, want := range []string{"peak-dram-gbps: 3352.3", "peak-sm-clock-mhz: 1980"} {
		if !strings.Contains(all, want) {
			t.Errorf("configuration lacks %q:\n%s", want, all)
		}
	}
	got, err := FromConfig(items)
	if err != nil {
		t.Fatal(err)
	}
	want := Hardware{DRAMGBps: 3352.3, SMs: 132, CC: "9.0", MaxSMClockMHz: 1980}
	if got.HW == nil || *got.HW != want {
		t.Fatalf("read back %+v, want %+v", got.HW, want)
	}
	if s := got.Summary(); !strings.HasSuffix(s, "; hardware: DRAM 3352.3 GB/s (read + written), 132 SMs, cc 9.0, max SM clock 1980 MHz") {
		t.Errorf("summary %q", s)
	}
	pt, err := Place(got, "f32", Work{Bytes: 50331648, FLOPs: 2097152, NS: 20e3})
	if err != nil || math.Abs(pt.HWShare-0.7507) > 0.0005 || !pt.ClockAssumed || pt.ClockMHz != 1980 {
		t.Errorf("mul from the configuration: %+v, %v", pt, err)
	}

	// An old output: the device's lines, measured peaks, no hardware lines.
	old, err := FromConfig(kv(KeySMs, "132", KeyCC, "9.0", KeyCopy, "2972.3", KeyTFLOPs("f16"), "768.2"))
	if err != nil || old.HW == nil || old.HW.SMs != 132 || old.HW.CC != "9.0" || old.HW.DRAMGBps != 0 ||
		old.HW.Missing != "no peak-dram-gbps, peak-sm-clock-mhz lines (written by a kreplay without the hardware roof, or without NVML)" {
		t.Fatalf("old output: %+v, %v", old.HW, err)
	}
	pt, err = Place(old, "f16", Work{Bytes: 1e8, FLOPs: 1e12, NS: 1.5e6})
	if err != nil || pt.HWShare != 0 || pt.HWMemoryShare != 0 || !strings.Contains(pt.HWMissing, "no DRAM bandwidth") ||
		!strings.Contains(pt.HWMissing, "no SM clock") || pt.Share == 0 {
		t.Errorf("old output placed: %+v, %v", pt, err)
	}
	// Peaks alone, as a test might write them: no hardware figures at all.
	bare, err := FromConfig(kv(KeyCopy, "2000"))
	if err != nil || bare.HW != nil || !strings.HasSuffix(bare.Summary(), "; no hardware figures") {
		t.Errorf("bare peaks: %+v, %v", bare, err)
	}
	// Device lines that do not parse count as missing; hardware peaks that
	// do not parse are errors.
	odd, err := FromConfig(kv(KeySMs, "many", KeyCC, "9", KeyCopy, "2000", KeyDRAM, "3352.3"))
	if err != nil || odd.HW.SMs != 0 || odd.HW.CC != "" || odd.HW.Missing != "no peak-sm-clock-mhz, gpu-sms, gpu-cc lines" {
		t.Errorf("odd device lines: %+v, %v", odd.HW, err)
	}
	for _, k := range []string{KeyDRAM, KeySMClock} {
		if _, err := FromConfig(kv(KeyCopy, "2000", k, "fast")); err == nil || !strings.Contains(err.Error(), k) {
			t.Errorf("%s: fast: %v", k, err)
		}
	}
}

// PickClock prefers the probe's clock to NVML's mean to the device's
// maximum, and names its source.
func TestPickClock(t *testing.T) {
	h := h100HW()
	for _, tt := range []struct {
		name   string
		w      Work
		h      *Hardware
		want   float64
		source string
	}{
		{"probe over NVML", Work{ProbeClockMHz: 1536, SMClockMHz: 1980}, h, 1536, ClockProbe},
		{"probe alone", Work{ProbeClockMHz: 1658}, h, 1658, ClockProbe},
		{"probe without hardware", Work{ProbeClockMHz: 1658}, nil, 1658, ClockProbe},
		{"NVML without probe", Work{SMClockMHz: 1980}, h, 1980, ClockNVML},
		{"negative probe ignored", Work{ProbeClockMHz: -1, SMClockMHz: 1755}, h, 1755, ClockNVML},
		{"maximum, assumed", Work{}, h, 1980, ClockMax},
		{"nothing known", Work{}, &Hardware{SMs: 132, CC: "9.0"}, 0, ""},
		{"no hardware", Work{}, nil, 0, ""},
	} {
		got, source := PickClock(tt.w, tt.h)
		if got != tt.want || source != tt.source {
			t.Errorf("%s: %g %q, want %g %q", tt.name, got, source, tt.want, tt.source)
		}
	}
	// The hardware compute roof is taken at the picked clock: the LM-head
	// mm's share at the probe's 1552 MHz, not NVML's 1980.
	lmHead := Work{Bytes: 2 * (2048*1024 + 1024*250880 + 2048*250880), FLOPs: 2 * 2048 * 1024 * 250880, NS: 1481.28e3,
		ProbeClockMHz: 1552, SMClockMHz: 1980}
	p := synthPeaks()
	p.HW = h
	pt, err := Place(p, "f16", lmHead)
	if err != nil || pt.ClockMHz != 1552 || pt.ClockSource != ClockProbe || pt.ClockAssumed ||
		math.Abs(pt.HWPeakTFLOPs-132*4096*1552e6/1e12) > 1e-9 {
		t.Errorf("LM head: %v; clock %g %q (assumed %v), hw peak %g TFLOP/s", err, pt.ClockMHz, pt.ClockSource, pt.ClockAssumed, pt.HWPeakTFLOPs)
	}
}

// EntryRows takes each replay's clock from its probe, else its NVML
// summary, and the table prints the hardware share and the clock with
// its source, "max" where assumed.
func TestEntryRowsHW(t *testing.T) {
	set := &signatures.Set{Signatures: []*signatures.Signature{
		{ID: "mm", Class: signatures.ClassGEMM, GEMM: &signatures.GEMM{AType: "f16"}},
		{ID: "mul", Class: signatures.ClassElementwise},
		{ID: "probed", Class: signatures.ClassGEMM, GEMM: &signatures.GEMM{AType: "f16"}},
	}}
	lmWork := launch.Work{Bytes: 2 * (2048*1024 + 1024*250880 + 2048*250880), FLOPs: 2 * 2048 * 1024 * 250880}
	lmHead := &replay.Result{Work: lmWork, KernelMedianNS: 1481.28e3, GPU: &energy.Summary{Samples: 10, MeanSMClockMHz: 1552}}
	mul := &replay.Result{Work: launch.Work{Bytes: 3 * 4 * 512 * 4096 * 2, FLOPs: 4 * 512 * 4096}, KernelMedianNS: 20e3,
		ClockErr: "clock probe: timed out after 2s waiting for the stop flag"}
	// NVML said 1980 MHz; the probe measured 1552: the share is the probe's.
	probed := &replay.Result{Work: lmWork, KernelMedianNS: 1481.28e3, SMClockMHz: 1552, GPU: &energy.Summary{Samples: 10, MeanSMClockMHz: 1980}}
	p := synthPeaks()
	p.HW = h100HW()
	rows := EntryRows(p, set, []replay.Entry{{ID: "mm", Label: "mm", Result: lmHead}, {ID: "mul", Label: "mul", Result: mul},
		{ID: "probed", Label: "probed", Result: probed}})
	if len(rows) != 3 || rows[0].Point.ClockMHz != 1552 || rows[0].Point.ClockAssumed || rows[0].Point.ClockSource != ClockNVML ||
		!rows[1].Point.ClockAssumed || rows[1].Point.ClockSource != ClockMax || rows[1].ClockErr == "" || rows[0].ClockErr != "" ||
		rows[2].Point.ClockMHz != 1552 || rows[2].Point.ClockSource != ClockProbe || rows[2].Point.HWShare != rows[0].Point.HWShare {
		t.Fatalf("rows %+v", rows)
	}
	var b strings.Builder
	if err := WriteTable(&b, rows); err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + b.String())
	for _, want := range []string{"hw %", "SM MHz", "84.7%  1552 nvml", "75.1%  1980 max", "84.7%  1552 probe",
		"\nmul: no probed SM clock: clock probe: timed out after 2s waiting for the stop flag\n"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
	if !strings.Contains(Rule, "hw % = the same share against the hardware's roofs") {
		t.Errorf("rule: %s", Rule)
	}
}
