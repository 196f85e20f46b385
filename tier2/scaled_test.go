package tier2

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kreplay/kreplay/internal/cublas"
	"github.com/kreplay/kreplay/signatures"
)

// scaledSig imports one aten::_scaled_mm as PyTorch 2.11's profiler
// records it (eight inputs: self, mat2, scale_a, scale_b, bias,
// scale_result, out_dtype, use_fast_accum), with 0-d scales.
func scaledSig(t *testing.T, m, k, n int64, types [3]string, outDType, fastAccum string, bias, resultScale bool) *signatures.Signature {
	t.Helper()
	biasDims, biasStrides, biasType := "[]", "[]", `""`
	if bias {
		biasDims, biasStrides, biasType = fmt.Sprintf("[%d]", n), "[1]", `"`+types[2]+`"`
	}
	rsType := `""`
	if resultScale {
		rsType = `"float"`
	}
	dims := fmt.Sprintf("[[%d, %d], [%d, %d], [], [], %s, [], [], []]", m, k, k, n, biasDims)
	strides := fmt.Sprintf("[[%d, 1], [1, %d], [], [], %s, [], [], []]", k, k, biasStrides)
	typ := fmt.Sprintf(`["%s", "%s", "float", "float", %s, %s, "Scalar", "Scalar"]`, types[0], types[1], biasType, rsType)
	concrete := fmt.Sprintf(`["", "", "", "", "", "", "%s", "%s"]`, outDType, fastAccum)
	return importScaled(t, dims, strides, typ, concrete)
}

// importScaled imports one aten::_scaled_mm event with these argument
// fields and returns its signature, which must be replayable.
func importScaled(t *testing.T, dims, strides, typ, concrete string) *signatures.Signature {
	t.Helper()
	set, err := signatures.Import(strings.NewReader(gemmTrace("aten::_scaled_mm", dims, strides, typ, concrete,
		"nvjet_sm90_qqtst_128x256_128x6_2x1_v_bz_coopA_TNT")), "fp8", signatures.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sig := set.Signatures[0]
	if sig.GEMM == nil {
		t.Fatalf("no GEMM parameters: %s", sig.Unreplayable)
	}
	return sig
}

const (
	f8e4m3 = "c10::Float8_e4m3fn"
	f8e5m2 = "c10::Float8_e5m2"
	bf16   = "c10::BFloat16"
	f16    = "c10::Half"
)

// scaledCall builds the cuBLASLt call PyTorch's scaled_gemm makes for the
// runner's FP8 linear layers and their variants.
func TestScaledCall(t *testing.T) {
	for _, tc := range []struct {
		name string
		sig  func(t *testing.T) *signatures.Signature
		want ltScaledCall
	}{
		{
			name: "FP8Linear gate projection: x f8[2048,2048] @ w.t() f8[2048,8192], bf16 out",
			sig: func(t *testing.T) *signatures.Signature {
				return scaledSig(t, 2048, 2048, 8192, [3]string{f8e4m3, f8e4m3}, "15", "False", false, false)
			},
			want: ltScaledCall{compute: cublas.Compute32F, scale: cublas.R32F, transA: cublas.OpT, transB: cublas.OpN,
				a: ltLayout{cublas.R8FE4M3, 2048, 8192, 2048}, b: ltLayout{cublas.R8FE4M3, 2048, 2048, 2048},
				c: ltLayout{cublas.R16BF, 8192, 2048, 8192}, d: ltLayout{cublas.R16BF, 8192, 2048, 8192}},
		},
		{
			name: "bf16 bias: C takes the bias type, BIAS epilogue",
			sig: func(t *testing.T) *signatures.Signature {
				return scaledSig(t, 64, 128, 96, [3]string{f8e4m3, f8e4m3, bf16}, "15", "False", true, false)
			},
			want: ltScaledCall{compute: cublas.Compute32F, scale: cublas.R32F, transA: cublas.OpT, transB: cublas.OpN,
				a: ltLayout{cublas.R8FE4M3, 128, 96, 128}, b: ltLayout{cublas.R8FE4M3, 128, 64, 128},
				c: ltLayout{cublas.R16BF, 96, 64, 96}, d: ltLayout{cublas.R16BF, 96, 64, 96}, bias: true, biasType: cublas.R16BF},
		},
		{
			name: "f16 out, f16 bias, e5m2 weight, fast accumulation",
			sig: func(t *testing.T) *signatures.Signature {
				return scaledSig(t, 16, 64, 32, [3]string{f8e4m3, f8e5m2, f16}, "5", "True", true, false)
			},
			want: ltScaledCall{compute: cublas.Compute32F, scale: cublas.R32F, transA: cublas.OpT, transB: cublas.OpN,
				a: ltLayout{cublas.R8FE5M2, 64, 32, 64}, b: ltLayout{cublas.R8FE4M3, 64, 16, 64},
				c: ltLayout{cublas.R16F, 32, 16, 32}, d: ltLayout{cublas.R16F, 32, 16, 32}, bias: true, biasType: cublas.R16F, fastAccum: true},
		},
		{
			name: "FP8 out with scale_result: C half, D FP8, D scale",
			sig: func(t *testing.T) *signatures.Signature {
				return scaledSig(t, 32, 64, 48, [3]string{f8e4m3, f8e4m3}, "", "False", false, true)
			},
			want: ltScaledCall{compute: cublas.Compute32F, scale: cublas.R32F, transA: cublas.OpT, transB: cublas.OpN,
				a: ltLayout{cublas.R8FE4M3, 64, 48, 64}, b: ltLayout{cublas.R8FE4M3, 64, 32, 64},
				c: ltLayout{cublas.R16F, 48, 32, 48}, d: ltLayout{cublas.R8FE4M3, 48, 32, 48}, dScale: true},
		},
		{
			name: "decode row: m = 1",
			sig: func(t *testing.T) *signatures.Signature {
				return scaledSig(t, 1, 8192, 2048, [3]string{f8e4m3, f8e4m3}, "15", "False", false, false)
			},
			want: ltScaledCall{compute: cublas.Compute32F, scale: cublas.R32F, transA: cublas.OpT, transB: cublas.OpN,
				a: ltLayout{cublas.R8FE4M3, 8192, 2048, 8192}, b: ltLayout{cublas.R8FE4M3, 8192, 1, 8192},
				c: ltLayout{cublas.R16BF, 2048, 1, 2048}, d: ltLayout{cublas.R16BF, 2048, 1, 2048}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sig := tc.sig(t)
			if got := PlanAPI(sig.GEMM); got != APILtMatmulFP8 {
				t.Errorf("PlanAPI %s, want %s", got, APILtMatmulFP8)
			}
			c, err := scaledCall(sig.GEMM)
			if err != nil {
				t.Fatal(err)
			}
			if *c != tc.want {
				t.Errorf("call\n %+v\nwant\n %+v", *c, tc.want)
			}
		})
	}
	// Refused: another scaling, a rowwise FP8 output, not a scaled GEMM.
	g := func(scaling, out string) *signatures.GEMM {
		return &signatures.GEMM{M: 32, N: 32, K: 32, Batch: 1, TransA: "T", TransB: "N", LDA: 32, LDB: 32, LDC: 32,
			AType: "f8e4m3", BType: "f8e4m3", OutType: out,
			Scaled: &signatures.ScaledGEMM{Scaling: scaling, ScaleAType: "f32", ScaleBType: "f32"}}
	}
	for _, tc := range []struct {
		g    *signatures.GEMM
		want string
	}{
		{g("blockwise", "bf16"), "tensorwise and rowwise"},
		{g(signatures.ScalingRowwise, "f8e4m3"), "no D scale"},
		{&signatures.GEMM{}, "not a scaled GEMM"},
	} {
		if _, err := scaledCall(tc.g); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want an error with %q", tc.g.Scaled, err, tc.want)
		}
	}
}

// scaledSigRowwise imports one aten::_scaled_mm with rowwise scales
// (scale_a f32[m,1], scale_b f32[1,n]) and fast accumulation, as
// torchao-style rowwise FP8 layers call it.
func scaledSigRowwise(t *testing.T, m, k, n int64, bias bool) *signatures.Signature {
	t.Helper()
	biasDims, biasStrides, biasType := "[]", "[]", `""`
	if bias {
		biasDims, biasStrides, biasType = fmt.Sprintf("[%d]", n), "[1]", `"`+bf16+`"`
	}
	dims := fmt.Sprintf("[[%d, %d], [%d, %d], [%d, 1], [1, %d], %s, [], [], []]", m, k, k, n, m, n, biasDims)
	strides := fmt.Sprintf("[[%d, 1], [1, %d], [1, 1], [%d, 1], %s, [], [], []]", k, k, n, biasStrides)
	typ := fmt.Sprintf(`["%s", "%s", "float", "float", %s, "", "Scalar", "Scalar"]`, f8e4m3, f8e4m3, biasType)
	return importScaled(t, dims, strides, typ, `["", "", "", "", "", "", "15", "True"]`)
}

// Rowwise scales: the same layouts, the outer-vector mode, and scale
// vectors of cuBLAS's m (the op's N, scale_b) and n (the op's M, scale_a).
func TestScaledCallRowwise(t *testing.T) {
	for _, tc := range []struct {
		m, k, n int64
		bias    bool
		want    ltScaledCall
	}{
		{2048, 2048, 8192, false, ltScaledCall{compute: cublas.Compute32F, scale: cublas.R32F, transA: cublas.OpT, transB: cublas.OpN,
			a: ltLayout{cublas.R8FE4M3, 2048, 8192, 2048}, b: ltLayout{cublas.R8FE4M3, 2048, 2048, 2048},
			c: ltLayout{cublas.R16BF, 8192, 2048, 8192}, d: ltLayout{cublas.R16BF, 8192, 2048, 8192}, fastAccum: true, rowwise: true}},
		{512, 1536, 256, true, ltScaledCall{compute: cublas.Compute32F, scale: cublas.R32F, transA: cublas.OpT, transB: cublas.OpN,
			a: ltLayout{cublas.R8FE4M3, 1536, 256, 1536}, b: ltLayout{cublas.R8FE4M3, 1536, 512, 1536},
			c: ltLayout{cublas.R16BF, 256, 512, 256}, d: ltLayout{cublas.R16BF, 256, 512, 256},
			bias: true, biasType: cublas.R16BF, fastAccum: true, rowwise: true}},
	} {
		sig := scaledSigRowwise(t, tc.m, tc.k, tc.n, tc.bias)
		c, err := scaledCall(sig.GEMM)
		if err != nil {
			t.Fatal(err)
		}
		if *c != tc.want {
			t.Errorf("call\n %+v\nwant\n %+v", *c, tc.want)
		}
		if a, b := c.scaleLens(); a != uint64(tc.n) || b != uint64(tc.m) {
			t.Errorf("m %d n %d: scale lengths %d, %d, want %d (scale_b) and %d (scale_a)", tc.m, tc.n, a, b, tc.n, tc.m)
		}
	}
}

// Scales are 256-byte aligned, whatever their length.
func TestScaleSpan(t *testing.T) {
	for _, tc := range []struct{ n, want uint64 }{{1, 256}, {64, 256}, {65, 512}, {8192, 32768}, {2049, 8448}} {
		if got := scaleSpan(tc.n); got != tc.want {
			t.Errorf("scaleSpan(%d) = %d, want %d", tc.n, got, tc.want)
		}
	}
}

// PlanAPI picks the call of each kind of GEMM without a GPU.
func TestPlanAPI(t *testing.T) {
	for _, tc := range []struct {
		g    signatures.GEMM
		want API
	}{
		{signatures.GEMM{Batch: 1}, APIGemmEx},
		{signatures.GEMM{Batch: 4}, APIGemmStridedBatchedEx},
		{signatures.GEMM{Batch: 1, Bias: true}, APILtMatmulBias},
		{signatures.GEMM{Batch: 1, Bias: true, Scaled: &signatures.ScaledGEMM{}}, APILtMatmulFP8},
	} {
		if got := PlanAPI(&tc.g); got != tc.want {
			t.Errorf("%+v: %s, want %s", tc.g, got, tc.want)
		}
	}
}

// The scales NewGEMM writes make the random FP8 products about 1.
func TestFP8RMS(t *testing.T) {
	for dt, want := range map[string][2]float64{"f8e4m3": {50, 200}, "f8e5m2": {5000, 30000}} {
		if r := fp8RMS(dt); r < want[0] || r > want[1] {
			t.Errorf("%s RMS %v, want in %v", dt, r, want)
		}
	}
}
