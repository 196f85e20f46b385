package tier3

import (
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/kreplay/kreplay/internal/cuda"
	"github.com/kreplay/kreplay/signatures"
)

// CPU tests of the elementwise family's layouts (strided.go): broadcasts,
// coalescing, fast division, the parameter block and the plans' defines.

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
