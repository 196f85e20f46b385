package signatures

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// scaledMMTrace is a Kineto trace of one aten::_scaled_mm and its kernel,
// with the argument fields PyTorch 2.11's profiler writes for it: eight
// inputs (self, mat2, scale_a, scale_b, bias, scale_result, out_dtype,
// use_fast_accum), 0-d scales as dims [], an absent optional tensor as
// type "" and out_dtype as its c10::ScalarType code.
func scaledMMTrace(dims, strides, types, concrete string) string {
	return `{"traceEvents":[
{"ph":"X","cat":"cpu_op","name":"aten::_scaled_mm","pid":1,"tid":1,"ts":1,"dur":10,"args":{"External id":5,"Record function id":0,
 "Concrete Inputs":` + concrete + `,"Input type":` + types + `,"Input Strides":` + strides + `,"Input Dims":` + dims + `}},
{"ph":"X","cat":"kernel","name":"nvjet_sm90_qqtst_128x256_128x6_2x1_v_bz_coopA_TNT","pid":0,"tid":7,"ts":2,"dur":3,"args":{"External id":5,"device":0,"stream":7,
 "grid":[66,1,1],"block":[384,1,1],"registers per thread":168,"shared memory":213000}}]}`
}

// Argument fields of the _scaled_mm test events.
const (
	smF8      = `"c10::Float8_e4m3fn"`
	smNoBias  = `"", ""`
	smNoInput = `[], []`
)

func TestScaledMMParameters(t *testing.T) {
	// The runner's FP8Linear: xq [M,K] row-major, wq.t() [K,N] strides
	// (1,K), 0-d float32 scales, out_dtype bf16 (15).
	tw := &ScaledGEMM{Scaling: ScalingTensorwise, ScaleAType: "f32", ScaleBType: "f32"}
	checkScaledMM(t, []scaledMMCase{
		{
			name:     "FP8Linear gate projection, no bias",
			dims:     `[[2048, 2048], [2048, 8192], [], [], ` + smNoInput + `, [], []]`,
			strides:  `[[2048, 1], [1, 2048], [], [], ` + smNoInput + `, [], []]`,
			types:    `[` + smF8 + `, ` + smF8 + `, "float", "float", ` + smNoBias + `, "Scalar", "Scalar"]`,
			concrete: `["", "", "", "", "", "", "15", "False"]`,
			want: &GEMM{M: 2048, N: 8192, K: 2048, Batch: 1, TransA: "T", TransB: "N", LDA: 2048, LDB: 2048, LDC: 8192,
				AType: "f8e4m3", BType: "f8e4m3", OutType: "bf16", Alpha: 1, Scaled: tw},
		},
		{
			name:     "bf16 bias fused",
			dims:     `[[2048, 2048], [2048, 512], [], [], [512], [], [], []]`,
			strides:  `[[2048, 1], [1, 2048], [], [], [1], [], [], []]`,
			types:    `[` + smF8 + `, ` + smF8 + `, "float", "float", "c10::BFloat16", "", "Scalar", "Scalar"]`,
			concrete: `["", "", "", "", "", "", "15", "False"]`,
			want: &GEMM{M: 2048, N: 512, K: 2048, Batch: 1, TransA: "T", TransB: "N", LDA: 2048, LDB: 2048, LDC: 512,
				AType: "f8e4m3", BType: "f8e4m3", OutType: "bf16", Alpha: 1, Bias: true, BiasType: "bf16", Scaled: tw},
		},
		{
			name:     "decode row",
			dims:     `[[1, 8192], [8192, 2048], [], [], ` + smNoInput + `, [], []]`,
			strides:  `[[8192, 1], [1, 8192], [], [], ` + smNoInput + `, [], []]`,
			types:    `[` + smF8 + `, ` + smF8 + `, "float", "float", ` + smNoBias + `, "Scalar", "Scalar"]`,
			concrete: `["", "", "", "", "", "", "15", "False"]`,
			want: &GEMM{M: 1, N: 2048, K: 8192, Batch: 1, TransA: "T", TransB: "N", LDA: 8192, LDB: 8192, LDC: 2048,
				AType: "f8e4m3", BType: "f8e4m3", OutType: "bf16", Alpha: 1, Scaled: tw},
		},
		{
			name:     "f16 out, e5m2 mat2, fast accumulation, 1-element 1-D scales",
			dims:     `[[64, 128], [128, 32], [1], [1], ` + smNoInput + `, [], []]`,
			strides:  `[[128, 1], [1, 128], [1], [1], ` + smNoInput + `, [], []]`,
			types:    `[` + smF8 + `, "c10::Float8_e5m2", "float", "float", ` + smNoBias + `, "Scalar", "Scalar"]`,
			concrete: `["", "", "", "", "", "", "5", "True"]`,
			want: &GEMM{M: 64, N: 32, K: 128, Batch: 1, TransA: "T", TransB: "N", LDA: 128, LDB: 128, LDC: 32,
				AType: "f8e4m3", BType: "f8e5m2", OutType: "f16", Alpha: 1,
				Scaled: &ScaledGEMM{Scaling: ScalingTensorwise, ScaleAType: "f32", ScaleBType: "f32", FastAccum: true}},
		},
		{
			name:     "FP8 out (out_dtype None) with scale_result",
			dims:     `[[32, 64], [64, 48], [], [], [], [], [], []]`,
			strides:  `[[64, 1], [1, 64], [], [], [], [], [], []]`,
			types:    `[` + smF8 + `, ` + smF8 + `, "float", "float", "", "float", "", "Scalar"]`,
			concrete: `["", "", "", "", "", "", "", "False"]`,
			want: &GEMM{M: 32, N: 48, K: 64, Batch: 1, TransA: "T", TransB: "N", LDA: 64, LDB: 64, LDC: 48,
				AType: "f8e4m3", BType: "f8e4m3", OutType: "f8e4m3", Alpha: 1,
				Scaled: &ScaledGEMM{Scaling: ScalingTensorwise, ScaleAType: "f32", ScaleBType: "f32", ResultScale: true}},
		},
		{
			name:         "block scales",
			dims:         `[[256, 256], [256, 256], [256, 2], [2, 256], ` + smNoInput + `, [], []]`,
			strides:      `[[256, 1], [1, 256], [1, 256], [256, 1], ` + smNoInput + `, [], []]`,
			types:        `[` + smF8 + `, ` + smF8 + `, "float", "float", ` + smNoBias + `, "Scalar", "Scalar"]`,
			concrete:     `["", "", "", "", "", "", "15", "False"]`,
			unreplayable: "block-scaled",
		},
		{
			name:         "bf16 operands",
			dims:         `[[64, 64], [64, 64], [], [], ` + smNoInput + `, [], []]`,
			strides:      `[[64, 1], [1, 64], [], [], ` + smNoInput + `, [], []]`,
			types:        `["c10::BFloat16", "c10::BFloat16", "float", "float", ` + smNoBias + `, "Scalar", "Scalar"]`,
			concrete:     `["", "", "", "", "", "", "15", "False"]`,
			unreplayable: "FP8",
		},
		{
			name:         "f64 out_dtype",
			dims:         `[[64, 64], [64, 64], [], [], ` + smNoInput + `, [], []]`,
			strides:      `[[64, 1], [1, 64], [], [], ` + smNoInput + `, [], []]`,
			types:        `[` + smF8 + `, ` + smF8 + `, "float", "float", ` + smNoBias + `, "Scalar", "Scalar"]`,
			concrete:     `["", "", "", "", "", "", "7", "False"]`,
			unreplayable: "ScalarType 7",
		},
		{
			name:         "bias of the wrong length",
			dims:         `[[64, 64], [64, 32], [], [], [64], [], [], []]`,
			strides:      `[[64, 1], [1, 64], [], [], [1], [], [], []]`,
			types:        `[` + smF8 + `, ` + smF8 + `, "float", "float", "c10::BFloat16", "", "Scalar", "Scalar"]`,
			concrete:     `["", "", "", "", "", "", "15", "False"]`,
			unreplayable: "want 32 elements",
		},
		{
			name:         "scales missing",
			dims:         `[[64, 64], [64, 32]]`,
			strides:      `[[64, 1], [1, 64]]`,
			types:        `[` + smF8 + `, ` + smF8 + `]`,
			concrete:     `["", ""]`,
			unreplayable: "at least 4",
		},
	})
}

// Rowwise scales (float32 [M,1] and [1,N]): replayable, as PyTorch runs
// them on cuBLASLt's outer-vector mode; scales of those shapes swapped are
// not rowwise.
func TestScaledMMRowwise(t *testing.T) {
	checkScaledMM(t, []scaledMMCase{
		{
			name:     "rowwise scales, fast accumulation",
			dims:     `[[2048, 2048], [2048, 8192], [2048, 1], [1, 8192], ` + smNoInput + `, [], []]`,
			strides:  `[[2048, 1], [1, 2048], [1, 1], [8192, 1], ` + smNoInput + `, [], []]`,
			types:    `[` + smF8 + `, ` + smF8 + `, "float", "float", ` + smNoBias + `, "Scalar", "Scalar"]`,
			concrete: `["", "", "", "", "", "", "15", "True"]`,
			want: &GEMM{M: 2048, N: 8192, K: 2048, Batch: 1, TransA: "T", TransB: "N", LDA: 2048, LDB: 2048, LDC: 8192,
				AType: "f8e4m3", BType: "f8e4m3", OutType: "bf16", Alpha: 1,
				Scaled: &ScaledGEMM{Scaling: ScalingRowwise, ScaleAType: "f32", ScaleBType: "f32", FastAccum: true}},
		},
		{
			name:     "rowwise scales with a bf16 bias",
			dims:     `[[512, 1536], [1536, 256], [512, 1], [1, 256], [256], [], [], []]`,
			strides:  `[[1536, 1], [1, 1536], [1, 1], [256, 1], [1], [], [], []]`,
			types:    `[` + smF8 + `, ` + smF8 + `, "float", "float", "c10::BFloat16", "", "Scalar", "Scalar"]`,
			concrete: `["", "", "", "", "", "", "15", "True"]`,
			want: &GEMM{M: 512, N: 256, K: 1536, Batch: 1, TransA: "T", TransB: "N", LDA: 1536, LDB: 1536, LDC: 256,
				AType: "f8e4m3", BType: "f8e4m3", OutType: "bf16", Alpha: 1, Bias: true, BiasType: "bf16",
				Scaled: &ScaledGEMM{Scaling: ScalingRowwise, ScaleAType: "f32", ScaleBType: "f32", FastAccum: true}},
		},
		{
			name:         "scales of rowwise shape swapped",
			dims:         `[[2048, 2048], [2048, 8192], [1, 8192], [2048, 1], ` + smNoInput + `, [], []]`,
			strides:      `[[2048, 1], [1, 2048], [8192, 1], [1, 1], ` + smNoInput + `, [], []]`,
			types:        `[` + smF8 + `, ` + smF8 + `, "float", "float", ` + smNoBias + `, "Scalar", "Scalar"]`,
			concrete:     `["", "", "", "", "", "", "15", "False"]`,
			unreplayable: "rowwise (float32 [2048,1] and [1,8192])",
		},
	})
}

// scaledMMCase is one aten::_scaled_mm event's arguments and what the
// importer derives from them: the GEMM, or the reason it is unreplayable.
type scaledMMCase struct {
	name                           string
	dims, strides, types, concrete string
	want                           *GEMM
	unreplayable                   string
}

// checkScaledMM imports each case's event and compares the derivation.
func checkScaledMM(t *testing.T, cases []scaledMMCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(strings.ReplaceAll(tc.name, " ", "_"), func(t *testing.T) {
			set, err := Import(strings.NewReader(scaledMMTrace(tc.dims, tc.strides, tc.types, tc.concrete)), "fp8", Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(set.Signatures) != 1 {
				t.Fatalf("%d signatures", len(set.Signatures))
			}
			s := set.Signatures[0]
			if s.Tier != TierLibrary || s.Class != ClassGEMM {
				t.Errorf("tier %d class %s, want a tier-2 GEMM", s.Tier, s.Class)
			}
			if tc.unreplayable != "" {
				if s.GEMM != nil || !strings.Contains(s.Unreplayable, tc.unreplayable) {
					t.Errorf("GEMM %+v, unreplayable %q; want unreplayable saying %q", s.GEMM, s.Unreplayable, tc.unreplayable)
				}
				return
			}
			if s.Unreplayable != "" {
				t.Fatal(s.Unreplayable)
			}
			if d := cmp.Diff(tc.want, s.GEMM); d != "" {
				t.Errorf("GEMM (-want +got):\n%s", d)
			}
		})
	}
}
