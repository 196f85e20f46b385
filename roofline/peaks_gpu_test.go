package roofline

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/kreplay/kreplay/internal/gputest"
	"github.com/kreplay/kreplay/replay"
)

// On a GPU: the peaks are in sane ranges for a data-center GPU of the
// Ampere generation or later (copy bandwidth over 100 GB/s, f16 and bf16
// over 50 TFLOP/s, f32 over 5 TFLOP/s and under bf16's), the second call
// reads them from the cache, a corrupt cache is measured over, and Refresh
// measures again. Without a GPU it skips (fails under
// KREPLAY_REQUIRE_GPU=1).
func TestGPUPeaks(t *testing.T) {
	var d *replay.Device
	gputest.Require(t, func() error {
		var err error
		d, err = replay.Open(0)
		return err
	})
	t.Cleanup(func() {
		if err := d.Close(); err != nil {
			t.Error(err)
		}
	})
	dir := t.TempDir()
	p, note, err := ForDevice(d, Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: %s\n%s", d.Name, note, p.Summary())
	for _, r := range p.Runs {
		t.Logf("%s: %s, best %.1f µs, median %.1f µs: %.1f", r.Peak, r.Call, r.BestNS/1e3, r.MedianNS/1e3, r.Rate)
	}
	if !strings.HasPrefix(note, "measured in") || !strings.Contains(note, "no cache yet") || !strings.Contains(note, "cached in "+dir) {
		t.Errorf("first call: note %q", note)
	}
	if p.CopyGBps < 100 || p.CopyGBps > 100e3 {
		t.Errorf("copy %.1f GB/s: want 100 to 100000", p.CopyGBps)
	}
	for _, dt := range []string{"f16", "bf16"} {
		if v := p.TFLOPs[dt]; v < 50 || v > 20e3 {
			t.Errorf("%s %.1f TFLOP/s: want 50 to 20000 (missing: %q)", dt, v, p.Missing[dt])
		}
	}
	if v := p.TFLOPs["f32"]; v < 5 || v >= p.TFLOPs["bf16"] {
		t.Errorf("f32 %.1f TFLOP/s: want over 5 and under bf16's %.1f (TF32 is off)", v, p.TFLOPs["bf16"])
	}
	if v, ok := p.TFLOPs["f8e4m3"]; ok {
		if v < p.TFLOPs["bf16"]/2 {
			t.Errorf("f8e4m3 %.1f TFLOP/s: want at least half of bf16's %.1f", v, p.TFLOPs["bf16"])
		}
	} else {
		t.Logf("no f8e4m3 peak: %s", p.Missing["f8e4m3"])
		if d.CC[0] > 8 && os.Getenv("KREPLAY_REQUIRE_FP8") == "1" {
			t.Errorf("compute capability %d.%d and no f8e4m3 peak", d.CC[0], d.CC[1])
		}
	}
	if len(p.Runs) != 1+len(p.TFLOPs) {
		t.Errorf("%d runs for %d peaks", len(p.Runs), 1+len(p.TFLOPs))
	}
	// The hardware figures: SMs and compute capability from CUDA; with
	// NVML, a DRAM bandwidth above the copy's and a maximum SM clock.
	if h := p.HW; h == nil || h.SMs != d.SMs || h.CC != fmt.Sprintf("%d.%d", d.CC[0], d.CC[1]) {
		t.Errorf("hardware %+v", p.HW)
	} else if d.Meter != nil && (h.DRAMGBps < p.CopyGBps || h.DRAMGBps > 100e3 || h.MaxSMClockMHz < 300 || h.Missing != "") {
		t.Errorf("hardware %+v: want a DRAM bandwidth above the copy's %.1f GB/s and a maximum SM clock", h, p.CopyGBps)
	}

	again, note, err := ForDevice(d, Options{Dir: dir})
	if err != nil || !strings.HasPrefix(note, "cached in ") || again.CopyGBps != p.CopyGBps || !again.MeasuredAt.Equal(p.MeasuredAt) {
		t.Errorf("second call: %v, %q, %v; want the cached peaks", again, note, err)
	}

	small := MeasureOptions{CopyBytes: 256 << 20, GEMMSize: 2048, Repeats: 3, Warmup: 1}
	path := CacheFile(dir, p.Identity)
	if err := os.WriteFile(path, []byte(`{"version": 1, "copy_gbps": `), 0o644); err != nil {
		t.Fatal(err)
	}
	fresh, note, err := ForDevice(d, Options{Dir: dir, Measure: small})
	if err != nil || !strings.Contains(note, "not a valid peaks cache") || !strings.Contains(note, "cached in ") {
		t.Errorf("corrupt cache: %v, %q, %v; want measured over", fresh, note, err)
	}
	if _, err := ReadCache(path, p.Identity); err != nil {
		t.Errorf("after measuring over the corrupt cache: %v", err)
	}
	if _, note, err := ForDevice(d, Options{Dir: dir, Mode: Refresh, Measure: small}); err != nil || !strings.Contains(note, "refresh asked for") {
		t.Errorf("refresh: %q, %v", note, err)
	}
	if off, note, err := ForDevice(d, Options{Mode: Off}); off != nil || err != nil || !strings.Contains(note, "KREPLAY_PEAKS=off") {
		t.Errorf("off: %v, %q, %v", off, note, err)
	}
}
