package tier2

import (
	"errors"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kreplay/kreplay/internal/cudnn"
	"github.com/kreplay/kreplay/internal/gputest"
	"github.com/kreplay/kreplay/signatures"
)

// tracedSignature imports the trace at rel (from the repository root) and
// returns its signature id.
func tracedSignature(tb testing.TB, rel, id string) *signatures.Signature {
	tb.Helper()
	f := gputest.OpenRepoFile(tb, rel)
	defer f.Close()
	set, err := signatures.Import(f, filepath.Base(rel), signatures.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	for _, s := range set.Signatures {
		if s.ID == id {
			return s
		}
	}
	tb.Fatalf("%s has no signature %s", rel, id)
	return nil
}

// Traced cuDNN SDPA signatures of plain traces (no binaries): the l1b
// compiled prefill (f16 [4,32,512,64], q stored [batch, seq, heads, dim],
// a f16 [4,1,512,512] mask bias) and the Qwen2-0.5B compiled prefill
// (bf16 [2,14,1024,64], a bf16 [2,1,1024,1024] mask).
const (
	l1bTrace  = "workload/testdata/l1b-compiled_prefill/trace.json.gz"
	l1bSDPA   = "81ea02cfcc54"
	qwenTrace = "signatures/testdata/qwen2-0.5b-bf16-compiled_prefill.trace.json.gz"
	qwenSDPA  = "7672b700241a"
)

// sdpaSig is a _scaled_dot_product_cudnn_attention signature of q, k, v
// contiguous [b, h, s, d] f16 and the given is_causal and
// compute_log_sumexp, no bias.
func sdpaSig(b, hq, hk, sq, sk, d int64, causal, lse string) *signatures.Signature {
	t := func(h, s int64) signatures.Input {
		return signatures.Input{Type: "c10::Half", Shape: []int64{b, h, s, d}, Strides: []int64{h * s * d, s * d, d, 1}}
	}
	return &signatures.Signature{ID: "synthetic", Op: "aten::_scaled_dot_product_cudnn_attention",
		Tier: signatures.TierKernel, Class: signatures.ClassAttention,
		Inputs: []signatures.Input{t(hq, sq), t(hk, sk), t(hk, sk), {}, {Type: "Scalar", Value: lse},
			{Type: "Scalar", Value: "0."}, {Type: "Scalar", Value: causal}, {Type: "Scalar", Value: "False"}, {}}}
}

// CuDNNSDPA hands cuDNN what PyTorch's MHA.cpp hands cudnn-frontend:
// q, k, v with their traced strides, the output in q's layout, the bias
// as traced, the traced scale, stats only with compute_log_sumexp; and
// the graph is the composite one for a bias or a causal mask (on cuDNN
// 9.19) and the unified operation for plain attention.
func TestCuDNNSDPADescription(t *testing.T) {
	l1b := tracedSignature(t, l1bTrace, l1bSDPA)
	qwen := tracedSignature(t, qwenTrace, qwenSDPA)
	tests := []struct {
		name    string
		sig     *signatures.Signature
		dtype   cudnn.DataType
		q, o    cudnn.Shape
		bias    *cudnn.Shape
		causal  bool
		stats   bool
		scale   float32
		unified bool
		ops     int
	}{
		{"l1b", l1b, cudnn.DataHalf,
			cudnn.Shape{Dims: [4]int64{4, 32, 512, 64}, Strides: [4]int64{1048576, 64, 2048, 1}},
			cudnn.Shape{Dims: [4]int64{4, 32, 512, 64}, Strides: [4]int64{1048576, 64, 2048, 1}},
			&cudnn.Shape{Dims: [4]int64{4, 1, 512, 512}, Strides: [4]int64{262144, 262144, 512, 1}},
			false, false, 0.125, false, 11},
		{"qwen2", qwen, cudnn.DataBFloat16,
			cudnn.Shape{Dims: [4]int64{2, 14, 1024, 64}, Strides: [4]int64{917504, 64, 896, 1}},
			cudnn.Shape{Dims: [4]int64{2, 14, 1024, 64}, Strides: [4]int64{917504, 64, 896, 1}},
			&cudnn.Shape{Dims: [4]int64{2, 1, 1024, 1024}, Strides: [4]int64{1048576, 1048576, 1024, 1}},
			false, false, 0.125, false, 11},
		{"causal lse", sdpaSig(1, 32, 8, 512, 512, 128, "True", "True"), cudnn.DataHalf,
			cudnn.Shape{Dims: [4]int64{1, 32, 512, 128}, Strides: [4]int64{2097152, 65536, 128, 1}},
			cudnn.Shape{Dims: [4]int64{1, 32, 512, 128}, Strides: [4]int64{2097152, 65536, 128, 1}},
			nil, true, true, float32(1 / math.Sqrt(128)), false, 14},
		{"decode", sdpaSig(4, 32, 32, 1, 300, 128, "False", "False"), cudnn.DataHalf,
			cudnn.Shape{Dims: [4]int64{4, 32, 1, 128}, Strides: [4]int64{4096, 128, 128, 1}},
			cudnn.Shape{Dims: [4]int64{4, 32, 1, 128}, Strides: [4]int64{4096, 128, 128, 1}},
			nil, false, false, float32(1 / math.Sqrt(128)), true, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if !PlanCuDNNSDPA(tc.sig) {
				t.Fatalf("%s does not plan cuDNN SDPA", tc.sig.Label)
			}
			d, a, err := cuDNNSDPA(tc.sig)
			if err != nil {
				t.Fatal(err)
			}
			if d.DType != tc.dtype || d.Q != tc.q || d.O != tc.o || d.Causal != tc.causal || d.Stats != tc.stats ||
				d.Scale != tc.scale {
				t.Errorf("got %+v", d)
			}
			if (d.Bias == nil) != (tc.bias == nil) || d.Bias != nil && *d.Bias != *tc.bias || d.Bias != nil && d.BiasType != tc.dtype {
				t.Errorf("bias %+v (%v), want %+v", d.Bias, d.BiasType, tc.bias)
			}
			if a.FLOPs() <= 0 {
				t.Errorf("FLOPs %d", a.FLOPs())
			}
			g, err := d.Graph(91900)
			if err != nil {
				t.Fatal(err)
			}
			if g.Unified != tc.unified || len(g.Ops) != tc.ops {
				t.Errorf("unified %v with %d operations, want %v and %d:\n%s", g.Unified, len(g.Ops), tc.unified, tc.ops, g)
			}
			t.Logf("%s:\n%s", tc.sig.Label, g)
		})
	}
}

func TestCuDNNSDPARefuses(t *testing.T) {
	gemm := &signatures.Signature{ID: "g", Op: "aten::mm"}
	if _, _, err := cuDNNSDPA(gemm); !errors.Is(err, ErrNotCuDNNSDPA) {
		t.Errorf("aten::mm: %v", err)
	}
	flash := sdpaSig(1, 2, 2, 64, 64, 64, "True", "True")
	flash.Op = "aten::_scaled_dot_product_flash_attention"
	if PlanCuDNNSDPA(flash) {
		t.Error("flash attention planned for cuDNN")
	}
	drop := sdpaSig(1, 2, 2, 64, 64, 64, "True", "True")
	drop.Inputs[5].Value = "0.1"
	if _, _, err := cuDNNSDPA(drop); !errors.Is(err, signatures.ErrAttention) || !strings.Contains(err.Error(), "dropout") {
		t.Errorf("dropout: %v", err)
	}
	un := sdpaSig(1, 2, 2, 64, 64, 64, "True", "True")
	un.Unreplayable = "unreplayable: test"
	if PlanCuDNNSDPA(un) {
		t.Error("an unreplayable signature planned for cuDNN")
	}
}

// The output takes q's layout as PyTorch allocates it.
func TestMatchingLayout(t *testing.T) {
	for _, tc := range []struct {
		name string
		q    cudnn.Shape
		want [4]int64
	}{
		{"bhsd", cudnn.Shape{Dims: [4]int64{2, 4, 8, 16}, Strides: [4]int64{512, 128, 16, 1}}, [4]int64{512, 128, 16, 1}},
		{"bshd storage", cudnn.Shape{Dims: [4]int64{2, 4, 8, 16}, Strides: [4]int64{512, 16, 64, 1}}, [4]int64{512, 16, 64, 1}},
		{"decode", cudnn.Shape{Dims: [4]int64{2, 4, 1, 16}, Strides: [4]int64{64, 16, 16, 1}}, [4]int64{64, 16, 16, 1}},
		{"sliced", cudnn.Shape{Dims: [4]int64{2, 4, 8, 16}, Strides: [4]int64{1536, 16, 192, 1}}, [4]int64{512, 128, 16, 1}},
	} {
		if got := matchingLayout(tc.q, tc.q.Dims); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
