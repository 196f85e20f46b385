package roofline

import (
	"strings"
	"testing"

	"github.com/kreplay/kreplay/internal/launch"
	"github.com/kreplay/kreplay/replay"
	"github.com/kreplay/kreplay/signatures"
)

func TestPeakDType(t *testing.T) {
	half := signatures.Input{Type: "c10::Half", Shape: []int64{2, 3}, Strides: []int64{3, 1}}
	long := signatures.Input{Type: "long int", Shape: []int64{2}, Strides: []int64{1}}
	tests := []struct {
		name      string
		sig       signatures.Signature
		dtype, no string
	}{
		{"bf16 GEMM", signatures.Signature{Class: signatures.ClassGEMM, GEMM: &signatures.GEMM{AType: "bf16", BType: "bf16"}}, "bf16", ""},
		{"f8e5m2 GEMM", signatures.Signature{Class: signatures.ClassGEMM, GEMM: &signatures.GEMM{AType: "f8e5m2"}}, "f8e4m3", ""},
		{"captured GEMM", signatures.Signature{Class: signatures.ClassGEMM, Inputs: []signatures.Input{long, half}}, "f16", ""},
		{"attention", signatures.Signature{Class: signatures.ClassAttention, Tensor: &signatures.TensorParams{DTypes: []string{"bf16"}}}, "bf16", ""},
		{"GEMM without dtypes", signatures.Signature{Class: signatures.ClassGEMM}, "f32", ""},
		{"f16 elementwise", signatures.Signature{Class: signatures.ClassElementwise, Inputs: []signatures.Input{half}}, "f32", ""},
		{"softmax", signatures.Signature{Class: signatures.ClassSoftmax}, "f32", ""},
		{"device copy", signatures.Signature{Class: signatures.ClassMemcpy, Memory: &signatures.MemoryOp{Kind: signatures.DtoD}}, "", ""},
		{"memset", signatures.Signature{Class: signatures.ClassMemset, Memory: &signatures.MemoryOp{}}, "", ""},
		{"host copy", signatures.Signature{Class: signatures.ClassMemcpy, Memory: &signatures.MemoryOp{Kind: signatures.HtoD}}, "", "a HtoD copy"},
		{"collective", signatures.Signature{Class: signatures.ClassCollective, Collective: &signatures.Collective{}}, "", "interconnect"},
	}
	for _, tt := range tests {
		dt, why := PeakDType(&tt.sig)
		if dt != tt.dtype || (tt.no == "") != (why == "") || !strings.Contains(why, tt.no) {
			t.Errorf("%s: %q, %q; want %q, %q", tt.name, dt, why, tt.dtype, tt.no)
		}
	}
}

// EntryRows places replayed entries with SYNTHETIC peaks and leaves out
// parts and failures; WriteTable prints each placed one with its bound and
// each unplaced one with the reason.
func TestEntryRowsTable(t *testing.T) {
	set := &signatures.Set{Signatures: []*signatures.Signature{
		{ID: "gemm", Class: signatures.ClassGEMM, GEMM: &signatures.GEMM{AType: "bf16"}, Label: "mm bf16[4096,4096]"},
		{ID: "add", Class: signatures.ClassElementwise, Label: "add f16[1024,1024]"},
		{ID: "h2d", Class: signatures.ClassMemcpy, Memory: &signatures.MemoryOp{Kind: signatures.HtoD}, Label: "Memcpy HtoD"},
		{ID: "part", Class: signatures.ClassReduce, PartOf: "gemm"},
		{ID: "failed", Class: signatures.ClassOther},
	}}
	res := func(bytes, flops int64, ns float64) *replay.Result {
		return &replay.Result{Work: launch.Work{Bytes: bytes, FLOPs: flops}, KernelMedianNS: ns}
	}
	entries := []replay.Entry{
		{ID: "gemm", Class: signatures.ClassGEMM, Label: "mm bf16[4096,4096]", Result: res(3*4096*4096*2, 2*4096*4096*4096, 250e3)},
		{ID: "add", Class: signatures.ClassElementwise, Label: "add f16[1024,1024]", Result: res(1<<20, 1<<18, 2500)},
		{ID: "h2d", Class: signatures.ClassMemcpy, Label: "Memcpy HtoD", Result: res(1<<20, 0, 40e3)},
		{ID: "part", PartOf: "gemm", Result: res(1, 1, 1)},
		{ID: "failed", Err: "boom"},
		{ID: "stranger", Label: "not in the set", Result: res(1, 0, 1)},
	}
	rows := EntryRows(synthPeaks(), set, entries)
	if len(rows) != 4 {
		t.Fatalf("%d rows, want 4: %+v", len(rows), rows)
	}
	if p := rows[0].Point; p == nil || p.Bound != Compute || p.DType != "bf16" {
		t.Errorf("gemm: %+v", rows[0])
	}
	if p := rows[1].Point; p == nil || p.Bound != Latency || p.DType != "f32" {
		t.Errorf("add: %+v", rows[1])
	}
	if rows[2].Point != nil || !strings.Contains(rows[2].Why, "host link") || rows[3].Why != "not in the set" {
		t.Errorf("unplaced: %+v %+v", rows[2], rows[3])
	}
	var b strings.Builder
	if err := WriteTable(&b, rows); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"share of roof", "compute", "latency", "not placed: a HtoD copy: its roof is the host link",
		"800 TFLOP/s", "68.7%", "250.00µs", "mm bf16[4096,4096]"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(Rule, "latency under 10% of the roof, or under 50% for a replay under 5 µs") {
		t.Errorf("rule: %s", Rule)
	}
}
