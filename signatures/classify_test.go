package signatures

import (
	"os"
	"strings"
	"testing"
)

// Kernel names decide the class where the op does not: Inductor's kernels
// by their grammar whatever ops they fuse, attention kernels before the
// GEMM substrings their template arguments hold.
func TestClassifyKernelNames(t *testing.T) {
	for _, tc := range []struct {
		op, kernel string
		tier       Tier
		class      Class
	}{
		{"triton_red_fused__to_copy_add_embedding_mean_mul_pow_rsqrt_0", "triton_red_fused__to_copy_add_embedding_mean_mul_pow_rsqrt_0", TierKernel, ClassReduce},
		{"triton_per_fused_softmax_3", "triton_per_fused_softmax_3", TierKernel, ClassReduce},
		{"triton_poi_fused__scaled_dot_product_cudnn_attention_cat_4", "triton_poi_fused__scaled_dot_product_cudnn_attention_cat_4", TierKernel, ClassElementwise},
		{"triton_tem_fused_mm_0", "triton_tem_fused_mm_0", TierKernel, ClassGEMM},
		{"", "triton_poi_fused_add_1", TierKernel, ClassElementwise},
		{"flash_attn::_flash_attn_forward", "void flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, cutlass::half_t>>", TierKernel, ClassAttention},
		{"aten::mm", "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_TNT", TierLibrary, ClassGEMM},
		{"", "cutlass_80_tensorop_f16_s16816gemm_relu_f16_256x128_32x3_nn_align8", TierLibrary, ClassGEMM},
		{"aten::add", "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::Half>>", TierKernel, ClassElementwise},
		{"", "triton_unknownkind_fused_0", TierKernel, ClassOther},
	} {
		tier, class := classify(ActivityKernel, tc.op, tc.kernel, false)
		if tier != tc.tier || class != tc.class {
			t.Errorf("%q / %.40q: tier %d class %s, want %d %s", tc.op, tc.kernel, tier, class, tc.tier, tc.class)
		}
	}
}

// On a real compiled prefill (captured on an H100, kreplay capture of
// scripts/gpu/specs/l1b-compile-prefill.json), the Triton kernels are
// classified by their kind, and the reductions that fuse the embedding
// are charged the table rows they gather, not the 525 MB table.
func TestTritonSignatures(t *testing.T) {
	f, err := os.Open("../workload/testdata/l1b-compiled_prefill/trace.json.gz")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	set, err := Import(f, "l1b-compiled_prefill", Options{})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, s := range set.Signatures {
		if !strings.HasPrefix(s.Kernel, "triton_") {
			continue
		}
		n++
		want := map[string]Class{"poi": ClassElementwise, "red": ClassReduce, "per": ClassReduce}[s.Kernel[7:10]]
		if s.Class != want {
			t.Errorf("%s: class %s, want %s", s.Kernel, s.Class, want)
		}
		if strings.Contains(s.Kernel, "embedding") && (s.Tensor == nil || s.Tensor.Bytes > 64<<20) {
			t.Errorf("%s: tensor %+v: charged more than the rows it gathers", s.Kernel, s.Tensor)
		}
	}
	if n < 10 {
		t.Errorf("%d Triton signatures", n)
	}
}
