package tier3

import (
	"slices"
	"testing"
)

func TestParseLayerNorm(t *testing.T) {
	for _, c := range []struct {
		name       string
		op         string
		ins        []rdIn
		axis       int
		n          int64
		eps        float64
		w          string
		hasW, hasB bool
		stat       []int64
		bad        bool
	}{
		{"traced", "aten::native_layer_norm", []rdIn{rdT("c10::Half", 4, 512, 1024), rdL("[1024]"), rdT("c10::Half", 1024), rdT("c10::Half", 1024), rdS("1e-05")},
			2, 1024, 1e-5, "f16", true, true, []int64{4, 512, 1}, false},
		{"two dims", "aten::native_layer_norm", []rdIn{rdT("float", 16, 10, 10), rdL("[10, 10]"), rdT("float", 10, 10), rdNone(), rdS("1e-06")},
			1, 100, 1e-6, "f32", true, false, []int64{16, 1, 1}, false},
		{"no affine", "aten::native_layer_norm", []rdIn{rdT("c10::BFloat16", 8, 64), rdL("[64]"), rdNone(), rdNone(), rdS("1e-05")},
			1, 64, 1e-5, "", false, false, []int64{8, 1}, false},
		{"layer_norm", "aten::layer_norm", []rdIn{rdT("float", 8, 64), rdL("[64]"), rdT("float", 64), rdT("float", 64), rdS("1e-05"), rdS("True")},
			1, 64, 1e-5, "f32", true, true, []int64{8, 1}, false},
		{"shape mismatch", "aten::native_layer_norm", []rdIn{rdT("float", 8, 64), rdL("[32]"), rdNone(), rdNone(), rdS("1e-05")}, 0, 0, 0, "", false, false, nil, true},
		{"weight and bias dtypes differ", "aten::native_layer_norm", []rdIn{rdT("float", 8, 64), rdL("[64]"), rdT("float", 64), rdT("c10::Half", 64), rdS("1e-05")}, 0, 0, 0, "", false, false, nil, true},
		{"strided weight", "aten::native_layer_norm", []rdIn{rdT("float", 8, 64), rdL("[64]"), rdTS("float", []int64{64}, []int64{2}), rdNone(), rdS("1e-05")}, 0, 0, 0, "", false, false, nil, true},
		{"int input", "aten::native_layer_norm", []rdIn{rdT("long int", 8, 64), rdL("[64]"), rdNone(), rdNone(), rdS("1e-05")}, 0, 0, 0, "", false, false, nil, true},
	} {
		runParseCase(t, c.name, c.op, c.ins, c.bad, parseLayerNorm, func(t *testing.T, s *lnSpec) {
			if s.axis != c.axis || s.n != c.n || s.eps != c.eps || s.w != c.w || s.hasW != c.hasW || s.hasB != c.hasB {
				t.Errorf("got %+v", s)
			}
			if got := s.statShape(c.ins[0].shape); !slices.Equal(got, c.stat) {
				t.Errorf("mean/rstd shape %v, want %v", got, c.stat)
			}
		})
	}
}

func TestPlanLayerNorm(t *testing.T) {
	const sms = planSMs
	for _, c := range []struct {
		name          string
		shape         []int64
		strides       []int64
		axis          int
		esize         int64
		kernel        string
		V, CH, TPR    int64
		block0, grid0 uint32
		bad           bool
	}{
		{"traced f16 1024: a warp per row", []int64{4, 512, 1024}, nil, 2, 2, "ln_rows", 8, 4, 32, 256, 256, false},
		{"one row", []int64{1, 1, 1024}, nil, 2, 2, "ln_rows", 8, 4, 32, 256, 1, false},
		{"f32 4096: a block per row", []int64{64, 4096}, nil, 1, 4, "ln_rows", 4, 4, 256, 256, 64, false},
		{"bf16 768", []int64{8, 768}, nil, 1, 2, "ln_rows", 8, 3, 32, 256, 1, false},
		{"long rows", []int64{4, 40000}, nil, 1, 4, "ln_long", 1, 1, 32, 1024, 4, false},
		{"strided last dim", []int64{32, 64}, []int64{128, 2}, 1, 4, "ln_rows", 1, 2, 32, 256, 4, false},
		{"normalized dims not one run", []int64{4, 32, 32}, []int64{1024, 1, 32}, 1, 4, "", 0, 0, 0, 0, 0, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := stridesOr(c.shape, c.strides)
			p, err := planLayerNorm(c.shape, st, c.axis, c.esize, sms)
			if !parsedOK(t, p, err, c.bad) {
				return
			}
			if p.kernel != c.kernel || p.V != c.V || p.CH != c.CH || p.TPR != c.TPR || p.block[0] != c.block0 || p.grid[0] != c.grid0 {
				t.Errorf("%s V %d CH %d TPR %d block %v grid %v; want %s V %d CH %d TPR %d block %d grid %d",
					p.kernel, p.V, p.CH, p.TPR, p.block, p.grid, c.kernel, c.V, c.CH, c.TPR, c.block0, c.grid0)
			}
		})
	}
}
