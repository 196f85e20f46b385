package signatures

import (
	"fmt"
	"strconv"
	"strings"
)

// matrix is one GEMM operand in the op's row-major terms: rows x cols with
// the given row and column strides, and a batch stride.
type matrix struct {
	rows, cols   int64
	rs, cs, bs   int64
	dtype        string
	batchStrided bool
}

// cublasOperand returns how cuBLAS sees a row-major operand X[rows,cols]:
// column-major memory holding X^T (cols x rows). It follows PyTorch's
// rules: a row-contiguous X is passed as is ("N", ld = row stride), a
// column-contiguous X is passed transposed ("T", ld = column stride), and
// any other layout is copied to a contiguous buffer first.
func (x matrix) cublasOperand() (trans string, ld int64, copied bool) {
	max1 := func(v int64) int64 {
		if v < 1 {
			return 1
		}
		return v
	}
	switch {
	case x.cs == 1 && (x.rows == 1 || x.rs >= max1(x.cols)):
		ld = x.rs
		if x.rows == 1 {
			ld = max1(x.cols)
		}
		return "N", ld, false
	case x.rs == 1 && (x.cols == 1 || x.cs >= max1(x.rows)):
		ld = x.cs
		if x.cols == 1 {
			ld = max1(x.rows)
		}
		return "T", ld, false
	}
	return "N", max1(x.cols), true
}

// tensorMatrix reads a 2-D or batched 3-D tensor input as a matrix.
func tensorMatrix(in Input, batched bool) (matrix, error) {
	want := 2
	if batched {
		want = 3
	}
	if !in.IsTensor() || len(in.Shape) != want || len(in.Strides) != want {
		return matrix{}, fmt.Errorf("operand %s%v is not a %d-D tensor", DType(in.Type), in.Shape, want)
	}
	o := len(in.Shape) - 2
	m := matrix{
		rows: in.Shape[o], cols: in.Shape[o+1],
		rs: in.Strides[o], cs: in.Strides[o+1],
		dtype: DType(in.Type),
	}
	if batched {
		m.bs = in.Strides[0]
		m.batchStrided = true
	}
	return m, nil
}

// scalarValue parses a profiler scalar ("1", "0.125", "1.", "True").
func scalarValue(in Input, def float64) float64 {
	if in.Value == "" {
		return def
	}
	v, err := strconv.ParseFloat(strings.TrimSuffix(in.Value, "."), 64)
	if err != nil {
		return def
	}
	return v
}

// deriveGEMM computes a GEMM signature's replay parameters from its op and
// inputs. The error says why they cannot be derived.
func deriveGEMM(op string, ins []Input) (*GEMM, error) {
	var (
		a, b        matrix
		batch       int64 = 1
		alpha, beta       = 1.0, 0.0
		bias        *Input
		err         error
	)
	tensors := 0
	for _, in := range ins {
		if in.IsTensor() {
			tensors++
		}
	}
	need := func(n int) error {
		if len(ins) < n {
			return fmt.Errorf("%s has %d inputs, want at least %d", op, len(ins), n)
		}
		return nil
	}
	switch op {
	case "aten::mm":
		if err = need(2); err == nil {
			if a, err = tensorMatrix(ins[0], false); err == nil {
				b, err = tensorMatrix(ins[1], false)
			}
		}
	case "aten::bmm":
		if err = need(2); err == nil {
			if a, err = tensorMatrix(ins[0], true); err == nil {
				b, err = tensorMatrix(ins[1], true)
			}
			if err == nil {
				batch = ins[0].Shape[0]
			}
		}
	case "aten::addmm", "aten::_addmm_activation":
		if err = need(3); err == nil {
			if a, err = tensorMatrix(ins[1], false); err == nil {
				b, err = tensorMatrix(ins[2], false)
			}
			bias = &ins[0]
			beta, alpha = 1, 1
			if len(ins) > 4 {
				beta, alpha = scalarValue(ins[3], 1), scalarValue(ins[4], 1)
			}
		}
	case "aten::baddbmm":
		if err = need(3); err == nil {
			if a, err = tensorMatrix(ins[1], true); err == nil {
				b, err = tensorMatrix(ins[2], true)
			}
			if err == nil {
				batch = ins[1].Shape[0]
			}
			beta, alpha = 1, 1
			if len(ins) > 4 {
				beta, alpha = scalarValue(ins[3], 1), scalarValue(ins[4], 1)
			}
		}
	case "aten::linear":
		// linear(input[..., k], weight[n, k], bias[n]?) = input @ weight^T.
		if err = need(2); err == nil {
			x, w := ins[0], ins[1]
			if !x.IsTensor() || len(x.Shape) < 1 || !w.IsTensor() || len(w.Shape) != 2 || len(w.Strides) != 2 {
				err = fmt.Errorf("aten::linear operands %v and %v are not input[...,k] and weight[n,k]", x.Shape, w.Shape)
				break
			}
			k := x.Shape[len(x.Shape)-1]
			a = matrix{rows: numel(x.Shape) / max(k, 1), cols: k, rs: k, cs: 1, dtype: DType(x.Type)}
			b = matrix{rows: w.Shape[1], cols: w.Shape[0], rs: w.Strides[1], cs: w.Strides[0], dtype: DType(w.Type)}
			if len(ins) > 2 && ins[2].IsTensor() {
				bias = &ins[2]
				beta = 1
			}
		}
	case "aten::_scaled_mm":
		return deriveScaledMM(ins)
	case "aten::_grouped_mm":
		return deriveGroupedMM(ins)
	default:
		err = fmt.Errorf("%s is not a GEMM op kreplay knows (%d tensor inputs)", op, tensors)
	}
	if err != nil {
		return nil, err
	}
	g, err := gemmFrom(a, b, batch, alpha, beta)
	if err != nil {
		return nil, err
	}
	if bias != nil && bias.IsTensor() {
		// A 1-D bias of n elements with beta 1 is fused as a cuBLASLt epilogue;
		// any other self is copied into the output first, then beta applies.
		if len(bias.Shape) == 1 && bias.Shape[0] == g.N && g.Beta == 1 && op != "aten::baddbmm" {
			g.Bias = true
			g.BiasType = DType(bias.Type)
		}
	}
	return g, nil
}

// gemmFrom is the GEMM C[m,n] = alpha A[m,k] B[k,n] + beta C of the op's
// row-major operands a and b, with the column-major cuBLAS call PyTorch
// makes for it (docs/pytorch-gemm.md, section 2): the output is a fresh
// contiguous tensor, so cuBLAS computes C^T = B^T A^T and its A is the
// op's B.
func gemmFrom(a, b matrix, batch int64, alpha, beta float64) (*GEMM, error) {
	if a.cols != b.rows {
		return nil, fmt.Errorf("inner dimensions differ: A is %dx%d, B is %dx%d", a.rows, a.cols, b.rows, b.cols)
	}
	g := &GEMM{
		M: a.rows, N: b.cols, K: a.cols, Batch: batch,
		AType: a.dtype, BType: b.dtype, OutType: a.dtype,
		Alpha: alpha, Beta: beta,
	}
	if g.M <= 0 || g.N <= 0 || g.K <= 0 || g.Batch <= 0 {
		return nil, fmt.Errorf("empty GEMM m=%d n=%d k=%d batch=%d", g.M, g.N, g.K, g.Batch)
	}
	// cuBLAS computes C^T[n,m] = B^T[n,k] A^T[k,m] in column-major terms.
	var copiedA, copiedB bool
	g.TransA, g.LDA, copiedA = b.cublasOperand()
	g.TransB, g.LDB, copiedB = a.cublasOperand()
	g.LDC = g.N
	if copiedA {
		g.Copied = append(g.Copied, "B")
	}
	if copiedB {
		g.Copied = append(g.Copied, "A")
	}
	if batch > 1 || a.batchStrided {
		g.StrideA, g.StrideB = b.bs, a.bs
		if copiedA {
			g.StrideA = b.rows * b.cols
		}
		if copiedB {
			g.StrideB = a.rows * a.cols
		}
		g.StrideC = g.M * g.N
	}
	return g, nil
}
