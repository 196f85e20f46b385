package tier3

import (
	"encoding/json"
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/kreplay/kreplay/internal/cuda"
	"github.com/kreplay/kreplay/signatures"
)

// CPU tests of the elementwise family: promotion, scalars and reading
// signatures. The layouts, the kernels' parameters and defines (strided.go)
// are tested in strided_test.go; compiling the kernels (where NVRTC is
// installed) in elementwise_compile_test.go.

// ewTArg is one traced input for ewSig.
type ewTArg struct {
	typ     string
	shape   []int64 // nil: no dims (a 0-dim tensor or a non-tensor)
	strides []int64 // nil: contiguous
	val     string
	list    [][2][]int64 // a TensorList: shape and strides of each
}

// ewCase is a named call of op on traced inputs, for ewSig.
type ewCase struct {
	name string
	op   string
	args []ewTArg
}

func ewT(typ string, shape []int64, strides ...int64) ewTArg {
	if len(strides) == 0 {
		strides = ContiguousStrides(shape)
	}
	return ewTArg{typ: typ, shape: shape, strides: strides}
}
func ewS(v string) ewTArg       { return ewTArg{typ: "Scalar", val: v} }
func ewNone() ewTArg            { return ewTArg{} }
func ewStr(v string) ewTArg     { return ewTArg{typ: "String", val: v} }
func ewDims(d ...int64) []int64 { return d }

// ewSig builds a signature of op through the real import path.
func ewSig(t testing.TB, op string, args ...ewTArg) *signatures.Signature {
	t.Helper()
	var dims, strides []any
	var types, vals []string
	for _, a := range args {
		switch {
		case a.list != nil:
			var d, s []any
			for _, x := range a.list {
				d = append(d, x[0])
				s = append(s, x[1])
			}
			dims, strides = append(dims, d), append(strides, s)
		case a.shape != nil:
			dims, strides = append(dims, a.shape), append(strides, a.strides)
		default:
			dims, strides = append(dims, []int64{}), append(strides, []int64{})
		}
		types, vals = append(types, a.typ), append(vals, a.val)
	}
	js := func(v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	return opSig(t, op, js(dims), js(strides), js(types), js(vals))
}

func TestEwPromoteTypes(t *testing.T) {
	for _, c := range [][3]string{
		{"f16", "f16", "f16"}, {"f16", "bf16", "f32"}, {"f16", "f32", "f32"}, {"bf16", "f64", "f64"},
		{"i64", "f16", "f16"}, {"bool", "i32", "i32"}, {"u8", "i8", "i16"}, {"i32", "i64", "i64"},
		{"bool", "bool", "bool"}, {"", "f32", "f32"}, {"u8", "bool", "u8"}, {"i16", "u8", "i16"},
	} {
		if got := ewPromoteTypes(c[0], c[1]); got != c[2] {
			t.Errorf("promote(%s, %s) = %s, want %s", c[0], c[1], got, c[2])
		}
		if got := ewPromoteTypes(c[1], c[0]); got != c[2] {
			t.Errorf("promote(%s, %s) = %s, want %s", c[1], c[0], got, c[2])
		}
	}
}

func TestEwResultType(t *testing.T) {
	d := func(dt string) ewPromoOperand { return ewPromoOperand{dtype: dt, class: ewDimTensor} }
	z := func(dt string) ewPromoOperand { return ewPromoOperand{dtype: dt, class: ewZeroDim} }
	w := func(dt string) ewPromoOperand { return ewPromoOperand{dtype: dt, class: ewWrapped} }
	for _, c := range []struct {
		ops  []ewPromoOperand
		want string
	}{
		{[]ewPromoOperand{d("f16"), d("f16")}, "f16"},
		{[]ewPromoOperand{d("f16"), w("f64")}, "f16"},  // x * 0.5 stays half
		{[]ewPromoOperand{d("i64"), w("f64")}, "f32"},  // int tensor * 0.5: default dtype
		{[]ewPromoOperand{d("i64"), z("f64")}, "f64"},  // a real 0-dim double tensor
		{[]ewPromoOperand{d("f16"), z("f32")}, "f16"},  // same category: dims win
		{[]ewPromoOperand{z("f32"), d("i32")}, "f32"},  // pow(float 0-dim, int[16])
		{[]ewPromoOperand{d("i64"), d("bool")}, "i64"}, // bitwise_and(i64[1], bool[1])
		{[]ewPromoOperand{d("bool"), w("i64")}, "i64"}, // bool tensor * 2
		{[]ewPromoOperand{d("i32"), w("i64")}, "i32"},  // int32 tensor + 1
		{[]ewPromoOperand{d("f32"), d("i64")}, "f32"},  // mul(f32[16,1], i64[1,1,32])
		{[]ewPromoOperand{z("i64"), w("i64")}, "i64"},  // eq(0-dim long, 0)
		{[]ewPromoOperand{z("bool"), z("bool")}, "bool"},
		{[]ewPromoOperand{z("f16"), z("f32")}, "f32"},
		{[]ewPromoOperand{z("i64"), d("i64")}, "i64"},
		{[]ewPromoOperand{d("u8"), w("bool")}, "u8"},
		{[]ewPromoOperand{d("bool"), w("f64")}, "f32"},
	} {
		if got := ewResultType(c.ops); got != c.want {
			t.Errorf("result_type(%v) = %s, want %s", c.ops, got, c.want)
		}
	}
}

func TestEwParseScalar(t *testing.T) {
	for _, c := range []struct {
		in  string
		f   float64
		i   int64
		cat ewCategory
	}{
		{"1", 1, 1, ewIntCat}, {"-2", -2, -2, ewIntCat}, {"1.", 1, 1, ewFloatCat}, {"-65504.", -65504, -65504, ewFloatCat},
		{"0.70710678118654757", 0.70710678118654757, 0, ewFloatCat}, {"True", 1, 1, ewBoolCat},
		{"False", 0, 0, ewBoolCat}, {"1e-05", 1e-05, 0, ewFloatCat}, {"-inf", math.Inf(-1), 0, ewFloatCat},
		{"inf", math.Inf(1), 0, ewFloatCat}, {"2.5", 2.5, 2, ewFloatCat}, {"-2.5", -2.5, -2, ewFloatCat},
	} {
		s, err := ewParseScalar(c.in)
		if err != nil {
			t.Errorf("%q: %v", c.in, err)
			continue
		}
		if s.f != c.f || s.i != c.i || s.cat != c.cat {
			t.Errorf("%q = %+v, want f=%v i=%v cat=%v", c.in, s, c.f, c.i, c.cat)
		}
	}
	if s, err := ewParseScalar("nan"); err != nil || !math.IsNaN(s.f) {
		t.Errorf("nan: %+v %v", s, err)
	}
	for _, bad := range []string{"", "(1+2j)", "abc"} {
		if _, err := ewParseScalar(bad); !errors.Is(err, ErrUnsupported) {
			t.Errorf("%q: error %v, want ErrUnsupported", bad, err)
		}
	}
}

func TestEwOpsRegistered(t *testing.T) {
	ops := Ops()
	var want []string
	for name := range ewOps {
		want = append(want, "aten::"+name, "aten::"+name+"_")
	}
	want = append(want, "aten::copy_", "aten::copy", "aten::_to_copy", "aten::to", "aten::clone", "aten::contiguous",
		"aten::fill_", "aten::fill", "aten::zero_", "aten::arange", "aten::cat",
		"aten::index_select", "aten::gather", "aten::embedding", "aten::index")
	for _, op := range want {
		if !slices.Contains(ops, op) {
			t.Errorf("%s has no builder", op)
		}
	}
	for _, op := range []string{"neg", "rsqrt", "sqrt", "tanh", "silu", "sigmoid", "relu", "gelu", "sin", "cos", "exp",
		"log", "abs", "bitwise_not", "logical_not", "pow", "add", "sub", "mul", "div", "eq", "ne", "lt", "le", "gt", "ge",
		"bitwise_and", "bitwise_or", "bitwise_xor", "logical_and", "logical_or", "maximum", "minimum", "where",
		"masked_fill", "addcmul"} {
		if _, ok := ewOps[op]; !ok {
			t.Errorf("%s missing from ewOps", op)
		}
	}
}

func TestEwAnalyze(t *testing.T) {
	f16 := "c10::Half"
	for _, c := range []struct {
		name  string
		sig   *signatures.Signature
		code  string
		ct    string
		out   string
		shape []int64
		alpha float64
		// written: "" new output, "self" in place, "out" the out= tensor
		written string
	}{
		{"add alpha", ewSig(t, "aten::add", ewT(f16, ewDims(4, 512, 4096)), ewT(f16, ewDims(4, 512, 4096)), ewS("2")),
			"ADD", "float", "f16", ewDims(4, 512, 4096), 2, ""},
		{"add wrapped double", ewSig(t, "aten::add", ewT(f16, ewDims(1, 32, 4096)), ewTArg{typ: "double"}, ewS("1")),
			"ADD", "float", "f16", ewDims(1, 32, 4096), 1, ""},
		{"add_ in place", ewSig(t, "aten::add_", ewT("float", ewDims(4, 512)), ewT("float", ewDims(512)), ewS("1")),
			"ADD", "float", "f32", ewDims(4, 512), 1, "self"},
		{"sub long", ewSig(t, "aten::sub", ewT("long int", ewDims(4, 512), 513, 1), ewT("long int", ewDims(4, 512), 513, 1), ewS("1")),
			"SUB", "long long", "i64", ewDims(4, 512), 1, ""},
		{"sub f32 - long 0-dim", ewSig(t, "aten::sub", ewT("float", ewDims(4, 512)), ewTArg{typ: "long int"}, ewS("1")),
			"SUB", "float", "f32", ewDims(4, 512), 1, ""},
		{"mul f32 by i64", ewSig(t, "aten::mul", ewT("float", ewDims(16, 1), 1, 1), ewT("long int", ewDims(1, 1, 32))),
			"MUL", "float", "f32", ewDims(1, 16, 32), 1, ""},
		{"mul long by bool 0-dim", ewSig(t, "aten::mul", ewT("long int", ewDims(1, 32)), ewTArg{typ: "bool"}),
			"MUL", "long long", "i64", ewDims(1, 32), 1, ""},
		{"eq", ewSig(t, "aten::eq", ewT("long int", ewDims(250880, 1), 1, 1), ewT("long int", ewDims(1, 1))),
			"EQ", "long long", "bool", ewDims(250880, 1), 1, ""},
		{"eq 0-dim scalar", ewSig(t, "aten::eq", ewTArg{typ: "long int"}, ewS("0")),
			"EQ", "long long", "bool", ewDims(), 1, ""},
		{"ne scalar", ewSig(t, "aten::ne", ewT("long int", ewDims(4, 512)), ewS("1")),
			"NE", "long long", "bool", ewDims(4, 512), 1, ""},
		{"bitwise_and long bool", ewSig(t, "aten::bitwise_and", ewT("long int", ewDims(1)), ewT("bool", ewDims(1))),
			"BITWISE_AND", "long long", "i64", ewDims(1), 1, ""},
		{"bitwise_and bool broadcast", ewSig(t, "aten::bitwise_and", ewT("bool", ewDims(1, 1, 512, 512)), ewT("bool", ewDims(4, 1, 1, 512))),
			"BITWISE_AND", "bool", "bool", ewDims(4, 1, 512, 512), 1, ""},
		{"pow scalar", ewSig(t, "aten::pow", ewT("float", ewDims(4, 512, 4096)), ewS("2")),
			"POW", "float", "f32", ewDims(4, 512, 4096), 1, ""},
		{"pow 0-dim base", ewSig(t, "aten::pow", ewTArg{typ: "float"}, ewT("int", ewDims(16))),
			"POW", "float", "f32", ewDims(16), 1, ""},
		{"rsqrt", ewSig(t, "aten::rsqrt", ewT("float", ewDims(4, 512, 1))), "RSQRT", "float", "f32", ewDims(4, 512, 1), 1, ""},
		{"sqrt of long", ewSig(t, "aten::sqrt", ewT("long int", ewDims(8))), "SQRT", "float", "f32", ewDims(8), 1, ""},
		{"gelu none", ewSig(t, "aten::gelu", ewT(f16, ewDims(4, 512, 4096)), ewStr("none")), "GELU", "float", "f16", ewDims(4, 512, 4096), 1, ""},
		{"gelu tanh", ewSig(t, "aten::gelu", ewT(f16, ewDims(4, 512, 4096)), ewStr("tanh")), "GELU_TANH", "float", "f16", ewDims(4, 512, 4096), 1, ""},
		{"silu out=", ewSig(t, "aten::silu", ewT(f16, ewDims(4, 512, 5504)), ewT(f16, ewDims(4, 512, 5504))),
			"SILU", "float", "f16", ewDims(4, 512, 5504), 1, "out"},
		{"div long", ewSig(t, "aten::div", ewT("long int", ewDims(8)), ewT("long int", ewDims(8))), "DIV", "float", "f32", ewDims(8), 1, ""},
		{"div floor", ewSig(t, "aten::div", ewT("long int", ewDims(8)), ewS("3"), ewStr("floor")), "DIV_FLOOR", "long long", "i64", ewDims(8), 1, ""},
		{"where", ewSig(t, "aten::where", ewT("bool", ewDims(250880)), ewTArg{typ: "float"}, ewT("float", ewDims(1, 250880))),
			"WHERE", "float", "f32", ewDims(1, 250880), 1, ""},
		{"where half scalars", ewSig(t, "aten::where", ewT("bool", ewDims(4, 1, 512, 512)), ewTArg{typ: f16}, ewTArg{typ: f16}),
			"WHERE", "float", "f16", ewDims(4, 1, 512, 512), 1, ""},
		{"masked_fill", ewSig(t, "aten::masked_fill", ewT(f16, ewDims(4, 16, 64, 64)), ewT("bool", ewDims(4, 1, 64, 64)), ewS("-65504.")),
			"MASKED_FILL", "float", "f16", ewDims(4, 16, 64, 64), 1, ""},
		{"masked_fill_", ewSig(t, "aten::masked_fill_", ewT("float", ewDims(4, 64)), ewT("bool", ewDims(4, 64)), ewTArg{typ: "double"}),
			"MASKED_FILL", "float", "f32", ewDims(4, 64), 1, "self"},
		{"addcmul", ewSig(t, "aten::addcmul", ewT("float", ewDims(64)), ewT("float", ewDims(64)), ewT("float", ewDims(64)), ewS("0.5")),
			"ADDCMUL", "float", "f32", ewDims(64), 0.5, ""},
		{"clamp min only", ewSig(t, "aten::clamp", ewT("float", ewDims(64)), ewS("0"), ewNone()),
			"CLAMP_MIN", "float", "f32", ewDims(64), 1, ""},
		{"clamp max only", ewSig(t, "aten::clamp", ewT("float", ewDims(64)), ewNone(), ewS("6.")),
			"CLAMP_MAX", "float", "f32", ewDims(64), 1, ""},
		{"logical_not", ewSig(t, "aten::logical_not", ewT("float", ewDims(64))), "LOGICAL_NOT", "float", "bool", ewDims(64), 1, ""},
		{"bitwise_not bool 0-dim", ewSig(t, "aten::bitwise_not", ewTArg{typ: "bool"}), "BITWISE_NOT", "bool", "bool", ewDims(), 1, ""},
	} {
		pl, err := ewAnalyze(c.sig)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if pl.code != c.code || pl.ct != c.ct || pl.outDType != c.out || !slices.Equal(pl.shape, c.shape) || pl.alpha.f != c.alpha {
			t.Errorf("%s: code %s ct %s out %s shape %v alpha %v; want %s %s %s %v %v", c.name, pl.code, pl.ct, pl.outDType,
				pl.shape, pl.alpha.f, c.code, c.ct, c.out, c.shape, c.alpha)
		}
		written := ""
		switch {
		case pl.inplace == 0:
			written = "self"
		case pl.out != nil:
			written = "out"
		}
		if written != c.written {
			t.Errorf("%s: writes %q, want %q", c.name, written, c.written)
		}
	}
	for _, c := range []struct {
		name string
		sig  *signatures.Signature
	}{
		{"bitwise of floats", ewSig(t, "aten::bitwise_and", ewT("float", ewDims(4)), ewT("float", ewDims(4)))},
		{"complex scalar", ewSig(t, "aten::mul", ewT("float", ewDims(4)), ewS("(1+2j)"))},
		{"in-place broadcast", ewSig(t, "aten::add_", ewT("float", ewDims(4)), ewT("float", ewDims(3, 4)), ewS("1"))},
		{"no broadcast", ewSig(t, "aten::add", ewT("float", ewDims(4)), ewT("float", ewDims(3)), ewS("1"))},
		{"neg bool", ewSig(t, "aten::neg", ewT("bool", ewDims(4)))},
		{"where(cond)", ewSig(t, "aten::where", ewT("bool", ewDims(4)))},
		{"two scalars", ewSig(t, "aten::add", ewS("1"), ewS("2"), ewS("1"))},
		{"div mode", ewSig(t, "aten::div", ewT("float", ewDims(4)), ewS("2"), ewStr("round"))},
		{"complex dtype", ewSig(t, "aten::neg", ewT("c10::complex<float>", ewDims(4)))},
	} {
		if _, err := ewAnalyze(c.sig); !errors.Is(err, ErrUnsupported) {
			t.Errorf("%s: error %v, want ErrUnsupported", c.name, err)
		}
	}
}

func TestEwAnalyzeCopy(t *testing.T) {
	f16 := "c10::Half"
	for _, c := range []struct {
		name    string
		sig     *signatures.Signature
		src     string
		out     string
		raw     bool
		written bool
	}{
		{"copy_ f16 to f32", ewSig(t, "aten::copy_", ewT("float", ewDims(4, 512, 4096)), ewT(f16, ewDims(4, 512, 4096)), ewS("False")),
			"c10::Half", "f32", false, true},
		{"copy_ permute", ewSig(t, "aten::copy_", ewT(f16, ewDims(4, 512, 16, 64)), ewT(f16, ewDims(4, 512, 16, 64), 524288, 64, 32768, 1), ewS("False")),
			"c10::Half", "f16", true, true},
		{"copy_ expand", ewSig(t, "aten::copy_", ewT("long int", ewDims(4, 1, 1, 512)), ewT("long int", ewDims(4, 1, 1, 512), 1, 0, 0, 0), ewS("False")),
			"long int", "i64", true, true},
		{"_to_copy long", ewSig(t, "aten::_to_copy", ewT("bool", ewDims(4, 512)), ewS("4"), ewNone(), ewNone(), ewNone(), ewS("False"), ewNone()),
			"bool", "i64", false, false},
		{"_to_copy same", ewSig(t, "aten::_to_copy", ewT("float", ewDims(8)), ewNone(), ewNone(), ewNone(), ewNone(), ewS("False"), ewNone()),
			"float", "f32", true, false},
		{"to device dtype", ewSig(t, "aten::to", ewT("long int", ewDims(8)), ewNone(), ewS("5"), ewS("False"), ewS("False"), ewNone()),
			"long int", "f16", false, false},
		{"to dtype", ewSig(t, "aten::to", ewT(f16, ewDims(8)), ewS("6"), ewS("False"), ewS("False"), ewNone()),
			"c10::Half", "f32", false, false},
		{"to other", ewSig(t, "aten::to", ewT(f16, ewDims(8)), ewT("c10::BFloat16", ewDims(2)), ewS("False"), ewS("False"), ewNone()),
			"c10::Half", "bf16", false, false},
		{"clone", ewSig(t, "aten::clone", ewT(f16, ewDims(4, 16, 512, 64), 1048576, 128, 2048, 1), ewNone()),
			"c10::Half", "f16", true, false},
	} {
		pl, err := ewAnalyzeCopy(c.sig)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if pl.args[0].in.Type != c.src || pl.outDType != c.out || pl.raw != c.raw || (pl.out != nil) != c.written || pl.code != "COPY" {
			t.Errorf("%s: src %s out %s raw %v written %v", c.name, pl.args[0].in.Type, pl.outDType, pl.raw, pl.out != nil)
		}
	}
	if _, err := ewAnalyzeCopy(ewSig(t, "aten::copy_", ewT("float", ewDims(4)), ewT("float", ewDims(3)), ewS("False"))); !errors.Is(err, ErrUnsupported) {
		t.Errorf("mismatched copy_: %v", err)
	}
	if _, err := ewAnalyzeCopy(ewSig(t, "aten::_to_copy", ewT("float", ewDims(4)), ewS("9"))); !errors.Is(err, ErrUnsupported) {
		t.Errorf("complex _to_copy: %v", err)
	}
}

func TestEwAnalyzeFill(t *testing.T) {
	for _, c := range []struct {
		name string
		sig  *signatures.Signature
		out  string
		val  float64
		ival int64
		ct   string
	}{
		{"half 0-dim", ewSig(t, "aten::fill_", ewTArg{typ: "c10::Half"}, ewS("-65504.")), "f16", -65504, -65504, "float"},
		{"float -inf", ewSig(t, "aten::fill_", ewTArg{typ: "float"}, ewS("-inf")), "f32", math.Inf(-1), 0, "float"},
		{"bool False", ewSig(t, "aten::fill_", ewT("bool", ewDims(250880)), ewS("False")), "bool", 0, 0, "bool"},
		{"long 1.", ewSig(t, "aten::fill_", ewT("long int", ewDims(1, 32)), ewS("1.")), "i64", 1, 1, "long long"},
		{"zero_", ewSig(t, "aten::zero_", ewT("float", ewDims(4, 512), 1024, 1)), "f32", 0, 0, "float"},
	} {
		pl, err := ewAnalyzeFill(c.sig)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		a := pl.args[0]
		if pl.outDType != c.out || a.in != nil || !a.isSet || (a.c.f != c.val && !(math.IsNaN(a.c.f) && math.IsNaN(c.val))) ||
			a.c.i != c.ival || pl.ct != c.ct || pl.out == nil {
			t.Errorf("%s: out %s value %+v ct %s written %v", c.name, pl.outDType, a, pl.ct, pl.out != nil)
		}
	}
	pl, err := ewAnalyzeFill(ewSig(t, "aten::fill_", ewT("float", ewDims(4)), ewTArg{typ: "double"}))
	if err != nil || pl.args[0].in == nil || pl.ct != "double" {
		t.Errorf("fill_.Tensor: %+v %v", pl, err)
	}
}

func TestEwAnalyzeArange(t *testing.T) {
	for _, c := range []struct {
		name  string
		sig   *signatures.Signature
		n     int64
		dtype string
		start float64
		step  float64
	}{
		{"traced out", ewSig(t, "aten::arange", ewS("0"), ewS("250880"), ewS("1"), ewT("long int", ewDims(0))), 250880, "i64", 0, 1},
		{"end only", ewSig(t, "aten::arange", ewS("32"), ewNone(), ewNone(), ewNone(), ewNone()), 32, "i64", 0, 1},
		{"float step", ewSig(t, "aten::arange", ewS("0"), ewS("5.5"), ewS("0.5"), ewNone(), ewNone(), ewNone(), ewNone()), 11, "f32", 0, 0.5},
		{"dtype arg", ewSig(t, "aten::arange", ewS("0"), ewS("128"), ewS("2"), ewS("6"), ewNone(), ewNone(), ewNone()), 64, "f32", 0, 2},
		{"start end", ewSig(t, "aten::arange", ewS("3"), ewS("10"), ewNone(), ewNone(), ewNone(), ewNone()), 7, "i64", 3, 1},
		{"descending", ewSig(t, "aten::arange", ewS("10"), ewS("0"), ewS("-3"), ewT("long int", ewDims(0))), 4, "i64", 10, -3},
	} {
		a, err := ewAnalyzeArange(c.sig)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if a.n != c.n || a.dtype != c.dtype || a.start != c.start || a.step != c.step {
			t.Errorf("%s: %+v", c.name, a)
		}
	}
	if _, err := ewAnalyzeArange(ewSig(t, "aten::arange", ewS("0"), ewS("4"), ewS("0"), ewT("long int", ewDims(0)))); !errors.Is(err, ErrUnsupported) {
		t.Errorf("step 0: %v", err)
	}
}

func TestEwAnalyzeCat(t *testing.T) {
	l := func(ts ...[2][]int64) ewTArg { return ewTArg{typ: "TensorList", list: ts} }
	p := func(shape []int64, strides ...int64) [2][]int64 {
		if len(strides) == 0 {
			strides = ContiguousStrides(shape)
		}
		return [2][]int64{shape, strides}
	}
	sig := ewSig(t, "aten::cat", l(p(ewDims(4, 32, 512, 64), 1048576, 64, 2048, 1), p(ewDims(4, 32, 512, 64), 2097152, 128, 4096, 1)), ewS("-1"))
	sig.Kernel = "void at::native::(anonymous namespace)::CatArrayBatchedCopy<at::native::(anonymous namespace)::OpaqueType<2u>, unsigned int, 4, 64, 64>(...)"
	pl, err := ewAnalyzeCat(sig)
	if err != nil || pl.dim != 3 || pl.dtype != "f16" || !slices.Equal(pl.shape, ewDims(4, 32, 512, 128)) || len(pl.parts) != 2 {
		t.Errorf("rotary cat: %+v %v", pl, err)
	}
	sig = ewSig(t, "aten::cat", l(p(ewDims(0)), p(ewDims(1, 16, 32, 64), 98304, 192, 3072, 1)), ewS("-2"))
	sig.Kernel = "CatArrayBatchedCopy<OpaqueType<2u>, unsigned int, 4, 64, 64>"
	pl, err = ewAnalyzeCat(sig)
	if err != nil || pl.dim != 2 || len(pl.parts) != 1 || !slices.Equal(pl.shape, ewDims(1, 16, 32, 64)) {
		t.Errorf("legacy empty: %+v %v", pl, err)
	}
	sig = ewSig(t, "aten::cat", l(p(ewDims(4, 1), 1, 1), p(ewDims(4, 512), 0, 1)), ewS("-1"))
	sig.Kernel = "void at::native::(anonymous namespace)::CatArrayBatchedCopy<at::native::(anonymous namespace)::OpaqueType<8u>, unsigned int, 2, 64, 64>"
	pl, err = ewAnalyzeCat(sig)
	if err != nil || pl.dtype != "i64" || !slices.Equal(pl.shape, ewDims(4, 513)) {
		t.Errorf("i64 cat: %+v %v", pl, err)
	}
	sig.Kernel = "some_kernel"
	if pl, err = ewAnalyzeCat(sig); err != nil || pl.dtype != "f16" {
		t.Errorf("default dtype: %+v %v", pl, err)
	}
	sig = ewSig(t, "aten::cat", l(p(ewDims(4, 3)), p(ewDims(5, 4))), ewS("0"))
	if _, err := ewAnalyzeCat(sig); !errors.Is(err, ErrUnsupported) {
		t.Errorf("mismatched cat: %v", err)
	}
	for _, c := range []struct{ kernel, dtype string }{
		{"void at::native::vectorized_elementwise_kernel<8, at::native::FillFunctor<c10::Half>, ...>", "f16"},
		{"CatArrayBatchedCopy_alignedK_contig<at::native::(anonymous namespace)::OpaqueType<8u>, unsigned int, 2, 128, 1, 16>", "i64"},
		{"CatArrayBatchedCopy<at::native::(anonymous namespace)::OpaqueType<4u>, unsigned int, 3, 64, 64>", "f32"},
		{"indexSelectSmallIndex<c10::BFloat16, long, unsigned int, 2, 2, -2>", "bf16"},
		{"foo", ""},
	} {
		if got := ewKernelDType(c.kernel); got != c.dtype {
			t.Errorf("%s: %q, want %q", c.kernel, got, c.dtype)
		}
	}
}

func TestEwAnalyzeIndex(t *testing.T) {
	f16 := "c10::Half"
	for _, c := range []struct {
		name         string
		sig          *signatures.Signature
		shape        []int64
		sst, ist     []int64
		dstride, lim int64
		out          bool
	}{
		{"index_select", ewSig(t, "aten::index_select", ewT(f16, ewDims(250880, 1024)), ewS("0"), ewT("long int", ewDims(2048))),
			ewDims(2048, 1024), ewDims(0, 1), ewDims(1, 0), 1024, 250880, false},
		{"index_select dim 1", ewSig(t, "aten::index_select", ewT("float", ewDims(8, 100)), ewS("-1"), ewT("int", ewDims(5))),
			ewDims(8, 5), ewDims(100, 0), ewDims(0, 1), 1, 100, false},
		{"gather traced", ewSig(t, "aten::gather", ewT(f16, ewDims(250880, 1024)), ewS("0"), ewT("long int", ewDims(2048, 1024), 1, 0), ewS("False"), ewT(f16, ewDims(2048, 1024))),
			ewDims(2048, 1024), ewDims(0, 1), ewDims(1, 0), 1024, 250880, true},
		{"embedding", ewSig(t, "aten::embedding", ewT(f16, ewDims(32000, 4096)), ewT("long int", ewDims(4, 512)), ewS("-1"), ewS("False"), ewS("False")),
			ewDims(4, 512, 4096), ewDims(0, 0, 1), ewDims(512, 1, 0), 4096, 32000, false},
		{"index one tensor", ewSig(t, "aten::index", ewT("float", ewDims(64, 32)), ewTArg{typ: "", list: [][2][]int64{{ewDims(10), ewDims(1)}}}),
			ewDims(10, 32), ewDims(0, 1), ewDims(1, 0), 32, 64, false},
	} {
		pl, err := ewAnalyzeIndex(c.sig)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if !slices.Equal(pl.shape, c.shape) || !slices.Equal(pl.sst, c.sst) || !slices.Equal(pl.ist, c.ist) ||
			pl.dstride != c.dstride || pl.limit != c.lim || (pl.out != nil) != c.out {
			t.Errorf("%s: shape %v sst %v ist %v dstride %d limit %d out %v", c.name, pl.shape, pl.sst, pl.ist, pl.dstride, pl.limit, pl.out != nil)
		}
	}
	// aten::index as traced: the indices list has no shapes.
	sig := ewSig(t, "aten::index", ewT("bool", ewDims(4, 512)), ewNone())
	if _, err := ewAnalyzeIndex(sig); !errors.Is(err, ErrUnsupported) {
		t.Errorf("untraced indices: %v", err)
	}
	l, v := ewGatherLayout(ewDims(2048, 1024), ewDims(1024, 1), ewDims(0, 1), ewDims(1, 0), 1024, 2, [2]cuda.DevicePtr{1 << 20, 1 << 30})
	if v != 8 || !slices.Equal(l.sizes, ewDims(2048, 1024)) {
		t.Errorf("gather layout %v vec %d", l, v)
	}
	if _, v := ewGatherLayout(ewDims(8, 5), ewDims(5, 1), ewDims(100, 0), ewDims(0, 1), 1, 4, [2]cuda.DevicePtr{1 << 20, 1 << 30}); v != 1 {
		t.Errorf("index_select on the last dim: vec %d", v)
	}
}

// ewTracedSigs returns the embedded traces' tier-3 signatures of ops this
// family registers.
func ewTracedSigs(t testing.TB) []*signatures.Signature {
	t.Helper()
	mine := map[string]bool{}
	for _, op := range Ops() {
		mine[op] = true
	}
	return tracedTier3(t, func(s *signatures.Signature) bool {
		_, ok := ewAnalyzers[s.Op]
		return mine[s.Op] && ok
	})
}

// ewAnalyzers maps this family's ops to a CPU-only analysis of their
// signatures.
var ewAnalyzers = func() map[string]func(*signatures.Signature) error {
	m := map[string]func(*signatures.Signature) error{}
	wrap := func(f func(*signatures.Signature) error, ops ...string) {
		for _, op := range ops {
			m[op] = f
		}
	}
	for name := range ewOps {
		wrap(func(s *signatures.Signature) error { _, err := ewAnalyze(s); return err }, "aten::"+name, "aten::"+name+"_")
	}
	wrap(func(s *signatures.Signature) error { _, err := ewAnalyzeCopy(s); return err },
		"aten::copy_", "aten::copy", "aten::_to_copy", "aten::to", "aten::clone", "aten::contiguous")
	wrap(func(s *signatures.Signature) error { _, err := ewAnalyzeFill(s); return err }, "aten::fill_", "aten::fill", "aten::zero_")
	wrap(func(s *signatures.Signature) error { _, err := ewAnalyzeArange(s); return err }, "aten::arange")
	wrap(func(s *signatures.Signature) error { _, err := ewAnalyzeCat(s); return err }, "aten::cat")
	wrap(func(s *signatures.Signature) error { _, err := ewAnalyzeIndex(s); return err },
		"aten::index_select", "aten::gather", "aten::embedding", "aten::index")
	return m
}()

// TestEwTracedSignatures reads every traced signature of this family's
// ops: all are replayed exactly but aten::index, whose indices the
// profiler does not describe.
func TestEwTracedSignatures(t *testing.T) {
	sigs := ewTracedSigs(t)
	if len(sigs) < 100 {
		t.Fatalf("only %d traced signatures", len(sigs))
	}
	ops := map[string]int{}
	for _, s := range sigs {
		err := ewAnalyzers[s.Op](s)
		switch {
		case s.Op == "aten::index":
			if !errors.Is(err, ErrUnsupported) {
				t.Errorf("%s %s: %v, want ErrUnsupported", s.Op, s.Label, err)
			}
		case err != nil:
			t.Errorf("%s %s: %v", s.Op, s.Label, err)
		}
		ops[s.Op]++
	}
	t.Logf("%d signatures: %v", len(sigs), ops)
}
