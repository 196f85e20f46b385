package tier3

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/kreplay/kreplay/internal/cuda"
	"github.com/kreplay/kreplay/internal/nvrtc"
	"github.com/kreplay/kreplay/signatures"
)

// CPU tests of the elementwise family: promotion, scalars, layouts, the
// kernels' parameters and defines, reading signatures, and (where NVRTC is
// installed) compiling the kernels.

// ewTArg is one traced input for ewSig.
type ewTArg struct {
	typ     string
	shape   []int64 // nil: no dims (a 0-dim tensor or a non-tensor)
	strides []int64 // nil: contiguous
	val     string
	list    [][2][]int64 // a TensorList: shape and strides of each
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

func TestEwBroadcast(t *testing.T) {
	for _, c := range []struct {
		shapes [][]int64
		want   []int64
		ok     bool
	}{
		{[][]int64{{4, 32, 512, 128}, {1, 1, 512, 128}}, []int64{4, 32, 512, 128}, true},
		{[][]int64{{250880, 1}, {1, 1}}, []int64{250880, 1}, true},
		{[][]int64{{16, 1}, {1, 1, 32}}, []int64{1, 16, 32}, true},
		{[][]int64{{1, 1, 1, 512}, {1, 1, 512, 1}}, []int64{1, 1, 512, 512}, true},
		{[][]int64{{250880}, nil, {1, 250880}}, []int64{1, 250880}, true},
		{[][]int64{nil, nil}, []int64{}, true},
		{[][]int64{{3}, {4}}, nil, false},
	} {
		got, ok := signatures.BroadcastShape(c.shapes...)
		if ok != c.ok || (ok && !slices.Equal(got, c.want)) {
			t.Errorf("broadcast %v = %v %v, want %v %v", c.shapes, got, ok, c.want, c.ok)
		}
	}
	x := &Tensor{Shape: []int64{1, 1, 512, 128}, Strides: []int64{65536, 65536, 128, 1}}
	st, err := ewBroadcastStrides(x, []int64{4, 32, 512, 128})
	if err != nil || !slices.Equal(st, []int64{0, 0, 128, 1}) {
		t.Errorf("strides %v %v", st, err)
	}
	if _, err := ewBroadcastStrides(&Tensor{Shape: []int64{3}, Strides: []int64{1}}, []int64{4}); !errors.Is(err, ErrUnsupported) {
		t.Errorf("3 to 4: %v", err)
	}
	if st, err := ewBroadcastStrides(&Tensor{}, []int64{2, 3}); err != nil || !slices.Equal(st, []int64{0, 0}) {
		t.Errorf("0-dim: %v %v", st, err)
	}
}

func TestEwCoalesce(t *testing.T) {
	for _, c := range []struct {
		name    string
		shape   []int64
		strides [4][]int64
		sizes   []int64
		want    [4][]int64
	}{
		{"contiguous", []int64{4, 512, 4096}, [4][]int64{{2097152, 4096, 1}, {2097152, 4096, 1}, {2097152, 4096, 1}},
			[]int64{8388608}, [4][]int64{{1}, {1}, {1}}},
		{"scalar operand", []int64{4, 512, 4096}, [4][]int64{{2097152, 4096, 1}, {2097152, 4096, 1}, {0, 0, 0}},
			[]int64{8388608}, [4][]int64{{1}, {1}, {0}}},
		{"row broadcast", []int64{4, 512, 4096}, [4][]int64{{2097152, 4096, 1}, {0, 0, 1}, {2097152, 4096, 1}},
			[]int64{2048, 4096}, [4][]int64{{4096, 1}, {0, 1}, {4096, 1}}},
		{"rope mul", []int64{4, 32, 512, 128}, [4][]int64{{2097152, 65536, 128, 1}, {2097152, 128, 4096, 1}, {0, 0, 128, 1}},
			[]int64{4, 32, 512, 128}, [4][]int64{{2097152, 65536, 128, 1}, {2097152, 128, 4096, 1}, {0, 0, 128, 1}}},
		{"size-1 dims dropped", []int64{1, 16, 1, 33}, [4][]int64{{528, 33, 33, 1}, {528, 33, 33, 1}, {33, 0, 33, 1}},
			[]int64{16, 33}, [4][]int64{{33, 1}, {33, 1}, {0, 1}}},
		{"constant operand", []int64{4, 512}, [4][]int64{{512, 1}, nil, {512, 1}},
			[]int64{2048}, [4][]int64{{1}, nil, {1}}},
		{"all ones", []int64{1, 1}, [4][]int64{{1, 1}, {1, 1}},
			[]int64{1}, [4][]int64{{0}, {0}}},
		{"0-dim", nil, [4][]int64{{}, {}},
			[]int64{1}, [4][]int64{{0}, {0}}},
		// copy_ into a transposed destination: iterate in the destination's order.
		{"reorder by output", []int64{4, 512, 16, 64}, [4][]int64{{524288, 64, 32768, 1}, {524288, 1024, 64, 1}},
			[]int64{4, 16, 512, 64}, [4][]int64{{524288, 32768, 64, 1}, {524288, 64, 1024, 1}}},
		// The cat of Llama's rotary halves: [4,32,512,64] transposed views.
		{"permuted input", []int64{4, 32, 512, 64}, [4][]int64{{4194304, 131072, 128, 1}, {2097152, 128, 4096, 1}},
			[]int64{4, 32, 512, 64}, [4][]int64{{4194304, 131072, 128, 1}, {2097152, 128, 4096, 1}}},
		{"expanded source", []int64{64, 512, 512}, [4][]int64{{262144, 512, 1}, {512, 0, 1}},
			[]int64{64, 512, 512}, [4][]int64{{262144, 512, 1}, {512, 0, 1}}},
	} {
		l := ewCoalesce(c.shape, c.strides)
		if !slices.Equal(l.sizes, c.sizes) {
			t.Errorf("%s: sizes %v, want %v", c.name, l.sizes, c.sizes)
		}
		for k := range 4 {
			if !slices.Equal(l.strides[k], c.want[k]) || (l.strides[k] == nil) != (c.want[k] == nil) {
				t.Errorf("%s: strides[%d] %v, want %v", c.name, k, l.strides[k], c.want[k])
			}
		}
	}
}

// ewCoalesceCovers checks that the coalesced space visits the same offsets
// as the original one, in some order.
func TestEwCoalesceVisitsSameOffsets(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 300; trial++ {
		nd := r.IntN(5)
		shape := make([]int64, nd)
		for i := range shape {
			shape[i] = int64(1 + r.IntN(4))
		}
		var strides [4][]int64
		for k := 0; k < 3; k++ {
			st := ContiguousStrides(shape)
			perm := r.Perm(nd)
			acc := int64(1)
			for _, p := range perm {
				st[p] = acc
				acc *= shape[p]
			}
			for i := range st {
				if r.IntN(4) == 0 {
					st[i] = 0
				}
			}
			strides[k] = st
		}
		l := ewCoalesce(shape, strides)
		visit := func(shape []int64, st [4][]int64) [][3]int64 {
			var out [][3]int64
			idx := make([]int64, len(shape))
			n := int64(1)
			for _, d := range shape {
				n *= d
			}
			for i := int64(0); i < n; i++ {
				var o [3]int64
				for k := range 3 {
					for d := range idx {
						o[k] += idx[d] * st[k][d]
					}
				}
				out = append(out, o)
				for d := len(idx) - 1; d >= 0; d-- {
					idx[d]++
					if idx[d] < shape[d] {
						break
					}
					idx[d] = 0
				}
			}
			slices.SortFunc(out, func(a, b [3]int64) int {
				for k := range 3 {
					if a[k] != b[k] {
						return int(a[k] - b[k])
					}
				}
				return 0
			})
			return out
		}
		a, b := visit(shape, strides), visit(l.sizes, l.strides)
		if !slices.Equal(a, b) {
			t.Fatalf("shape %v strides %v: coalesced %v %v visits other offsets", shape, strides, l.sizes, l.strides)
		}
		if len(l.sizes) > 1 {
			for i := 0; i+1 < len(l.sizes); i++ {
				merge := true
				for k := range 3 {
					if l.strides[k][i] != l.strides[k][i+1]*l.sizes[i+1] {
						merge = false
					}
				}
				if merge {
					t.Fatalf("shape %v strides %v: %v %v left mergeable dims", shape, strides, l.sizes, l.strides)
				}
			}
		}
	}
}

func TestEwMagicDivision(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	divisors := []int64{1, 2, 3, 5, 7, 64, 100, 127, 128, 512, 1000, 4096, 11008, 250880, 1<<20 + 1, 1<<30 - 1, 1 << 30, 1<<31 - 1}
	for i := 0; i < 200; i++ {
		divisors = append(divisors, 1+r.Int64N(1<<31-1))
	}
	for _, d := range divisors {
		m, s := ewMagic(d)
		for _, n := range []uint32{0, 1, uint32(d - 1), uint32(d), uint32(min(d+1, 1<<31-1)), 1<<31 - 1, 1<<31 - 2} {
			if int64(n) >= 1<<31 {
				continue
			}
			if got, want := ewDivide(n, m, s), uint32(int64(n)/d); got != want {
				t.Fatalf("%d / %d = %d, want %d (magic %d shift %d)", n, d, got, want, m, s)
			}
		}
		for j := 0; j < 200; j++ {
			n := uint32(r.Int64N(1 << 31))
			if got, want := ewDivide(n, m, s), uint32(int64(n)/d); got != want {
				t.Fatalf("%d / %d = %d, want %d", n, d, got, want)
			}
		}
	}
}

func TestEwParamsLayout(t *testing.T) {
	p := ewParams{units: 5, tail: 3, ndim: 2}
	p.ptr[1] = 0x1000
	p.st[3][7] = 9
	p.ci[3] = 42
	b := p.bytes()
	if len(b) != ewParamsSize {
		t.Fatalf("EwParams is %d bytes, want %d", len(b), ewParamsSize)
	}
	le := func(off int) uint64 {
		var v uint64
		for i := 7; i >= 0; i-- {
			v = v<<8 | uint64(b[off+i])
		}
		return v
	}
	// Offsets as the C struct lays them out (see elementwise.cu).
	for _, c := range []struct {
		off  int
		want uint64
	}{{8, 0x1000}, {32, 5}, {40, 3}, {48, 2}, {184 + 8*(3*8+7), 9}, {504 + 24, 42}} {
		if got := le(c.off); got != c.want {
			t.Errorf("offset %d = %d, want %d", c.off, got, c.want)
		}
	}
	g := ewGatherParams{limit: 7}
	if gb := g.bytes(); len(gb) != ewGatherParamsSize || gb[368] != 7 {
		t.Errorf("EwGather is %d bytes (limit at 368: %d)", len(gb), gb[368])
	}
}

// ewFake is a tensor with a layout and an address, for plans (no GPU).
func ewFake(ptr cuda.DevicePtr, dtype string, shape []int64, strides ...int64) *Tensor {
	if len(strides) == 0 {
		strides = ContiguousStrides(shape)
	}
	return &Tensor{Ptr: ptr, Shape: shape, Strides: strides, DType: dtype, Span: span(shape, strides)}
}

func TestEwMakePlan(t *testing.T) {
	const a, b, c = 1 << 20, 1 << 30, 1 << 34
	big := []int64{4, 32, 1024, 1024}
	for _, tc := range []struct {
		name  string
		spec  ewSpec
		prob  ewProblem
		want  map[string]string
		ndim  int32
		units int64
		tail  int64
	}{
		{"add f16 contiguous", ewSpec{op: "add", ct: "float"},
			ewProblem{out: ewFake(a, "f16", big), in: [3]ewOperand{ewTensorOperand(ewFake(b, "f16", big)), ewTensorOperand(ewFake(c, "f16", big))}},
			map[string]string{"EW_OP": "EW_ADD", "EW_VEC": "8", "EW_UNROLL": "2", "EW_K1": "EW_KT", "EW_K2": "EW_KT", "EW_K3": "EW_KN", "EW_DO": "EW_F16", "EW_FLAT": "1"},
			1, 4 * 32 * 1024 * 1024 / 8, 0},
		{"cast f16 to f32", ewSpec{op: "copy", ct: "float"},
			ewProblem{out: ewFake(a, "f32", []int64{4, 512, 4096}), in: [3]ewOperand{ewTensorOperand(ewFake(b, "f16", []int64{4, 512, 4096}))}},
			map[string]string{"EW_VEC": "4", "EW_UNROLL": "2", "EW_D1": "EW_F16", "EW_DO": "EW_F32", "EW_CT": "float"},
			1, 4 * 512 * 4096 / 4, 0},
		{"raw copy f16", ewSpec{op: "copy", raw: true},
			ewProblem{out: ewFake(a, "f16", []int64{1000}), in: [3]ewOperand{ewTensorOperand(ewFake(b, "f16", []int64{1000}))}},
			map[string]string{"EW_VEC": "8", "EW_D1": "EW_I16", "EW_DO": "EW_I16", "EW_CT": "int"},
			1, 125, 0},
		{"tail", ewSpec{op: "mul", ct: "float"},
			ewProblem{out: ewFake(a, "f32", []int64{1, 1, 4099}), in: [3]ewOperand{ewTensorOperand(ewFake(b, "f32", []int64{1, 1, 4099})), ewConstOperand(ewScalar{f: 0.5, cat: ewFloatCat})}},
			map[string]string{"EW_VEC": "4", "EW_UNROLL": "2", "EW_K2": "EW_KC"},
			1, 1024, 3},
		{"0-dim operand broadcast", ewSpec{op: "add", ct: "float"},
			ewProblem{out: ewFake(a, "f16", []int64{4, 512, 4096}), in: [3]ewOperand{ewTensorOperand(ewFake(b, "f16", []int64{4, 512, 4096})), ewTensorOperand(ewFake(c, "f64", nil))}},
			map[string]string{"EW_VEC": "4", "EW_K2": "EW_KB", "EW_D2": "EW_F64"},
			1, 4 * 512 * 4096 / 4, 0},
		{"row broadcast", ewSpec{op: "mul", ct: "float"},
			ewProblem{out: ewFake(a, "f16", []int64{4, 512, 4096}), in: [3]ewOperand{ewTensorOperand(ewFake(b, "f16", []int64{4096})), ewTensorOperand(ewFake(c, "f16", []int64{4, 512, 4096}))}},
			map[string]string{"EW_VEC": "8", "EW_K1": "EW_KT", "EW_K2": "EW_KT"},
			2, 2048 * 512, 0},
		{"strided rope", ewSpec{op: "mul", ct: "float"},
			ewProblem{out: ewFake(a, "f16", []int64{4, 32, 512, 128}), in: [3]ewOperand{
				ewTensorOperand(ewFake(b, "f16", []int64{4, 32, 512, 128}, 2097152, 128, 4096, 1)),
				ewTensorOperand(ewFake(c, "f16", []int64{1, 1, 512, 128}))}},
			map[string]string{"EW_VEC": "8", "EW_FLAT": ""}, 4, 4 * 32 * 512 * 16, 0},
		{"inner stride 0: one per unit", ewSpec{op: "copy", raw: true},
			ewProblem{out: ewFake(a, "i64", []int64{4, 1, 1, 512}), in: [3]ewOperand{ewTensorOperand(ewFake(b, "i64", []int64{4, 1, 1, 512}, 1, 0, 0, 0))}},
			map[string]string{"EW_VEC": "2", "EW_K1": "EW_KB", "EW_CT": "long long"}, 2, 1024, 0},
		{"no vectors: odd inner size", ewSpec{op: "add", ct: "float"},
			ewProblem{out: ewFake(a, "f16", []int64{16, 33}), in: [3]ewOperand{ewTensorOperand(ewFake(b, "f16", []int64{16, 33})), ewTensorOperand(ewFake(c, "f16", []int64{1, 33}))}},
			map[string]string{"EW_VEC": "1", "EW_UNROLL": "4"}, 2, 16 * 33, 0},
		{"no vectors: misaligned", ewSpec{op: "add", ct: "float"},
			ewProblem{out: ewFake(a, "f16", []int64{1024}), in: [3]ewOperand{ewTensorOperand(ewFake(b+2, "f16", []int64{1024})), ewTensorOperand(ewFake(c, "f16", []int64{1024}))}},
			map[string]string{"EW_VEC": "1"}, 1, 1024, 0},
		{"bool and i64", ewSpec{op: "copy", ct: "bool"},
			ewProblem{out: ewFake(a, "i64", []int64{4, 512}), in: [3]ewOperand{ewTensorOperand(ewFake(b, "bool", []int64{4, 512}))}},
			map[string]string{"EW_VEC": "2", "EW_UNROLL": "2"}, 1, 1024, 0},
	} {
		pl, err := ewMakePlan(tc.spec, []ewProblem{tc.prob})
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		for k, v := range tc.want {
			if pl.defines[k] != v {
				t.Errorf("%s: %s=%q, want %q (defines %v)", tc.name, k, pl.defines[k], v, pl.defines)
			}
		}
		if _, wide := pl.defines["EW_IDX64"]; wide {
			t.Errorf("%s: 64-bit indexing", tc.name)
		}
		p := pl.params[0]
		if p.ndim != tc.ndim || p.units != tc.units || p.tail != tc.tail {
			t.Errorf("%s: ndim %d units %d tail %d, want %d %d %d", tc.name, p.ndim, p.units, p.tail, tc.ndim, tc.units, tc.tail)
		}
	}
	// Beyond 2^31 elements: 64-bit indexing.
	huge := []int64{1 << 31}
	pl, err := ewMakePlan(ewSpec{op: "copy", raw: true}, []ewProblem{{out: ewFake(a, "u8", huge), in: [3]ewOperand{ewTensorOperand(ewFake(b, "u8", huge))}}})
	if err != nil || pl.defines["EW_IDX64"] != "1" {
		t.Errorf("2^31 elements: %v %v", pl, err)
	}
	// A batch whose problems disagree on broadcasting the innermost
	// dimension runs without vectors.
	pl, err = ewMakePlan(ewSpec{op: "copy", raw: true}, []ewProblem{
		{out: ewFake(a, "f16", []int64{4, 64}, 128, 1), in: [3]ewOperand{ewTensorOperand(ewFake(b, "f16", []int64{4, 64}))}},
		{out: ewFake(a+128, "f16", []int64{4, 64}, 128, 1), in: [3]ewOperand{ewTensorOperand(ewFake(c, "f16", []int64{4, 64}, 1, 0))}},
	})
	if err != nil || pl.defines["EW_VEC"] != "1" || len(pl.params) != 2 {
		t.Errorf("mixed batch: %v %v", pl, err)
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

// ewCompileCase is one kernel to compile.
type ewCompileCase struct {
	name, file, code, fn string
	defs                 map[string]string
}

// ewCompileCases lists a kernel for every op with every operand kind and
// vector width it may get, the casts between all dtypes, gathers and
// arange.
func ewCompileCases() []ewCompileCase {
	var cs []ewCompileCase
	add := func(name string, defs map[string]string) {
		cs = append(cs, ewCompileCase{name: name, file: "elementwise.cu", code: ewSource, fn: "kr_ew", defs: defs})
	}
	dtypesFor := func(def ewOpDef) []string {
		switch def.result {
		case ewIntegral:
			return []string{"bool", "i64", "i32"}
		case ewToFloat:
			return []string{"f16", "bf16", "f32", "f64"}
		}
		return []string{"f16", "f32", "f64", "i64", "i32", "bool"}
	}
	for name, def := range ewOps {
		for _, dt := range dtypesFor(def) {
			if dt == "bool" && (name == "neg" || name == "sub" || name == "rsub") {
				continue
			}
			code := def.code
			if name == "gelu" {
				code = "GELU_TANH" // GELU compiles in the loop below
			}
			out := dt
			if def.result == ewToBool {
				out = "bool"
			}
			defs := map[string]string{"EW_OP": "EW_" + code, "EW_CT": ewCType(dt), "EW_DO": ewCodes[out],
				"EW_VEC": "8", "EW_UNROLL": "2"}
			kinds := []string{"EW_KT", "EW_KB", "EW_KC"}
			for k := 1; k <= 3; k++ {
				n := fmt.Sprint(k)
				defs["EW_D"+n], defs["EW_K"+n] = ewCodes[dt], "EW_KN"
				if k <= def.n {
					defs["EW_K"+n] = kinds[(k-1)%3]
				}
			}
			add(name+"/"+dt, defs)
		}
	}
	add("gelu/f16", map[string]string{"EW_OP": "EW_GELU", "EW_CT": "float", "EW_DO": "EW_F16", "EW_D1": "EW_F16",
		"EW_D2": "EW_BOOL", "EW_D3": "EW_BOOL", "EW_K1": "EW_KT", "EW_K2": "EW_KN", "EW_K3": "EW_KN", "EW_IDX64": "1"})
	for _, code := range []string{"DIV_TRUNC", "DIV_FLOOR"} {
		for _, dt := range []string{"f32", "i64"} {
			add(code+"/"+dt, map[string]string{"EW_OP": "EW_" + code, "EW_CT": ewCType(dt), "EW_DO": ewCodes[dt],
				"EW_D1": ewCodes[dt], "EW_D2": ewCodes[dt], "EW_D3": "EW_BOOL", "EW_K1": "EW_KT", "EW_K2": "EW_KC", "EW_K3": "EW_KN"})
		}
	}
	all := []string{"bool", "u8", "i8", "i16", "i32", "i64", "f16", "bf16", "f32", "f64"}
	for _, from := range all {
		for _, to := range all {
			add("copy/"+from+"-"+to, map[string]string{"EW_OP": "EW_COPY", "EW_CT": ewCType(from), "EW_DO": ewCodes[to],
				"EW_D1": ewCodes[from], "EW_D2": "EW_BOOL", "EW_D3": "EW_BOOL", "EW_K1": "EW_KT", "EW_K2": "EW_KN", "EW_K3": "EW_KN",
				"EW_VEC": "4", "EW_UNROLL": "2", "EW_FLAT": "1"})
		}
		cs = append(cs, ewCompileCase{name: "arange/" + from, file: "fill.cu", code: ewFillSource, fn: "kr_arange",
			defs: map[string]string{"EW_DO": ewCodes[from]}})
	}
	for _, raw := range []string{"u8", "i16", "i32", "i64"} {
		for _, idx := range []string{"i32", "i64"} {
			for _, vec := range []string{"1", "2", "16"} {
				cs = append(cs, ewCompileCase{name: "gather/" + raw + "/" + idx + "/" + vec, file: "index.cu", code: ewIndexSource, fn: "kr_gather",
					defs: map[string]string{"EW_DS": ewCodes[raw], "EW_DI": ewCodes[idx], "EW_VEC": vec, "EW_UNROLL": "2"}})
			}
		}
	}
	// The faithful kernels (faithful.go): PyTorch's generic, vectorized
	// and unrolled loops, and cat's batched copy.
	pt := func(name, fn, vec, ept string, flat bool) {
		defs := map[string]string{"EW_OP": "EW_ADD", "EW_CT": "float", "EW_DO": "EW_F16", "EW_D1": "EW_F16",
			"EW_D2": "EW_F16", "EW_D3": "EW_BOOL", "EW_K1": "EW_KT", "EW_K2": "EW_KT", "EW_K3": "EW_KN",
			"EW_VEC": vec, "EW_PT_NT": "128", "EW_PT_EPT": ept}
		if flat {
			defs["EW_FLAT"] = "1"
		}
		cs = append(cs, ewCompileCase{name: name, file: "elementwise.cu", code: ewSource, fn: fn, defs: defs})
	}
	pt("pt/generic/add/f16", "kr_ew_pt_generic", "1", "4", false)
	pt("pt/vectorized8/add/f16", "kr_ew_pt_lin", "8", "8", true)
	pt("pt/unrolled/add/f16", "kr_ew_pt_lin", "1", "4", true)
	for _, c := range []struct{ name, ct, from, to string }{
		{"float", "float", "f16", "f32"}, {"long", "long long", "bool", "i64"}, {"bool", "bool", "i64", "bool"},
	} {
		for _, call := range []bool{false, true} {
			defs := map[string]string{"EW_OP": "EW_COPY", "EW_CT": ewCType(c.from), "EW_DO": ewCodes[c.to], "EW_D1": ewCodes[c.from],
				"EW_D2": "EW_BOOL", "EW_D3": "EW_BOOL", "EW_K1": "EW_KT", "EW_K2": "EW_KN", "EW_K3": "EW_KN",
				"EW_VEC": "1", "EW_PT_NT": "128", "EW_PT_EPT": "4", "EW_FLAT": "1", "EW_PT_DYN": c.ct}
			name := "pt/dyncopy/" + c.name
			if call {
				defs["EW_PT_DYN_CALL"] = "1"
				name += "/call"
			}
			cs = append(cs, ewCompileCase{name: name, file: "elementwise.cu", code: ewSource, fn: "kr_ew_pt_dyncopy", defs: defs})
		}
	}
	for _, b := range []string{"1", "2", "4", "8"} {
		cs = append(cs, ewCompileCase{name: "pt/cat/" + b, file: "cat.cu", code: ewCatSource, fn: "kr_cat_pt",
			defs: map[string]string{"EW_CAT_BYTES": b, "EW_CAT_DIMS": "4", "EW_CAT_BATCH": "2"}})
	}
	// The most parameters a launch takes: ptCatBatch inputs of
	// ptCatMaxDims dimensions, 64-bit indices.
	for _, b := range []string{"2"} {
		cs = append(cs, ewCompileCase{name: "pt/cat/max/" + b, file: "cat.cu", code: ewCatSource, fn: "kr_cat_pt",
			defs: map[string]string{"EW_CAT_BYTES": b, "EW_CAT_DIMS": fmt.Sprint(ptCatMaxDims),
				"EW_CAT_BATCH": fmt.Sprint(ptCatBatch), "EW_IDX64": "1"}})
	}
	// PyTorch's parameter layout, as traced: 64 inputs, 64 records.
	for _, b := range []string{"2", "8"} {
		cs = append(cs, ewCompileCase{name: "pt/catmeta/" + b, file: "cat.cu", code: ewCatSource, fn: "kr_cat_ptmeta",
			defs: map[string]string{"EW_CAT_BYTES": b, "EW_CAT_DIMS": "4", "EW_CAT_PT_N": "64", "EW_CAT_PT_S": "64"}})
	}
	return cs
}

// ewCompileDefault names the cases compiled by default: one of each kind
// of kernel (all of them take minutes; set KREPLAY_EW_COMPILE_ALL=1).
var ewCompileDefault = []string{
	"add/f16", "mul/i64", "eq/i64", "bitwise_and/bool", "where/f16", "masked_fill/f32", "gelu_tanh/bf16", "gelu/f16",
	"pow/i32", "sin/f64", "DIV_FLOOR/i64", "copy/f16-f32", "copy/f32-bf16", "copy/i64-bool", "copy/bool-f64",
	"copy/f64-f16", "arange/i64", "arange/f32", "gather/i16/i64/16", "gather/u8/i32/1",
	"pt/generic/add/f16", "pt/vectorized8/add/f16", "pt/unrolled/add/f16", "pt/dyncopy/float", "pt/dyncopy/long/call", "pt/cat/2", "pt/cat/8", "pt/cat/max/2",
	"pt/catmeta/2",
}

// TestEwKernelsCompile compiles kernel variants with NVRTC where the
// library is installed (no GPU needed) and checks that none keeps a large
// stack frame (a local copy of the parameters would) or spills much.
func TestEwKernelsCompile(t *testing.T) {
	arch := nvrtcArch(t)
	cases := ewCompileCases()
	if os.Getenv("KREPLAY_EW_COMPILE_ALL") == "" {
		cases = slices.DeleteFunc(cases, func(c ewCompileCase) bool { return !slices.Contains(ewCompileDefault, c.name) })
		if len(cases) != len(ewCompileDefault) {
			t.Errorf("%d default cases found, want %d", len(cases), len(ewCompileDefault))
		}
	}
	for _, c := range cases {
		src := ewSources(c.file, c.code, c.defs)
		opts := append(src.options(arch), "--ptxas-options=-v")
		res, err := nvrtc.Compile(src.Code, src.Name, opts)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		fn := false
		for _, l := range strings.Split(res.Log, "\n") {
			if strings.Contains(l, "warning") {
				t.Logf("%s: %s", c.name, l) // wording varies with the NVRTC version
			}
			if strings.Contains(l, "Function properties for "+c.fn) {
				fn = true
				continue
			}
			if fn && strings.Contains(l, "stack frame") {
				// sin and cos keep a small frame for huge arguments; a
				// copy of the parameters would take hundreds of bytes.
				var frame, spill int
				fmt.Sscanf(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), "ptxas")), ". %d bytes stack frame, %d bytes spill stores", &frame, &spill)
				if frame >= 128 || spill > 64 {
					t.Errorf("%s: %s", c.name, strings.TrimSpace(l))
				} else if frame > 0 {
					t.Logf("%s: %s", c.name, strings.TrimSpace(l))
				}
				fn = false
			}
		}
	}
	t.Logf("%d kernels compiled for sm_%d", len(cases), arch)
}
