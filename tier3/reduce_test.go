package tier3

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/kreplay/kreplay/signatures"
)

// rdIn is one traced input of a test signature: a tensor (typ is the
// profiler's dtype name, strides nil for contiguous) or a scalar (typ
// "Scalar", "ScalarList" or "" for None, with its concrete value).
type rdIn struct {
	typ     string
	shape   []int64
	strides []int64
	val     string
}

func rdT(typ string, shape ...int64) rdIn { return rdIn{typ: typ, shape: shape} }

// rdTS is a tensor input with explicit strides.
func rdTS(typ string, shape, strides []int64) rdIn {
	return rdIn{typ: typ, shape: shape, strides: strides}
}

func rdS(val string) rdIn     { return rdIn{typ: "Scalar", val: val} }
func rdL(val string) rdIn     { return rdIn{typ: "ScalarList", val: val} }
func rdNone() rdIn            { return rdIn{} }
func rdJSON(v []int64) string { return strings.ReplaceAll(fmt.Sprint(v), " ", ",") }

// rdSig builds a tier-3 signature through the import path.
func rdSig(t *testing.T, op string, ins ...rdIn) *signatures.Signature {
	t.Helper()
	var dims, strides, types, vals []string
	for _, in := range ins {
		sh, st := in.shape, in.strides
		if sh == nil {
			sh = []int64{}
		}
		if st == nil {
			st = ContiguousStrides(sh)
		}
		dims = append(dims, rdJSON(sh))
		strides = append(strides, rdJSON(st))
		types = append(types, fmt.Sprintf("%q", in.typ))
		vals = append(vals, fmt.Sprintf("%q", in.val))
	}
	j := func(s []string) string { return "[" + strings.Join(s, ",") + "]" }
	return opSig(t, op, j(dims), j(strides), j(types), j(vals))
}

func TestRdParseDims(t *testing.T) {
	for _, c := range []struct {
		v    string
		rank int
		dims []int
		all  bool
		bad  bool
	}{
		{"[-1]", 3, []int{2}, false, false},
		{"-1", 3, []int{2}, false, false},
		{"[0, 2]", 3, []int{0, 2}, false, false},
		{"[2, 0]", 3, []int{0, 2}, false, false},
		{"[-1, -3]", 3, []int{0, 2}, false, false},
		{"", 3, nil, true, false},
		{"None", 2, nil, true, false},
		{"[]", 2, nil, true, false},
		{"0", 0, nil, true, false},
		{"-1", 0, nil, true, false},
		{"3", 3, nil, false, true},
		{"-4", 3, nil, false, true},
		{"[1, 1]", 3, nil, false, true},
		{"x", 3, nil, false, true},
	} {
		dims, all, err := rdParseDims(c.v, c.rank)
		if (err != nil) != c.bad {
			t.Errorf("%q rank %d: error %v, want error %v", c.v, c.rank, err, c.bad)
			continue
		}
		if !c.bad && (!slices.Equal(dims, c.dims) || all != c.all) {
			t.Errorf("%q rank %d: dims %v all %v, want %v %v", c.v, c.rank, dims, all, c.dims, c.all)
		}
	}
	for _, c := range []struct {
		v    string
		want bool
		bad  bool
	}{{"True", true, false}, {"False", false, false}, {"", false, false}, {"maybe", false, true}} {
		got, err := rdParseBool(c.v)
		if (err != nil) != c.bad || got != c.want {
			t.Errorf("rdParseBool(%q) = %v, %v", c.v, got, err)
		}
	}
	for v, want := range map[string]string{"": "", "None": "", "6": "f32", "5": "f16", "15": "bf16", "4": "i64", "11": "bool"} {
		if got, err := rdParseScalarType(v); err != nil || got != want {
			t.Errorf("rdParseScalarType(%q) = %q, %v; want %q", v, got, err, want)
		}
	}
	if _, err := rdParseScalarType("9"); err == nil {
		t.Error("complex dtype accepted")
	}
}

func TestParseReduce(t *testing.T) {
	for _, c := range []struct {
		name     string
		op       string
		ins      []rdIn
		out      string // values dtype ("" none)
		indices  bool
		outShape []int64
		bad      bool
	}{
		{"llama mean", "aten::mean", []rdIn{rdT("float", 4, 512, 4096), rdL("[-1]"), rdS("True"), rdNone()}, "f32", false, []int64{4, 512, 1}, false},
		{"sum f16 dim", "aten::sum", []rdIn{rdT("c10::Half", 4, 512, 1024), rdL("[-1]"), rdS("False"), rdNone()}, "f16", false, []int64{4, 512}, false},
		{"sum all", "aten::sum", []rdIn{rdT("c10::BFloat16", 8, 16), rdNone()}, "bf16", false, []int64{}, false},
		{"sum dtype f32", "aten::sum", []rdIn{rdT("c10::Half", 8, 16), rdL("[0]"), rdS("True"), rdS("6")}, "f32", false, []int64{1, 16}, false},
		{"sum bool", "aten::sum", []rdIn{rdT("bool", 4, 512), rdL("[-1]"), rdS("False"), rdNone()}, "i64", false, []int64{4}, false},
		{"sum int", "aten::sum", []rdIn{rdT("int", 4, 512), rdL("[0]"), rdS("False"), rdNone()}, "i64", false, []int64{512}, false},
		{"prod", "aten::prod", []rdIn{rdT("float", 4, 8), rdS("1"), rdS("False"), rdNone()}, "f32", false, []int64{4}, false},
		{"max all i64", "aten::max", []rdIn{rdT("long int", 1)}, "i64", false, []int64{}, false},
		{"max dim", "aten::max", []rdIn{rdT("c10::Half", 64, 1000), rdS("1"), rdS("False")}, "f16", true, []int64{64}, false},
		{"min dim keep", "aten::min", []rdIn{rdT("float", 64, 1000), rdS("0"), rdS("True")}, "f32", true, []int64{1, 1000}, false},
		{"amax", "aten::amax", []rdIn{rdT("c10::BFloat16", 32, 4096), rdL("[-1]"), rdS("True")}, "bf16", false, []int64{32, 1}, false},
		{"argmax", "aten::argmax", []rdIn{rdT("c10::Half", 4, 512, 1024), rdS("-1"), rdS("False")}, "", true, []int64{4, 512}, false},
		{"argmax all", "aten::argmax", []rdIn{rdT("float", 100, 37), rdNone(), rdS("False")}, "", true, []int64{}, false},
		{"argmin keep all", "aten::argmin", []rdIn{rdT("float", 10, 3), rdNone(), rdS("True")}, "", true, []int64{1, 1}, false},
		{"any", "aten::any", []rdIn{rdT("bool", 250880, 1), rdS("-1"), rdS("False")}, "bool", false, []int64{250880}, false},
		{"all", "aten::all", []rdIn{rdT("bool", 4)}, "bool", false, []int64{}, false},
		{"any u8", "aten::any", []rdIn{rdT("unsigned char", 4, 3), rdS("1"), rdS("False")}, "u8", false, []int64{4}, false},
		{"max binary", "aten::max", []rdIn{rdT("float", 4), rdT("float", 4)}, "", false, nil, true},
		{"mean int", "aten::mean", []rdIn{rdT("long int", 4), rdL("[0]"), rdS("False"), rdNone()}, "", false, nil, true},
		{"bad dim", "aten::sum", []rdIn{rdT("float", 4), rdL("[3]"), rdS("False"), rdNone()}, "", false, nil, true},
		{"dims not recorded", "aten::sum", []rdIn{rdT("float", 4, 8), rdL(""), rdS("False"), rdNone()}, "", false, nil, true},
		{"complex", "aten::sum", []rdIn{rdT("c10::complex<float>", 4), rdL("[0]"), rdS("False"), rdNone()}, "", false, nil, true},
	} {
		runParseCase(t, c.name, c.op, c.ins, c.bad, parseReduce, func(t *testing.T, s *reduceSpec) {
			if s.out != c.out || s.indices != c.indices {
				t.Errorf("out %q indices %v, want %q %v", s.out, s.indices, c.out, c.indices)
			}
			if got := s.outShape(c.ins[0].shape); !slices.Equal(got, c.outShape) {
				t.Errorf("output shape %v, want %v", got, c.outShape)
			}
		})
	}
}

// TestRdUnsupportedWraps checks that unsupported cases wrap ErrUnsupported,
// so that they fall back to the approximate kernel instead of failing.
func TestRdUnsupportedWraps(t *testing.T) {
	sig := rdSig(t, "aten::max", rdT("float", 4), rdT("float", 4))
	if _, err := parseReduce(sig); err == nil || !strings.Contains(err.Error(), ErrUnsupported.Error()) {
		t.Fatalf("error %v does not wrap ErrUnsupported", err)
	}
}

func TestReduceFamilyRegistered(t *testing.T) {
	ops := Ops()
	for _, op := range []string{"aten::sum", "aten::mean", "aten::prod", "aten::max", "aten::min", "aten::amax",
		"aten::amin", "aten::argmax", "aten::argmin", "aten::any", "aten::all", "aten::_softmax", "aten::softmax",
		"aten::_log_softmax", "aten::log_softmax", "aten::native_layer_norm", "aten::layer_norm",
		"aten::cumsum", "aten::cumprod"} {
		if !slices.Contains(ops, op) {
			t.Errorf("%s has no builder", op)
		}
	}
}

func TestPlanReduceChoice(t *testing.T) {
	const sms = planSMs
	for _, c := range []struct {
		name    string
		shape   []int64
		strides []int64 // nil: contiguous
		dims    []int   // nil: all
		esize   int64
		ordered bool
		cols    bool
		V       int64
		split   bool // more than one partial per output
		TPR     int64
	}{
		{"llama mean f32 [4,512,4096] -1", []int64{4, 512, 4096}, nil, []int{2}, 4, false, false, 4, false, 256},
		{"sum f16 [8192,16384] -1", []int64{8192, 16384}, nil, []int{1}, 2, false, false, 8, false, 256},
		{"f16 rows of 512 widen", []int64{4096, 512}, nil, []int{1}, 2, false, false, 8, false, 64},
		{"mean f32 [16384,4096] -1", []int64{16384, 4096}, nil, []int{1}, 4, false, false, 4, false, 128},
		{"full f32 64M", []int64{1 << 26}, nil, nil, 4, false, false, 4, true, 512},
		{"full f32 non-contiguous merges", []int64{1000, 37}, []int64{1, 1000}, nil, 4, false, false, 4, true, 512},
		{"argmax full non-contiguous keeps order", []int64{1000, 37}, []int64{1, 1000}, nil, 4, true, false, 1, true, 512},
		{"outer dim 0", []int64{65536, 2048}, nil, []int{0}, 2, false, true, 8, true, 0},
		{"transposed last dim", []int64{1024, 512}, []int64{1, 1024}, []int{1}, 2, false, true, 8, true, 0},
		{"any bool [250880,1] -1", []int64{250880, 1}, nil, []int{1}, 1, false, true, 8, false, 0},
		{"misaligned rows", []int64{256, 300}, []int64{301, 1}, []int{1}, 2, false, false, 1, false, 256},
		{"short rows go to cols", []int64{100000, 4}, nil, []int{1}, 4, false, true, 1, false, 0},
		{"max i64[1]", []int64{1}, nil, nil, 8, false, false, 1, false, 4},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := stridesOr(c.shape, c.strides)
			red := make([]bool, len(c.shape))
			for i := range red {
				red[i] = c.dims == nil
			}
			for _, d := range c.dims {
				red[d] = true
			}
			p, err := planReduce(c.shape, st, red, c.esize, c.ordered, sms)
			if err != nil {
				t.Fatal(err)
			}
			if p.cols != c.cols || p.V != c.V || (p.split > 1) != c.split || (!c.cols && p.TPR != c.TPR) {
				t.Errorf("cols %v V %d split %d TPR %d; want cols %v V %d split %v TPR %d",
					p.cols, p.V, p.split, p.TPR, c.cols, c.V, c.split, c.TPR)
			}
			if p.split > 1 && (p.chunk%p.V != 0 || (p.split-1)*p.chunk >= p.R || p.split*p.chunk < p.R) {
				t.Errorf("split %d chunk %d does not tile R %d in vectors of %d", p.split, p.chunk, p.R, p.V)
			}
			if !c.cols {
				want := uint32(256)
				if p.TPR > 32 {
					want = uint32(p.TPR)
				}
				if p.block[0] != want {
					t.Errorf("block %v for TPR %d", p.block, p.TPR)
				}
			} else if p.block != [3]uint32{32, 8, 1} || p.grid[1] != uint32(p.split) {
				t.Errorf("cols grid %v block %v split %d", p.grid, p.block, p.split)
			}
			if p.grid[0] == 0 || p.grid[0] > 64*sms {
				t.Errorf("grid %v", p.grid)
			}
			if got := len(p.raw().Data); got != 48*8 {
				t.Errorf("RdPlan is %d bytes, want 384", got)
			}
		})
	}
}

// simReduce runs a plan's index arithmetic, as the kernels do it, over x
// (indexed by storage offset): the sum and the argmax (value, index) of
// every output, by output offset.
func simReduce(p *rdPlan, x []float64) (sum, amax []float64, aidx []int64) {
	off := func(i int64, ds []rdDim, out bool) int64 {
		var o int64
		for d := len(ds) - 1; d >= 0; d-- {
			q := i / ds[d].size
			s := ds[d].in
			if out {
				s = ds[d].out
			}
			o += (i - q*ds[d].size) * s
			i = q
		}
		return o
	}
	roff := func(r int64) int64 {
		switch len(p.red) {
		case 0:
			return 0
		case 1:
			return r * p.red[0].in
		}
		return off(r, p.red, false)
	}
	type st struct {
		s, v float64
		i    int64
	}
	comb := func(a *st, v float64, s float64, i int64) {
		a.s += s
		if v > a.v || (v == a.v && i < a.i) {
			a.v, a.i = v, i
		}
	}
	parts := make([]st, p.O*p.split)
	for w := range parts {
		parts[w] = st{v: math.Inf(-1), i: math.MaxInt64}
		o, s := int64(w)/p.split, int64(w)%p.split
		var base int64
		if p.cols {
			I := p.kept[len(p.kept)-1].size
			ou, i := o/I, o%I
			base = off(ou*I, p.kept, false) + i*p.kept[len(p.kept)-1].in
		} else {
			base = off(o, p.kept, false)
		}
		for r := s * p.chunk; r < min(p.R, (s+1)*p.chunk); r++ {
			v := x[base+roff(r)]
			comb(&parts[w], v, v, r)
		}
	}
	sum, amax, aidx = make([]float64, p.O), make([]float64, p.O), make([]int64, p.O)
	for o := int64(0); o < p.O; o++ {
		a := st{v: math.Inf(-1), i: math.MaxInt64}
		for s := int64(0); s < p.split; s++ {
			b := parts[o*p.split+s]
			comb(&a, b.v, b.s, b.i)
		}
		oo := o
		if !p.ocontig {
			oo = off(o, p.kept, true)
		}
		sum[oo], amax[oo], aidx[oo] = a.s, a.v, a.i
	}
	return sum, amax, aidx
}

// naiveReduce is the reference: per output (row-major over the kept dims)
// the elements in row-major order of the reduced dims.
func naiveReduce(shape, strides []int64, reduced []bool, x []float64) [][]float64 {
	n, o := int64(1), int64(1)
	for i, d := range shape {
		n *= d
		if !reduced[i] {
			o *= d
		}
	}
	rows := make([][]float64, o)
	idx := make([]int64, len(shape))
	for k := int64(0); k < n; k++ {
		var off, out int64
		for d := range shape {
			off += idx[d] * strides[d]
			if !reduced[d] {
				out = out*shape[d] + idx[d]
			}
		}
		rows[out] = append(rows[out], x[off])
		for d := len(idx) - 1; d >= 0; d-- {
			idx[d]++
			if idx[d] < shape[d] {
				break
			}
			idx[d] = 0
		}
	}
	return rows
}

// TestPlanReduceSimulate checks the layouts (dim dropping, merging,
// sorting, the cols permutation, splits) against the naive reduction on
// random strided views.
func TestPlanReduceSimulate(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for iter := 0; iter < 400; iter++ {
		rank := 1 + r.IntN(4)
		shape := make([]int64, rank)
		for i := range shape {
			shape[i] = []int64{1, 2, 3, 5, 8, 16, 33, 64}[r.IntN(8)]
		}
		// Strides: a random memory order of the dims, some padded.
		perm := r.Perm(rank)
		strides := make([]int64, rank)
		acc := int64(1 + r.IntN(2))
		for i := rank - 1; i >= 0; i-- {
			d := perm[i]
			strides[d] = acc
			acc *= shape[d] + int64(r.IntN(2))
		}
		red := make([]bool, rank)
		for i := range red {
			red[i] = r.IntN(2) == 0
		}
		sp := span(shape, strides)
		x := make([]float64, sp)
		for i := range x {
			x[i] = float64(r.IntN(7) - 3) // small integers: exact sums, many ties
		}
		rows := naiveReduce(shape, strides, red, x)
		for _, ordered := range []bool{false, true} {
			sms := 1 + r.IntN(4)
			esize := []int64{1, 2, 4, 8}[r.IntN(4)]
			p, err := planReduce(shape, strides, red, esize, ordered, sms)
			if err != nil {
				t.Fatal(err)
			}
			sum, amax, aidx := simReduce(p, x)
			name := fmt.Sprintf("shape %v strides %v reduced %v ordered %v: plan %+v", shape, strides, red, ordered, p)
			if int64(len(rows)) != p.O {
				t.Fatalf("%s: %d outputs, want %d", name, p.O, len(rows))
			}
			for o, row := range rows {
				var s float64
				best, bi := math.Inf(-1), int64(-1)
				for i, v := range row {
					s += v
					if v > best {
						best, bi = v, int64(i)
					}
				}
				if sum[o] != s {
					t.Fatalf("%s: output %d sum %v, want %v", name, o, sum[o], s)
				}
				if ordered && (amax[o] != best || aidx[o] != bi) {
					t.Fatalf("%s: output %d argmax %v@%d, want %v@%d", name, o, amax[o], aidx[o], best, bi)
				}
			}
		}
	}
}

func TestRowPlan(t *testing.T) {
	for _, c := range []struct {
		name     string
		shape    []int64
		strides  []int64
		dim      int
		trailing bool
		rows, n  int64
		sd, sdo  int64
		others   int
		bad      bool
	}{
		{"softmax last", []int64{4, 16, 512, 512}, nil, 3, false, 4 * 16 * 512, 512, 1, 1, 1, false},
		{"softmax middle", []int64{32, 64, 16}, nil, 1, false, 32 * 16, 64, 16, 16, 2, false},
		{"transposed", []int64{128, 256}, []int64{1, 128}, 1, false, 128, 256, 128, 1, 1, false},
		{"norm trailing", []int64{4, 512, 1024}, nil, 2, true, 2048, 1024, 1, 1, 1, false},
		{"norm two dims", []int64{4, 32, 32}, nil, 1, true, 4, 1024, 1, 1, 1, false},
		{"norm dims that do not merge", []int64{4, 32, 32}, []int64{1024, 1, 32}, 1, true, 0, 0, 0, 0, 0, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := stridesOr(c.shape, c.strides)
			p, err := rdNewRowPlan(c.shape, st, c.dim, c.trailing)
			if !parsedOK(t, p, err, c.bad) {
				return
			}
			if p.rows != c.rows || p.n != c.n || p.sd != c.sd || p.sdo != c.sdo || len(p.other) != c.others {
				t.Errorf("plan %+v; want rows %d n %d sd %d sdo %d, %d other dims", p, c.rows, c.n, c.sd, c.sdo, c.others)
			}
			if got := len(p.raw().Data); got != 30*8 {
				t.Errorf("RowPlan is %d bytes, want 240", got)
			}
			// Every element of the view maps to one input offset and one
			// contiguous output offset.
			seen := make([]bool, p.rows*p.n)
			for r := int64(0); r < p.rows; r++ {
				_, ob := p.offsets(r)
				for e := int64(0); e < p.n; e++ {
					o := ob + e*p.sdo
					if o < 0 || o >= p.rows*p.n || seen[o] {
						t.Fatalf("output offset %d repeated or out of range", o)
					}
					seen[o] = true
				}
			}
		})
	}
}

func TestRowsConfig(t *testing.T) {
	for _, c := range []struct {
		n, v        int64
		ch, tpr     int64
		ok, warpish bool
	}{
		{512, 8, 2, 32, true, true},
		{1024, 8, 4, 32, true, true},
		{1024, 1, 32, 32, true, true},
		{16, 8, 1, 2, true, true},
		{1000, 4, 8, 32, true, true},
		{4096, 8, 2, 256, true, false},
		{32768, 8, 4, 1024, true, false},
		{32768, 1, 32, 1024, true, false},
		{40000, 4, 0, 0, false, false},
	} {
		ch, tpr, ok := rdRowsConfig(c.n, c.v)
		if ok != c.ok || (ok && (ch != c.ch || tpr != c.tpr)) {
			t.Errorf("rdRowsConfig(%d, %d) = %d, %d, %v; want %d, %d, %v", c.n, c.v, ch, tpr, ok, c.ch, c.tpr, c.ok)
		}
		if ok && ch*c.v*tpr < c.n {
			t.Errorf("rdRowsConfig(%d, %d): %d threads of %d do not cover the row", c.n, c.v, tpr, ch*c.v)
		}
	}
}
