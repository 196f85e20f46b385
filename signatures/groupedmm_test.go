package signatures

import (
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kreplay/kreplay/internal/errtest"
)

// A grouped GEMM's replay parameters: the real trace's 2-D x 3-D form
// (mat_b transposed per expert, as transformers passes its weights) as a
// batched GEMM of equal groups; other forms and bad offsets are errors.
func TestDeriveGroupedMM(t *testing.T) {
	bf := func(shape, strides []int64) Input {
		return Input{Type: "c10::BFloat16", Shape: shape, Strides: strides}
	}
	offs := Input{Type: "int", Shape: []int64{8}, Strides: []int64{1}}
	for _, tc := range []struct {
		name string
		ins  []Input
		want *GEMM
		err  string
	}{
		{"experts' up projection", []Input{bf([]int64{4096, 1024}, []int64{1024, 1}), bf([]int64{8, 1024, 5632}, []int64{5767168, 1, 1024}), offs},
			&GEMM{M: 512, N: 5632, K: 1024, Batch: 8, TransA: "T", TransB: "N", LDA: 1024, LDB: 1024, LDC: 5632,
				StrideA: 5767168, StrideB: 512 * 1024, StrideC: 512 * 5632, AType: "bf16", BType: "bf16", OutType: "bf16",
				Alpha: 1, Grouped: &GroupedGEMM{Groups: 8, Rows: 4096}}, ""},
		{"rows not a multiple of the groups", []Input{bf([]int64{10, 64}, []int64{64, 1}), bf([]int64{4, 64, 32}, []int64{2048, 32, 1}), {Type: "int", Shape: []int64{4}}},
			&GEMM{M: 3, N: 32, K: 64, Batch: 4, TransA: "N", TransB: "N", LDA: 32, LDB: 64, LDC: 32,
				StrideA: 2048, StrideB: 3 * 64, StrideC: 3 * 32, AType: "bf16", BType: "bf16", OutType: "bf16",
				Alpha: 1, Grouped: &GroupedGEMM{Groups: 4, Rows: 10}}, ""},
		{"3-D x 3-D", []Input{bf([]int64{8, 512, 1024}, []int64{524288, 1024, 1}), bf([]int64{8, 1024, 5632}, []int64{5767168, 1, 1024}), offs},
			nil, "only mat_a[rows,k] x mat_b[groups,k,n]"},
		{"offsets of another count", []Input{bf([]int64{4096, 1024}, []int64{1024, 1}), bf([]int64{8, 1024, 5632}, []int64{5767168, 1, 1024}), {Type: "int", Shape: []int64{4}}},
			nil, "offs [4] does not give one offset per group"},
		{"column-major mat_a", []Input{bf([]int64{4096, 1024}, []int64{1, 4096}), bf([]int64{8, 1024, 5632}, []int64{5767168, 1, 1024}), offs},
			nil, "not row-contiguous"},
		{"no offsets", []Input{bf([]int64{4096, 1024}, []int64{1024, 1}), bf([]int64{8, 1024, 5632}, []int64{5767168, 1, 1024})},
			nil, "want at least 3"},
	} {
		g, err := deriveGEMM("aten::_grouped_mm", tc.ins)
		if !errtest.Check(t, tc.name, err, tc.err) {
			continue
		}
		if diff := cmp.Diff(tc.want, g); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
	}
}

// In a plain trace of a mixture of experts, each grouped GEMM replays as
// a batched GEMM of equal groups, the kernel that prepares it is part of
// it, and the router's topk reads k and dim as topk takes them.
func TestMixtureOfExpertsTrace(t *testing.T) {
	f, err := os.Open("testdata/mixtral-moe-bf16-sdpa_prefill.trace.json.gz")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	set, err := Import(f, "mixtral-moe-bf16-sdpa_prefill", Options{})
	if err != nil {
		t.Fatal(err)
	}
	grouped, preps, topk := map[string]bool{}, 0, 0
	for _, s := range set.Signatures {
		if s.Op == "aten::_grouped_mm" && s.GEMM != nil && s.GEMM.Grouped != nil && s.PartOf == "" && s.Unreplayable == "" {
			grouped[s.ID] = true
			if g := s.GEMM; g.Batch != 8 || g.M != 512 || g.Grouped.Rows != 4096 {
				t.Errorf("%s: batch %d of %d rows from %d", s.Label, g.Batch, g.M, g.Grouped.Rows)
			}
		}
	}
	for _, s := range set.Signatures {
		switch {
		case isGroupedPrep(s.Kernel):
			preps++
			if !grouped[s.PartOf] {
				t.Errorf("%s (%.50s) is part of %q, not of a grouped GEMM", s.ID, s.Kernel, s.PartOf)
			}
		case s.Op == "aten::topk":
			topk++
			if s.Unreplayable != "" || s.Tensor == nil || !cmp.Equal(s.Tensor.Dims, []int64{1}) || s.Tensor.Numel != 2048*2 {
				t.Errorf("%s: %q, params %+v", s.Label, s.Unreplayable, s.Tensor)
			}
		}
	}
	if len(grouped) != 2 || preps != 2 || topk == 0 {
		t.Errorf("%d grouped GEMMs, %d preparing kernels, %d topk signatures; want 2, 2, some", len(grouped), preps, topk)
	}
}
