package tier3

import "testing"

func TestParseScan(t *testing.T) {
	for _, c := range []struct {
		name string
		op   string
		ins  []rdIn
		dim  int
		prod bool
		out  string
		bad  bool
	}{
		{"bool traced", "aten::cumsum", []rdIn{rdT("bool", 4, 512), rdS("-1"), rdNone()}, 1, false, "i64", false},
		{"i64 traced", "aten::cumsum", []rdIn{rdT("long int", 4, 512), rdS("-1"), rdNone()}, 1, false, "i64", false},
		{"i32 promotes", "aten::cumsum", []rdIn{rdT("int", 4, 512), rdS("0"), rdNone()}, 0, false, "i64", false},
		{"f16 stays", "aten::cumsum", []rdIn{rdT("c10::Half", 4, 512), rdS("1"), rdNone()}, 1, false, "f16", false},
		{"dtype", "aten::cumsum", []rdIn{rdT("c10::Half", 4, 512), rdS("1"), rdS("6")}, 1, false, "f32", false},
		{"cumprod", "aten::cumprod", []rdIn{rdT("float", 4, 512), rdS("-1"), rdNone()}, 1, true, "f32", false},
		{"bad dim", "aten::cumsum", []rdIn{rdT("float", 4, 512), rdS("2"), rdNone()}, 0, false, "", true},
		{"complex", "aten::cumsum", []rdIn{rdT("c10::complex<float>", 4), rdS("0"), rdNone()}, 0, false, "", true},
	} {
		runParseCase(t, c.name, c.op, c.ins, c.bad, parseScan, func(t *testing.T, s *scSpec) {
			if s.dim != c.dim || s.prod != c.prod || s.out != c.out {
				t.Errorf("got %+v; want dim %d prod %v out %s", s, c.dim, c.prod, c.out)
			}
		})
	}
}

// planLayout is a plan test's input: a tensor's shape, its strides (nil:
// contiguous) and the dimension the op works along.
type planLayout struct {
	name    string
	shape   []int64
	strides []int64
	dim     int
}

// planSMs is the SM count the plan tests plan for (an H100's or H200's).
const planSMs = 132

func TestPlanScan(t *testing.T) {
	for _, c := range []struct {
		planLayout
		kernel        string
		V, TPR        int64
		block0, grid0 uint32
	}{
		{planLayout{"traced [4,512]", []int64{4, 512}, nil, 1}, "sc_rows", 4, 32, 256, 1},
		{planLayout{"short rows", []int64{1000, 20}, nil, 1}, "sc_rows", 1, 32, 256, 125},
		{planLayout{"tiny rows", []int64{1000, 3}, nil, 1}, "sc_rows", 1, 4, 256, 16},
		{planLayout{"long rows: a block", []int64{16, 10000}, nil, 1}, "sc_rows", 4, 512, 512, 16},
		{planLayout{"outer dim", []int64{100, 64}, nil, 0}, "sc_cols", 1, 32, 256, 1},
		{planLayout{"transposed", []int64{64, 128}, []int64{1, 64}, 1}, "sc_cols", 1, 32, 256, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := stridesOr(c.shape, c.strides)
			p, err := planScan(c.shape, st, c.dim, planSMs)
			if err != nil {
				t.Fatal(err)
			}
			if p.kernel != c.kernel || p.V != c.V || p.TPR != c.TPR || p.block[0] != c.block0 || p.grid[0] != c.grid0 {
				t.Errorf("%s V %d TPR %d block %v grid %v; want %s V %d TPR %d block %d grid %d",
					p.kernel, p.V, p.TPR, p.block, p.grid, c.kernel, c.V, c.TPR, c.block0, c.grid0)
			}
		})
	}
}
