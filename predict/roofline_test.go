package predict

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kreplay/kreplay/replay"
	"github.com/kreplay/kreplay/roofline"
	"github.com/kreplay/kreplay/signatures"
)

// synthPeakLines are SYNTHETIC peaks, round numbers of an H100's order,
// not a measurement, as bench.WritePeaks writes them ahead of the results.
const synthPeakLines = `kreplay peaks: cached in /nowhere/peaks-GPU-synthetic.json
peak-copy-gbps: 3000.0
peak-f16-tflops: 800.0
peak-bf16-tflops: 800.0
peak-f32-tflops: 60.0
peaks-measured: 2026-11-25T10:00:00Z
`

// recordedWithPeaks is the REAL recorded H100 output of BLOOM-560M
// prefill (testdata/h100-bloom-560m_prefill.unlabelled.txt, 6 runs of every
// signature) with the SYNTHETIC peaks above put in front of it.
func recordedWithPeaks(t *testing.T, peaks string) Input {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", unlabelledPrefill))
	if err != nil {
		t.Fatal(err)
	}
	return input("h100-bloom-560m_prefill+synthetic-peaks.bench", peaks+string(data))
}

// The recorded output, with SYNTHETIC peaks added: every measured
// signature but the host copies is placed (all have GB/s), with the arithmetic of the GEMM
// and the elementwise add checked by hand; the predicted time splits by
// bound; the text and the roofline plot show them.
func TestRooflineRecorded(t *testing.T) {
	set := prefillSet(t)
	p, err := Report([]Input{recordedWithPeaks(t, synthPeakLines)}, []*signatures.Set{set}, ReportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Workloads) != 1 || len(p.Warnings) > 0 {
		t.Fatalf("%d workloads, warnings %q", len(p.Workloads), p.Warnings)
	}
	wp := p.Workloads[0]
	if wp.Peaks == nil || wp.Peaks.CopyGBps != 3000 || wp.Peaks.TFLOPs["f16"] != 800 {
		t.Fatalf("peaks %+v", wp.Peaks)
	}
	bySig := map[string]*SigPrediction{}
	for _, s := range wp.Sigs {
		bySig[s.ID] = s
		host := s.Class == signatures.ClassMemcpy && set.ByID(s.ID).Memory.Kind != signatures.DtoD
		if (s.Roofline == nil) != host || host && !strings.Contains(s.NotPlaced, "its roof is the host link") {
			t.Errorf("%s %s: placed %v (%s)", s.ID, s.Label, s.Roofline != nil, s.NotPlaced)
		}
	}
	// The LM head, mm f16[2048,1024] x f16[1024,250880]: 2mnk FLOPs over
	// the three f16 operands' bytes.
	lm := bySig["f400919612b9"]
	if lm == nil || lm.Roofline == nil {
		t.Fatal("the LM head GEMM is not placed")
	}
	const m, k, n = 2048, 1024, 250880
	ai := 2.0 * m * k * n / (2 * (m*k + k*n + m*n))
	pt := lm.Roofline
	if pt.DType != "f16" || math.Abs(pt.AI/ai-1) > 0.002 || pt.Bound != roofline.Compute || pt.PeakTFLOPs != 800 {
		t.Errorf("LM head: %+v, want f16, AI %.1f, compute bound", pt, ai)
	}
	if want := 2.0 * m * k * n / lm.ReplayNS.Center / 1e3; math.Abs(pt.TFLOPs/want-1) > 0.002 || math.Abs(pt.ComputeShare-want/800) > 0.002 {
		t.Errorf("LM head: %.1f TFLOP/s (%.3f of the peak), want %.1f", pt.TFLOPs, pt.ComputeShare, want)
	}
	// add f16[4,16,512,512] + f16[4,1,512,512]: f32 peak, memory bound
	// (about 2.6 TB/s recorded, warm).
	add := bySig["ead9ce6de968"].Roofline
	if add == nil || add.DType != "f32" || add.Bound != roofline.Memory || math.Abs(add.MemoryShare-add.GBps/3000) > 1e-9 || add.MemoryShare < 0.8 {
		t.Errorf("add: %+v", add)
	}
	var share float64
	var n2 int
	for _, b := range wp.ByBound {
		share += b.Share
		n2 += b.Signatures
	}
	if math.Abs(share-1) > 1e-9 || n2 != wp.Measured {
		t.Errorf("by bound %+v: shares sum to %g, %d signatures of %d", wp.ByBound, share, n2, wp.Measured)
	}
	if _, err := json.Marshal(p); err != nil {
		t.Errorf("JSON: %v", err)
	}
	var text bytes.Buffer
	if err := p.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	out := text.String()
	for _, want := range []string{
		"roofline: peaks copy 3000.0 GB/s (read + written), f16 800.0, bf16 800.0, f32 60.0 TFLOP/s, measured 2026-11-25T10:00:00Z",
		roofline.Rule, "predicted time by bound: memory", "top 15 signatures by predicted time on the roofline",
		"f400919612b9  gemm", "share of roof",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	t.Logf("roofline part of the report:\n%s", out[strings.Index(out, "roofline: peaks"):])

	dir := t.TempDir()
	files, err := p.WritePlots(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range files {
		names = append(names, filepath.Base(f))
	}
	slices.Sort(names)
	if len(names) != 6 || !slices.Contains(names, "bloom-560m_prefill-roofline.svg") || !slices.Contains(names, "bloom-560m_prefill-roofline.png") {
		t.Fatalf("plots %v", names)
	}
	svg, err := os.ReadFile(filepath.Join(dir, "bloom-560m_prefill-roofline.svg"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<svg", "roof f16 (800 TFLOP/s)", "roof f32 (60 TFLOP/s)", "compute bound", "memory bound", "arithmetic intensity"} {
		if !bytes.Contains(svg, []byte(want)) {
			t.Errorf("roofline SVG lacks %q", want)
		}
	}
	png, _ := os.ReadFile(filepath.Join(dir, "bloom-560m_prefill-roofline.png"))
	if !bytes.HasPrefix(png, []byte("\x89PNG\r\n\x1a\n")) {
		t.Error("the roofline PNG is not a PNG")
	}
}

// Without peak lines there is no roofline, and no plot of it; a peak line
// that does not parse is a warning that names the input, and the report
// goes on without a roofline.
func TestRooflineWithoutPeaks(t *testing.T) {
	set := prefillSet(t)
	for _, tc := range []struct{ name, peaks, warn string }{
		{"none", "", ""},
		{"bad", "peak-copy-gbps: fast\n", `h100-bloom-560m_prefill+synthetic-peaks.bench: configuration peak-copy-gbps: "fast": want a positive rate: those peaks are not used`},
		{"no copy", "peak-bf16-tflops: 800\n", "GEMM peaks without peak-copy-gbps"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Report([]Input{recordedWithPeaks(t, tc.peaks)}, []*signatures.Set{set}, ReportOptions{})
			if err != nil {
				t.Fatal(err)
			}
			wp := p.Workloads[0]
			if wp.Peaks != nil || len(wp.ByBound) > 0 || wp.Sigs[0].Roofline != nil {
				t.Errorf("roofline without peaks: %+v %+v", wp.Peaks, wp.ByBound)
			}
			if tc.warn == "" && len(p.Warnings) > 0 || tc.warn != "" && (len(p.Warnings) != 1 || !strings.Contains(p.Warnings[0], tc.warn)) {
				t.Errorf("warnings %q, want %q once", p.Warnings, tc.warn)
			}
			var text bytes.Buffer
			p.WriteText(&text)
			if strings.Contains(text.String(), "roofline") {
				t.Error("the report shows a roofline without peaks")
			}
			files, err := p.WritePlots(t.TempDir())
			if err != nil || len(files) != 4 {
				t.Errorf("%d plots (%v), want 4 without the roofline", len(files), err)
			}
		})
	}
}

// Two outputs with different peaks: the first ones are used, with a
// warning.
func TestRooflineDifferentPeaks(t *testing.T) {
	set := prefillSet(t)
	other := strings.Replace(synthPeakLines, "peak-copy-gbps: 3000.0", "peak-copy-gbps: 2500.0", 1)
	a, b := recordedWithPeaks(t, synthPeakLines), recordedWithPeaks(t, other)
	b.Name = "other.bench"
	p, err := Report([]Input{a, b}, []*signatures.Set{set}, ReportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if wp := p.Workloads[0]; wp.Peaks == nil || wp.Peaks.CopyGBps != 3000 {
		t.Errorf("peaks %+v, want the first input's", wp.Peaks)
	}
	if len(p.Warnings) != 1 || !strings.Contains(p.Warnings[0], "other.bench: bloom-560m_prefill: other peaks than the first read") {
		t.Errorf("warnings %q", p.Warnings)
	}
}

// Flow's output carries the peaks it was given as configuration lines,
// and the report reads them back.
func TestFlowPeaksRoundTrip(t *testing.T) {
	set := prefillSet(t)
	peaks := &roofline.Peaks{CopyGBps: 2999.96, TFLOPs: map[string]float64{"f16": 700, "f8e4m3": 1400.04}} // SYNTHETIC
	fr := &FlowResult{Set: set, GPU: "g", Config: append([]replay.ConfigItem{{Key: "gpu", Value: "g"}}, peaks.Config()...)}
	for _, s := range set.Signatures {
		if s.PartOf == "" && s.Class == signatures.ClassGEMM {
			fr.Entries = append(fr.Entries, replay.Entry{ID: s.ID, Result: &replay.Result{Stats: replay.Stats{MedianNS: 1000}, ID: s.ID}})
		}
	}
	var out bytes.Buffer
	if err := fr.WriteBench(&out, "pkg"); err != nil {
		t.Fatal(err)
	}
	rs, err := ReadResults([]Input{{Name: "flow.bench", Reader: &out}})
	if err != nil {
		t.Fatal(err)
	}
	got := rs.Workloads[0].Peaks
	if got == nil || got.CopyGBps != 3000 || got.TFLOPs["f16"] != 700 || got.TFLOPs["f8e4m3"] != 1400 || len(got.TFLOPs) != 2 {
		t.Errorf("read back %+v", got)
	}
}

// The hardware roof from the configuration lines: the device's SMs and
// compute capability, the DRAM bandwidth and maximum SM clock (an H100
// SXM's NVML figures), and the REAL recorded output with a SYNTHETIC
// sm-MHz metric of 1552 MHz added to the LM head's runs; the other
// signatures have none and take the maximum, assumed.
func TestRooflineHardware(t *testing.T) {
	set := prefillSet(t)
	data, err := os.ReadFile(filepath.Join("testdata", unlabelledPrefill))
	if err != nil {
		t.Fatal(err)
	}
	text0 := "gpu-sms: 132\ngpu-cc: 9.0\n" + synthPeakLines + "peak-dram-gbps: 3352.3\npeak-sm-clock-mhz: 1980\n" +
		strings.ReplaceAll(string(data), "707.8 TFLOP/s\n", "707.8 TFLOP/s\t1552 sm-MHz\n")
	in := input("h100-bloom-560m_prefill+synthetic-hardware.bench", text0)
	p, err := Report([]Input{in}, []*signatures.Set{set}, ReportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wp := p.Workloads[0]
	if h := wp.Peaks.HW; h == nil || h.DRAMGBps != 3352.3 || h.SMs != 132 || h.CC != "9.0" || h.MaxSMClockMHz != 1980 || h.Missing != "" {
		t.Fatalf("hardware %+v", wp.Peaks.HW)
	}
	bySig := map[string]*SigPrediction{}
	for _, s := range wp.Sigs {
		bySig[s.ID] = s
	}
	// LM head: 2mnk FLOPs over 132 SMs x 4096 x 1552 MHz.
	lm := bySig["f400919612b9"].Roofline
	want := 2.0 * 2048 * 1024 * 250880 / (bySig["f400919612b9"].ReplayNS.Center * 1e-9) / (132 * 4096 * 1552e6)
	if lm.ClockMHz != 1552 || lm.ClockAssumed || math.Abs(lm.HWComputeShare/want-1) > 0.002 || lm.HWShare != lm.HWComputeShare {
		t.Errorf("LM head: hw share %.4f at %g MHz (assumed %v), want %.4f at 1552", lm.HWShare, lm.ClockMHz, lm.ClockAssumed, want)
	}
	add := bySig["ead9ce6de968"].Roofline
	if !add.ClockAssumed || add.ClockMHz != 1980 || math.Abs(add.HWMemoryShare-add.GBps/3352.3) > 1e-9 || add.HWMissing != "" {
		t.Errorf("add: %+v", add)
	}
	var text bytes.Buffer
	if err := p.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"hw %", "SM MHz", "1552 ", "1980 max", "hardware: DRAM 3352.3 GB/s"} {
		if !strings.Contains(text.String(), s) {
			t.Errorf("report lacks %q", s)
		}
	}
}
