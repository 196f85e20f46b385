package tier3

import (
	"math"
	"testing"

	"github.com/kreplay/kreplay/internal/launch"
	"github.com/kreplay/kreplay/signatures"
)

// The float64 reference of the elementwise family's kernels, for the GPU
// tests and the host runs of the kernels.

// ewRound rounds v to a value of dtype as the kernels store it: floats
// round to nearest even (through float32 for the 16-bit ones), integers
// truncate, bool is v != 0.
func ewRound(v float64, dtype string) float64 {
	if math.IsNaN(v) {
		if ewCategoryOf(dtype) == ewFloatCat {
			return v
		}
		if dtype == "bool" {
			return 1
		}
	}
	switch dtype {
	case "f16":
		return float64(launch.F16ToF32(launch.F32ToF16(float32(v))))
	case "bf16":
		b := math.Float32bits(float32(v))
		b += 0x7fff + (b>>16)&1
		return float64(math.Float32frombits(b &^ 0xffff))
	case "f32":
		return float64(float32(v))
	case "f8e4m3", "f8e5m2":
		c, _ := launch.F32ToFP8(dtype, float32(v))
		return float64(launch.FP8ToF32(dtype, c))
	case "f64":
		return v
	case "bool":
		if v != 0 {
			return 1
		}
		return 0
	case "i32":
		return float64(int32(int64(math.Trunc(v))))
	case "i16":
		return float64(int16(int64(math.Trunc(v))))
	case "i8":
		return float64(int8(int64(math.Trunc(v))))
	case "u8":
		return float64(uint8(int64(math.Trunc(v))))
	}
	return math.Trunc(v)
}

// ewRoundCT converts a value to the compute type as the kernel loads it.
func ewRoundCT(v float64, ct string) float64 {
	switch ct {
	case "float":
		return float64(float32(v))
	case "double":
		return v
	case "bool":
		return ewRound(v, "bool")
	case "int":
		return ewRound(v, "i32")
	}
	return ewRound(v, "i64")
}

func ewB(x bool) float64 {
	if x {
		return 1
	}
	return 0
}

// ewRefOp is the float64 reference of an op code in compute type ct.
func ewRefOp(code, ct string, a, b, c, alpha float64) float64 {
	integral := ct == "int" || ct == "long long"
	switch code {
	case "COPY":
		return a
	case "NEG":
		return -a
	case "ABS":
		return math.Abs(a)
	case "RELU":
		if a <= 0 {
			return 0
		}
		return a
	case "RSQRT":
		return 1 / math.Sqrt(a)
	case "SQRT":
		return math.Sqrt(a)
	case "TANH":
		return math.Tanh(a)
	case "SILU":
		return a / (1 + math.Exp(-a))
	case "SIGMOID":
		return 1 / (1 + math.Exp(-a))
	case "GELU":
		return 0.5 * a * (1 + math.Erf(a/math.Sqrt2))
	case "GELU_TANH":
		return 0.5 * a * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(a+0.044715*a*a*a)))
	case "SIN":
		return math.Sin(a)
	case "COS":
		return math.Cos(a)
	case "EXP":
		return math.Exp(a)
	case "LOG":
		return math.Log(a)
	case "RECIPROCAL":
		return 1 / a
	case "ERF":
		return math.Erf(a)
	case "BITWISE_NOT":
		if ct == "bool" {
			return 1 - a
		}
		return float64(^int64(a))
	case "LOGICAL_NOT":
		return ewB(a == 0)
	case "POW":
		return math.Pow(a, b)
	case "ADD":
		return a + alpha*b
	case "SUB":
		return a - alpha*b
	case "RSUB":
		return b - alpha*a
	case "MUL":
		return a * b
	case "DIV":
		return a / b
	case "DIV_TRUNC":
		if integral && b == 0 {
			return 0
		}
		return math.Trunc(a / b)
	case "DIV_FLOOR":
		if integral && b == 0 {
			return 0
		}
		return math.Floor(a / b)
	case "EQ":
		return ewB(a == b)
	case "NE":
		return ewB(a != b)
	case "LT":
		return ewB(a < b)
	case "LE":
		return ewB(a <= b)
	case "GT":
		return ewB(a > b)
	case "GE":
		return ewB(a >= b)
	case "BITWISE_AND":
		return float64(int64(a) & int64(b))
	case "BITWISE_OR":
		return float64(int64(a) | int64(b))
	case "BITWISE_XOR":
		return float64(int64(a) ^ int64(b))
	case "LOGICAL_AND":
		return ewB(a != 0 && b != 0)
	case "LOGICAL_OR":
		return ewB(a != 0 || b != 0)
	case "LOGICAL_XOR":
		return ewB((a != 0) != (b != 0))
	case "MAXIMUM":
		if math.IsNaN(a) || math.IsNaN(b) {
			return math.NaN()
		}
		return math.Max(a, b)
	case "MINIMUM":
		if math.IsNaN(a) || math.IsNaN(b) {
			return math.NaN()
		}
		return math.Min(a, b)
	case "CLAMP_MIN":
		return math.Max(a, b)
	case "CLAMP_MAX":
		return math.Min(a, b)
	case "CLAMP":
		return math.Min(math.Max(a, b), c)
	case "WHERE":
		if a != 0 {
			return b
		}
		return c
	case "MASKED_FILL":
		if b != 0 {
			return c
		}
		return a
	case "ADDCMUL":
		return a + alpha*b*c
	}
	panic("no reference for " + code)
}

// ewExpand broadcasts row-major values of shape to out's shape.
func ewExpand(vals []float64, shape, out []int64) []float64 {
	n := int64(1)
	for _, d := range out {
		n *= d
	}
	st := make([]int64, len(out))
	acc := int64(1)
	for i := len(shape) - 1; i >= 0; i-- {
		j := len(out) - len(shape) + i
		if shape[i] != 1 {
			st[j] = acc
		}
		acc *= shape[i]
	}
	res := make([]float64, n)
	idx := make([]int64, len(out))
	for i := range res {
		var off int64
		for d := range idx {
			off += idx[d] * st[d]
		}
		res[i] = vals[off]
		for d := len(idx) - 1; d >= 0; d-- {
			idx[d]++
			if idx[d] < out[d] {
				break
			}
			idx[d] = 0
		}
	}
	return res
}

// ewReference computes a plan's output over shape from its tensor
// operands' values (row-major over each tensor's own shape, in the order
// of the plan's tensor arguments) as the kernel does: operands converted
// to the compute type, the op in float64, the result rounded to the output
// dtype.
func ewReference(pl *ewOpPlan, ins []*Tensor, vals [][]float64, shape []int64) []float64 {
	var ops [3][]float64
	ti := 0
	integral := pl.ct != "float" && pl.ct != "double"
	for k, a := range pl.args {
		switch {
		case a.in != nil:
			ops[k] = ewExpand(vals[ti], ins[ti].Shape, shape)
			ti++
		case a.isSet:
			v := a.c.f
			if integral {
				v = float64(a.c.i)
				if pl.ct == "bool" {
					v = ewB(a.c.f != 0 || a.c.i != 0)
				}
			}
			ops[k] = []float64{v}
		}
	}
	at := func(k, i int) float64 {
		switch len(ops[k]) {
		case 0:
			return 0
		case 1:
			return ewRoundCT(ops[k][0], pl.ct)
		}
		return ewRoundCT(ops[k][i], pl.ct)
	}
	alpha := pl.alpha.f
	if integral {
		alpha = float64(pl.alpha.i)
	}
	n := int64(1)
	for _, d := range shape {
		n *= d
	}
	want := make([]float64, n)
	for i := range want {
		v := ewRefOp(pl.code, pl.ct, at(0, i), at(1, i), at(2, i), alpha)
		if integral && ewCategoryOf(pl.outDType) != ewFloatCat && pl.outDType != "bool" {
			v = ewRoundCT(v, pl.ct)
		}
		want[i] = ewRound(v, pl.outDType)
	}
	return want
}

// ewAnalyzeOp analyses a signature of the elementwise, copy or fill
// family with the analysis its op takes.
func ewAnalyzeOp(sig *signatures.Signature) (*ewOpPlan, error) {
	switch sig.Op {
	case "aten::fill_", "aten::fill", "aten::zero_":
		return ewAnalyzeFill(sig)
	case "aten::copy_", "aten::copy", "aten::_to_copy", "aten::to", "aten::clone", "aten::contiguous":
		return ewAnalyzeCopy(sig)
	}
	return ewAnalyze(sig)
}

// checkCat checks a cat's output values got (row-major over shape) against
// the inputs' values before the launch (before, row-major, in order),
// each placed at its slice along dim; elements no input covers must be
// NaN.
func checkCat(t *testing.T, got []float64, shape []int64, dim int, ins []*Tensor, before [][]float64) {
	t.Helper()
	want := make([]float64, len(got))
	for i := range want {
		want[i] = math.NaN()
	}
	var off int64
	ostr := ContiguousStrides(shape)
	for j, x := range ins {
		idx := make([]int64, len(x.Shape))
		for _, v := range before[j] {
			o := off * ostr[dim]
			for d := range idx {
				o += idx[d] * ostr[d]
			}
			want[o] = v
			for d := len(idx) - 1; d >= 0; d-- {
				idx[d]++
				if idx[d] < x.Shape[d] {
					break
				}
				idx[d] = 0
			}
		}
		off += x.Shape[dim]
	}
	for i := range want {
		if want[i] != got[i] && !(math.IsNaN(want[i]) && math.IsNaN(got[i])) {
			t.Fatalf("element %d = %v, want %v", i, got[i], want[i])
		}
	}
}
