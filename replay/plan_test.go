package replay

import (
	"os"
	"strings"
	"testing"

	"github.com/kreplay/kreplay/internal/inject"
	"github.com/kreplay/kreplay/signatures"
	"github.com/kreplay/kreplay/tier2"
	"github.com/kreplay/kreplay/tier3"
)

// PlanPath, on the embedded BLOOM-560M prefill and on synthetic
// signatures for the paths that trace lacks.
func TestPlanPath(t *testing.T) {
	set := embedded(t, "h100_bloom-560m_prefill.trace.json.gz")
	totals, of := PlanPaths(set, tier3.Config{})
	got := map[string]int{}
	n := 0
	for _, p := range totals {
		got[p.Path] = p.Signatures
		n += p.Signatures
	}
	if n != len(set.Signatures) || got[PlanOwn] == 0 || got[PlanLibrary] == 0 || got[PlanPartOf] == 0 || got[PlanCaptured] != 0 {
		t.Errorf("paths %v for %d signatures", got, len(set.Signatures))
	}
	for _, s := range set.Signatures {
		if s.PartOf != "" && of[s.ID] != PlanPartOf+": "+s.PartOf {
			t.Errorf("%s is part of %s, planned %q", s.ID, s.PartOf, of[s.ID])
		}
	}
	for _, tc := range []struct {
		sig  signatures.Signature
		path string
		why  string
	}{
		{signatures.Signature{Tier: signatures.TierLibrary, Class: signatures.ClassGEMM, Op: "aten::_scaled_mm"}, PlanUnreplayable, "without parameters"},
		{signatures.Signature{Tier: signatures.TierLibrary, Class: signatures.ClassGEMM, Op: "aten::_scaled_mm",
			Unreplayable: "unreplayable: aten::_scaled_mm with rowwise scales"}, PlanUnreplayable, "rowwise"},
		{signatures.Signature{Tier: signatures.TierLibrary, Class: signatures.ClassGEMM, Op: "aten::_scaled_mm",
			GEMM: &signatures.GEMM{Batch: 1, Bias: true, Scaled: &signatures.ScaledGEMM{Scaling: signatures.ScalingTensorwise}}},
			PlanLibrary, "cuBLASLt FP8 tensorwise+bias"},
		{signatures.Signature{Tier: signatures.TierKernel, Class: signatures.ClassOther, Op: "triton_poi_fused_add_0"}, PlanStandIn, "Inductor kernel without its binary"},
		{signatures.Signature{Tier: signatures.TierKernel, Class: signatures.ClassOther, Op: "aten::foo"}, PlanStandIn, "no kreplay kernel for aten::foo"},
		{signatures.Signature{Tier: signatures.TierKernel, Class: signatures.ClassElementwise, Op: "aten::add", Unreplayable: "inputs do not broadcast"}, PlanStandIn, "do not broadcast"},
		{signatures.Signature{Tier: signatures.TierKernel, Class: signatures.ClassSoftmax, Op: "aten::_softmax"}, PlanOwn, "_softmax"},
		{rmsNorm("void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::BFloat16, float, true>(int, float, ...)"),
			PlanOwnFaithful, "_fused_rms_norm"},
		{rmsNorm("void test_kernel<float>(float*)"), PlanOwn, "_fused_rms_norm"},
		{signatures.Signature{Tier: signatures.TierLibrary, Class: signatures.ClassCollective}, PlanLibrary, "NCCL"},
		{signatures.Signature{Tier: signatures.TierKernel, Class: signatures.ClassOther, Binary: &signatures.Binary{}}, PlanCaptured, "clean L2"},
		{signatures.Signature{Tier: signatures.TierLibrary, Class: signatures.ClassGEMM, Op: "aten::mm", Binary: &signatures.Binary{}}, PlanCaptured, "rotating"},
		{signatures.Signature{Tier: signatures.TierLibrary, Class: signatures.ClassGEMM, Op: "aten::_grouped_mm",
			GEMM: &signatures.GEMM{M: 512, Batch: 8, Grouped: &signatures.GroupedGEMM{Groups: 8, Rows: 4096}}},
			PlanStandIn, "cuBLAS: a batched GEMM of 8 equal groups of 512 rows (a guess"},
		{signatures.Signature{Tier: signatures.TierKernel, Class: signatures.ClassGEMM, Op: "aten::_grouped_mm",
			Binary: &signatures.Binary{Launch: &inject.Launch{Inner: make([]inject.Inner, 512), InnerDropped: 40}}},
			PlanUnreplayable, "held 40 device pointers more than the 512 the recorder kept"},
	} {
		path, why := PlanPath(&tc.sig, tier3.Config{})
		if path != tc.path || !strings.Contains(why, tc.why) {
			t.Errorf("%s %s: planned %q (%s), want %q (%s)", tc.sig.Op, tc.sig.Class, path, why, tc.path, tc.why)
		}
	}
}

// A replay's fidelity follows from its tier, path, stand-in and the
// kernels CUPTI saw.
func TestFidelity(t *testing.T) {
	k := "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_TNT"
	gemm := &signatures.Signature{Activity: signatures.ActivityKernel, Tier: signatures.TierLibrary, Class: signatures.ClassGEMM, Kernel: k}
	add := &signatures.Signature{Activity: signatures.ActivityKernel, Tier: signatures.TierKernel, Class: signatures.ClassElementwise, Kernel: "triton_poi_fused_add_0"}
	fused := &signatures.Signature{Activity: signatures.ActivityKernel, Tier: signatures.TierKernel, Class: signatures.ClassNorm, Kernel: "rmsnorm_fused"}
	sdpaK := "cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_7_64x128x64_4x1x1_cga1x1x1_kernel0_0"
	sdpa := &signatures.Signature{Activity: signatures.ActivityKernel, Tier: signatures.TierKernel, Class: signatures.ClassAttention, Kernel: sdpaK}
	cudnnSDPA := string(tier2.APICuDNNSDPA)
	for _, tc := range []struct {
		sig  *signatures.Signature
		r    Result
		want string
	}{
		{gemm, Result{Path: "cublasGemmEx", Ran: []Ran{{Kind: "kernel", Name: k}}}, FidelitySame},
		{gemm, Result{Path: "cublasGemmEx", Ran: []Ran{{Kind: "kernel", Name: "sm90_xmma_gemm_f16f16_f32"}}}, FidelityOther},
		{gemm, Result{Path: "cublasGemmEx"}, FidelityUnchecked},
		{add, Result{Path: PathCaptured, Ran: []Ran{{Kind: "kernel", Name: "triton_poi_fused_add_0"}}}, FidelitySame},
		{add, Result{Path: "kreplay:add"}, FidelityOwn},
		{add, Result{Path: "approximate", Approximate: "no kreplay kernel"}, FidelityStandIn},
		{&signatures.Signature{Tier: signatures.TierMemory, Class: signatures.ClassMemcpy}, Result{Path: "memcpy"}, FidelityMemory},
		// A kernel given by the caller (PrepareWith) is the kernel when CUPTI saw it run.
		{fused, Result{Path: PathWith + "rmsnorm_fused", Ran: []Ran{{Kind: "kernel", Name: "rmsnorm_fused"}}}, FidelitySame},
		{fused, Result{Path: PathWith + "rmsnorm_fused"}, FidelityUnchecked},
		// cuDNN's SDPA on a tier-3 signature is the traced kernel when cuDNN chose it.
		{sdpa, Result{Path: cudnnSDPA, Ran: []Ran{{Kind: "kernel", Name: sdpaK}}}, FidelitySame},
		{sdpa, Result{Path: cudnnSDPA, Ran: []Ran{{Kind: "kernel", Name: "cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_3_64x64x64_4x1x1_cga1x1x1_kernel0_0"}}}, FidelityOther},
		{sdpa, Result{Path: "kreplay:_cudnn_attention_forward", Fallback: "cuDNN SDPA: no cuDNN"}, FidelityOwn},
	} {
		if got := fidelity(tc.sig, &tc.r); got != tc.want {
			t.Errorf("%s by %s: %s, want %s", tc.sig.Kernel, tc.r.Path, got, tc.want)
		}
	}
}

func TestSetsFor(t *testing.T) {
	const l2 = 50 << 20
	// A decode step's down projection: f16[1,8192] x f16[8192,2048].
	decode := &signatures.Signature{GEMM: &signatures.GEMM{M: 1, N: 2048, K: 8192, AType: "f16", BType: "f16", OutType: "f16"}}
	unknown := &signatures.Signature{GEMM: &signatures.GEMM{M: 1, N: 2048, K: 8192, AType: "f8e4m3", BType: "x", OutType: "f16"}}
	// An RMSNorm's mean over f32[8,256,1536] (12.6 MB read, 8 KB written).
	mean := &signatures.Signature{Tensor: &signatures.TensorParams{Numel: 2048, Bytes: 12591104}}
	tests := []struct {
		name     string
		sig      *signatures.Signature
		fp       int64
		captured bool
		tensors  bool
		budget   int64
		want     int
	}{
		{"captured weight in a large segment rotates by its operands", decode, 526 << 20, true, false, 40 << 30, 4},
		{"the budget bounds the segments", decode, 526 << 20, true, false, 2 << 30, 3},
		{"tier 2 buffers are the operands", decode, 526 << 20, false, false, 40 << 30, 1},
		{"unknown dtype counts the segments", unknown, 526 << 20, true, false, 40 << 30, 1},
		{"operands larger than the segments", decode, 16 << 20, true, false, 40 << 30, 7},
		{"no GEMM", &signatures.Signature{}, 8 << 20, true, false, 40 << 30, 13},
		{"captured op in a large segment, rotating, by its tensors", mean, 600 << 20, true, true, 40 << 30, 9},
		{"captured op, primed, by its segments", mean, 600 << 20, true, false, 40 << 30, 1},
		{"captured op, rotating, the budget bounds the segments", mean, 600 << 20, true, true, 3 << 30, 5},
		{"not captured, rotating: its buffers are its tensors", mean, 600 << 20, false, true, 40 << 30, 1},
		{"rotating, no tensors known: the segments", &signatures.Signature{}, 600 << 20, true, true, 40 << 30, 1},
	}
	for _, tt := range tests {
		if got := setsFor(tt.sig, tt.fp, tt.captured, tt.tensors, l2, tt.budget); got != tt.want {
			t.Errorf("%s: setsFor = %d, want %d", tt.name, got, tt.want)
		}
	}
}

// rmsNorm is a traced aten::_fused_rms_norm of bf16[4,512,2048] run by
// kernel with grid 2048 and block (32, 4).
func rmsNorm(kernel string) signatures.Signature {
	return signatures.Signature{Tier: signatures.TierKernel, Class: signatures.ClassNorm, Op: "aten::_fused_rms_norm",
		Kernel: kernel, Launch: &signatures.Launch{Grid: [3]int64{2048, 1, 1}, Block: [3]int64{32, 4, 1}, SharedMem: 24},
		Inputs: []signatures.Input{
			{Type: "c10::BFloat16", Shape: []int64{4, 512, 2048}, Strides: []int64{1048576, 2048, 1}},
			{Type: "ScalarList", Value: "[2048]"},
			{Type: "c10::BFloat16", Shape: []int64{2048}, Strides: []int64{1}},
			{Type: "Scalar", Value: "1.0000000000000001e-05"},
		}}
}

// The l1b compiled prefill's attention with an additive bias
// f16[4,1,512,512] (imported without the workload's binaries) replays
// through cuDNN's SDPA, with kreplay's kernel as the fallback, its bias
// values labelled a guess.
func TestPlanPathAttentionBias(t *testing.T) {
	f, err := os.Open("../workload/testdata/l1b-compiled_prefill/trace.json.gz")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	set, err := signatures.Import(f, "l1b-compiled_prefill", signatures.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range set.Signatures {
		if s.ID != "81ea02cfcc54" {
			continue
		}
		path, why := PlanPath(s, tier3.Config{})
		if path != PlanLibrary || !strings.HasPrefix(why, PlanWhyCuDNNSDPA+"; inputs: "+tier3.HeuristicAttnBias+" (a guess") ||
			!strings.Contains(why, "kreplay's kernel where cuDNN") {
			t.Errorf("%s: planned %q (%s)", s.Label, path, why)
		}
		t.Logf("%s: %s: %s", s.Label, path, why)
		return
	}
	t.Fatal("no signature 81ea02cfcc54")
}
