package signatures

import (
	"fmt"
	"strings"
)

// GroupedGEMM is what a grouped GEMM (aten::_grouped_mm, as transformers
// runs a mixture of experts: the rows of A routed to each expert, times
// that expert's weight) adds to a GEMM. The trace records the group
// boundaries (offs) as a tensor without its values, so a plain trace's
// grouped GEMM replays as a batched GEMM of equal groups: M rows each, as
// many as Groups of them cover Rows. PyTorch runs a CUTLASS grouped kernel
// on the real boundaries; a bundle with binaries replays that kernel.
type GroupedGEMM struct {
	// Groups is the number of groups (experts), Rows the rows of A in
	// all.
	Groups int64 `json:"groups"`
	Rows   int64 `json:"rows"`
}

// Guess says how a grouped GEMM is replayed from a plain trace.
func (g *GroupedGEMM) Guess(m int64) string {
	return fmt.Sprintf("a batched GEMM of %d equal groups of %d rows (a guess: the trace records no group sizes)", g.Groups, m)
}

// deriveGroupedMM derives a grouped GEMM's replay parameters: the 2-D x
// 3-D form, mat_a[rows, k] and mat_b[groups, k, n] with offs[groups] (a
// mixture of experts' forward), replayed as Groups equal groups.
func deriveGroupedMM(ins []Input) (*GEMM, error) {
	const op = "aten::_grouped_mm"
	if len(ins) < 3 {
		return nil, fmt.Errorf("%s has %d inputs, want at least 3 (mat_a, mat_b, offs)", op, len(ins))
	}
	x, w, offs := ins[0], ins[1], ins[2]
	if !x.IsTensor() || !w.IsTensor() || len(x.Shape) != 2 || len(w.Shape) != 3 {
		return nil, fmt.Errorf("%s of %s%v and %s%v: only mat_a[rows,k] x mat_b[groups,k,n] is replayed", op,
			DType(x.Type), x.Shape, DType(w.Type), w.Shape)
	}
	if !offs.IsTensor() || len(offs.Shape) != 1 || offs.Shape[0] != w.Shape[0] {
		return nil, fmt.Errorf("%s: offs %v does not give one offset per group of %v", op, offs.Shape, w.Shape)
	}
	if len(x.Strides) != 2 || x.Strides[1] != 1 {
		return nil, fmt.Errorf("%s: mat_a strides %v are not row-contiguous", op, x.Strides)
	}
	groups, rows := w.Shape[0], x.Shape[0]
	if groups <= 0 {
		return nil, fmt.Errorf("%s with %d groups", op, groups)
	}
	m := (rows + groups - 1) / groups
	a := matrix{rows: m, cols: x.Shape[1], rs: x.Strides[0], cs: 1, bs: m * x.Strides[0], dtype: DType(x.Type), batchStrided: true}
	b, err := tensorMatrix(w, true)
	if err != nil {
		return nil, err
	}
	g, err := gemmFrom(a, b, groups, 1, 0)
	if err != nil {
		return nil, err
	}
	g.Grouped = &GroupedGEMM{Groups: groups, Rows: rows}
	return g, nil
}

// isGroupedPrep reports whether a kernel is the one PyTorch's grouped GEMM
// launches before its GEMM to write the groups' operand addresses and
// shapes: part of the GEMM's replay, as a split-K reduce is.
func isGroupedPrep(kernel string) bool {
	return strings.Contains(kernel, "prepare_grouped_gemm_data")
}
