package signatures

import (
	"fmt"
	"strconv"
	"strings"
)

// aten::_scaled_mm(Tensor self, Tensor mat2, Tensor scale_a, Tensor
// scale_b, Tensor? bias=None, Tensor? scale_result=None, ScalarType?
// out_dtype=None, bool use_fast_accum=False): the FP8 GEMM of
// torch._scaled_mm. The profiler records its arguments in that order; an
// absent optional tensor has type "" and no dims, out_dtype is a
// "Scalar" holding the c10::ScalarType code, use_fast_accum a "Scalar"
// "True" or "False". How PyTorch 2.11 calls cuBLASLt for it is in
// docs/pytorch-gemm.md, section 7.

// scaledMMArgs are the argument positions of aten::_scaled_mm.
const (
	smSelf = iota
	smMat2
	smScaleA
	smScaleB
	smBias
	smScaleResult
	smOutDType
	smFastAccum
)

// scalarTypes maps the c10::ScalarType codes an out_dtype can take to
// kreplay's dtypes.
var scalarTypes = map[int64]string{5: "f16", 6: "f32", 15: "bf16", 23: "f8e5m2", 24: "f8e4m3"}

func isFP8(dtype string) bool { return dtype == "f8e4m3" || dtype == "f8e5m2" }

// deriveScaledMM derives the replay parameters of aten::_scaled_mm with
// tensorwise scales (one float32 per operand) or rowwise ones (float32
// [M,1] and [1,N]); PyTorch 2.11 runs both on cuBLASLt on sm_90 (rowwise
// with cuBLAS 12.9 or later). The error says why other cases are not
// replayed.
func deriveScaledMM(ins []Input) (*GEMM, error) {
	const op = "aten::_scaled_mm"
	if len(ins) < smScaleB+1 {
		return nil, fmt.Errorf("%s has %d inputs, want at least 4 (self, mat2, scale_a, scale_b)", op, len(ins))
	}
	a, err := tensorMatrix(ins[smSelf], false)
	if err != nil {
		return nil, fmt.Errorf("%s self: %w", op, err)
	}
	b, err := tensorMatrix(ins[smMat2], false)
	if err != nil {
		return nil, fmt.Errorf("%s mat2: %w", op, err)
	}
	for _, m := range []matrix{a, b} {
		if !isFP8(m.dtype) {
			return nil, fmt.Errorf("%s of %s and %s operands: kreplay replays FP8 (float8_e4m3fn, float8_e5m2) only", op, a.dtype, b.dtype)
		}
	}
	sc, err := scaledMode(ins[smScaleA], ins[smScaleB], a, b)
	if err != nil {
		return nil, err
	}
	g, err := gemmFrom(a, b, 1, 1, 0)
	if err != nil {
		return nil, err
	}
	g.Scaled = sc
	if g.OutType, err = scaledOutType(ins, a.dtype); err != nil {
		return nil, err
	}
	if arg(ins, smScaleResult).IsTensor() {
		sc.ResultScale = true
	}
	sc.FastAccum = strings.TrimSpace(arg(ins, smFastAccum).Value) == "True"
	if bias := arg(ins, smBias); bias.IsTensor() {
		bt := DType(bias.Type)
		if bias.Numel() != g.N || len(bias.Shape) != 1 {
			return nil, fmt.Errorf("%s bias %s%s: want %d elements", op, bt, shapeText(bias.Shape), g.N)
		}
		if bt != "bf16" && bt != "f16" {
			return nil, fmt.Errorf("%s bias of %s: PyTorch takes a bf16 or f16 bias only", op, bt)
		}
		g.Bias, g.BiasType = true, bt
	}
	return g, nil
}

// arg returns input i, or an absent input.
func arg(ins []Input, i int) Input {
	if i < len(ins) {
		return ins[i]
	}
	return Input{}
}

// scaledMode reads the scaling PyTorch picks from the scales of a and b
// (get_joint_scaling): tensorwise where both scales are float32 with one
// element, rowwise where scale_a is float32 [M,1] and scale_b float32
// [1,N]. Block scaling is refused with the reason.
func scaledMode(sa, sb Input, a, b matrix) (*ScaledGEMM, error) {
	const op = "aten::_scaled_mm"
	if !sa.IsTensor() || !sb.IsTensor() {
		return nil, fmt.Errorf("%s: scale_a and scale_b must be tensors (types %q, %q)", op, sa.Type, sb.Type)
	}
	sc := &ScaledGEMM{ScaleAType: DType(sa.Type), ScaleBType: DType(sb.Type)}
	f32 := sc.ScaleAType == "f32" && sc.ScaleBType == "f32"
	switch {
	case f32 && sa.Numel() == 1 && sb.Numel() == 1:
		sc.Scaling = ScalingTensorwise
		return sc, nil
	case f32 && len(sa.Shape) == 2 && len(sb.Shape) == 2 &&
		sa.Shape[0] == a.rows && sa.Shape[1] == 1 && sb.Shape[0] == 1 && sb.Shape[1] == b.cols:
		sc.Scaling = ScalingRowwise
		return sc, nil
	}
	return nil, fmt.Errorf("%s with scales %s%s and %s%s: neither tensorwise (one float32 each) nor rowwise "+
		"(float32 [%d,1] and [1,%d]); block-scaled FP8 is not replayed",
		op, sc.ScaleAType, shapeText(sa.Shape), sc.ScaleBType, shapeText(sb.Shape), a.rows, b.cols)
}

// scaledOutType reads out_dtype (a c10::ScalarType code), the dtype of
// self where it is absent.
func scaledOutType(ins []Input, self string) (string, error) {
	v := strings.TrimSpace(arg(ins, smOutDType).Value)
	if v == "" || v == "None" {
		return self, nil
	}
	c, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return "", fmt.Errorf("aten::_scaled_mm out_dtype %q unreadable", v)
	}
	d, ok := scalarTypes[c]
	if !ok {
		return "", fmt.Errorf("aten::_scaled_mm out_dtype ScalarType %d: not an output dtype kreplay replays", c)
	}
	return d, nil
}
