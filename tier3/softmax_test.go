package tier3

import (
	"testing"
)

func TestParseSoftmax(t *testing.T) {
	for _, c := range []struct {
		name    string
		op      string
		ins     []rdIn
		dim     int
		log     bool
		out     string
		bad     bool
		wantErr string
	}{
		{"traced", "aten::_softmax", []rdIn{rdT("c10::Half", 4, 16, 512, 512), rdS("-1"), rdS("False")}, 3, false, "f16", false, ""},
		{"half_to_float", "aten::_softmax", []rdIn{rdT("c10::Half", 8, 64), rdS("1"), rdS("True")}, 1, false, "f32", false, ""},
		{"half_to_float on f32", "aten::_softmax", []rdIn{rdT("float", 8, 64), rdS("1"), rdS("True")}, 0, false, "", true, ""},
		{"softmax dtype", "aten::softmax", []rdIn{rdT("c10::BFloat16", 8, 64), rdS("-1"), rdS("6")}, 1, false, "f32", false, ""},
		{"softmax no dtype", "aten::softmax", []rdIn{rdT("float", 8, 64), rdS("0"), rdNone()}, 0, false, "f32", false, ""},
		{"log", "aten::_log_softmax", []rdIn{rdT("float", 8, 64), rdS("-1"), rdS("False")}, 1, true, "f32", false, ""},
		{"log_softmax", "aten::log_softmax", []rdIn{rdT("float", 8, 64), rdS("-1"), rdNone()}, 1, true, "f32", false, ""},
		{"int input", "aten::_softmax", []rdIn{rdT("long int", 8), rdS("0"), rdS("False")}, 0, false, "", true, ""},
		{"no dim", "aten::_softmax", []rdIn{rdT("float", 8), rdNone(), rdS("False")}, 0, false, "", true, ""},
	} {
		runParseCase(t, c.name, c.op, c.ins, c.bad, parseSoftmax, func(t *testing.T, s *smSpec) {
			if s.dim != c.dim || s.log != c.log || s.out != c.out {
				t.Errorf("got %+v; want dim %d log %v out %s", s, c.dim, c.log, c.out)
			}
		})
	}
}

func TestPlanSoftmax(t *testing.T) {
	for _, c := range []struct {
		planLayout
		esize         int64
		kernel        string
		V, CH, TPR    int64
		block0, grid0 uint32
	}{
		{planLayout{"traced f16 rows of 512: a warp per row", []int64{4, 16, 512, 512}, nil, 3}, 2, "sm_rows", 8, 2, 32, 256, 4096},
		{planLayout{"f32 rows of 1000", []int64{64, 1000}, nil, 1}, 4, "sm_rows", 4, 8, 32, 256, 8},
		{planLayout{"short rows: groups of lanes", []int64{1000, 16}, nil, 1}, 2, "sm_rows", 8, 1, 2, 256, 8},
		{planLayout{"f16 rows of 4096: a block per row", []int64{8, 4096}, nil, 1}, 2, "sm_rows", 8, 2, 256, 256, 8},
		{planLayout{"unaligned rows", []int64{64, 333}, nil, 1}, 4, "sm_rows", 1, 11, 32, 256, 8},
		{planLayout{"long rows", []int64{4, 40000}, nil, 1}, 4, "sm_long", 1, 1, 32, 1024, 4},
		{planLayout{"middle dim", []int64{32, 64, 16}, nil, 1}, 2, "sm_cols", 1, 1, 32, 256, 2},
		{planLayout{"transposed", []int64{128, 256}, []int64{1, 128}, 1}, 2, "sm_cols", 1, 1, 32, 256, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := stridesOr(c.shape, c.strides)
			p, err := planSoftmax(c.shape, st, c.dim, c.esize, planSMs)
			if err != nil {
				t.Fatal(err)
			}
			if p.kernel != c.kernel || p.V != c.V || p.CH != c.CH || p.TPR != c.TPR || p.block[0] != c.block0 || p.grid[0] != c.grid0 {
				t.Errorf("%s V %d CH %d TPR %d block %v grid %v; want %s V %d CH %d TPR %d block %d grid %d",
					p.kernel, p.V, p.CH, p.TPR, p.block, p.grid, c.kernel, c.V, c.CH, c.TPR, c.block0, c.grid0)
			}
			if p.kernel == "sm_rows" && p.CH*p.V*p.TPR < p.rp.n {
				t.Errorf("threads do not cover a row of %d", p.rp.n)
			}
		})
	}
}
