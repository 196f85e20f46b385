package roofline

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"golang.org/x/perf/benchfmt"

	"github.com/kreplay/kreplay/replay"
)

// Peaks written as configuration lines ahead of a benchmark result read
// back through benchfmt, rounded to 0.1, with the measuring time.
func TestConfigRoundTrip(t *testing.T) {
	p := cachedPeaks()
	p.HW = nil // TestConfigHW has the hardware figures
	p.TFLOPs["f8e4m3"] = 1234.56
	p.TFLOPs["bf16"] = 800.04
	var b strings.Builder
	b.WriteString("gpu: NVIDIA H100 80GB HBM3\n")
	for _, c := range p.Config() {
		fmt.Fprintf(&b, "%s: %s\n", c.Key, c.Value)
	}
	b.WriteString("BenchmarkReplay/workload=w/sig=abc-16 \t 1 \t 1000 ns/op\n")
	text := b.String()
	for _, key := range []string{"peak-copy-gbps: 2000.0\n", "peak-f16-tflops: 800.0\n", "peak-bf16-tflops: 800.0\n",
		"peak-f32-tflops: 50.0\n", "peak-f8e4m3-tflops: 1234.6\n", "peaks-measured: 2026-11-25T10:00:00Z\n"} {
		if !strings.Contains(text, key) {
			t.Errorf("configuration lines lack %q:\n%s", key, text)
		}
	}
	// The order: copy, then DTypes' order.
	if i, j := strings.Index(text, "peak-f16"), strings.Index(text, "peak-f8e4m3"); i < 0 || j < i {
		t.Errorf("dtypes out of order:\n%s", text)
	}
	r := benchfmt.NewReader(strings.NewReader(text), "synthetic.bench")
	var items []replay.ConfigItem
	for r.Scan() {
		res, ok := r.Result().(*benchfmt.Result)
		if !ok {
			t.Fatalf("not a result: %v", r.Result())
		}
		for _, c := range res.Config {
			items = append(items, replay.ConfigItem{Key: c.Key, Value: string(c.Value)})
		}
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	got, err := FromConfig(items)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{"f16": 800, "bf16": 800, "f32": 50, "f8e4m3": 1234.6}
	if got.CopyGBps != 2000 || len(got.TFLOPs) != len(want) || !got.MeasuredAt.Equal(p.MeasuredAt) {
		t.Errorf("read back %+v", got)
	}
	for d, v := range want {
		if got.TFLOPs[d] != v {
			t.Errorf("%s: %g, want %g", d, got.TFLOPs[d], v)
		}
	}
	if s := got.Summary(); s != "copy 2000.0 GB/s (read + written), f16 800.0, bf16 800.0, f32 50.0, f8e4m3 1234.6 TFLOP/s, measured 2026-11-25T10:00:00Z; no hardware figures" {
		t.Errorf("summary %q", s)
	}
}

func TestFromConfigErrors(t *testing.T) {
	tests := []struct {
		items []replay.ConfigItem
		want  string
	}{
		{kv(KeyCopy, "fast"), `configuration peak-copy-gbps: "fast": want a positive rate`},
		{kv(KeyCopy, "-1"), `want a positive rate`},
		{kv(KeyCopy, "NaN"), `want a positive rate`},
		{kv(KeyCopy, "+Inf"), `want a positive rate`},
		{kv(KeyTFLOPs("bf16"), "800"), "GEMM peaks without peak-copy-gbps"},
		{kv(KeyCopy, "2000", "peak--tflops", "1"), "no dtype in the key"},
		{kv(KeyCopy, "2000", KeyMeasured, "yesterday"), `configuration peaks-measured: "yesterday": want an RFC 3339 time`},
	}
	for _, tt := range tests {
		p, err := FromConfig(tt.items)
		if p != nil || err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("FromConfig(%v) = %v, %v; want an error with %q", tt.items, p, err, tt.want)
		}
	}
	// No peaks at all is no error: outputs made before peaks were written.
	if p, err := FromConfig(kv("gpu", "x", "power-limit", "700W")); p != nil || err != nil {
		t.Errorf("no peak keys: %v, %v", p, err)
	}
	// Copy alone is enough.
	p, err := FromConfig(kv(KeyCopy, " 2500.5 "))
	if err != nil || p.CopyGBps != 2500.5 || len(p.TFLOPs) != 0 || !p.MeasuredAt.Equal(time.Time{}) {
		t.Errorf("copy alone: %+v, %v", p, err)
	}
}

// kv makes configuration items of keys and values in turn.
func kv(kvs ...string) []replay.ConfigItem {
	var items []replay.ConfigItem
	for i := 0; i+1 < len(kvs); i += 2 {
		items = append(items, replay.ConfigItem{Key: kvs[i], Value: kvs[i+1]})
	}
	return items
}
