package tier3

import (
	"testing"

	"github.com/kreplay/kreplay/internal/cuda"
)

// scanGPUCases cover the traced bool and int64 cumsums (int64 outputs),
// block tiles, f16 rows, an outer dim, a transposed int32 view, cumprod,
// rows read with a stride (scalar loads) and rows of 1024 (vector loads,
// the whole row a warp's tiles at once).
var scanGPUCases = []rdCase{
	{"cumsum bool traced", "aten::cumsum", []rdIn{rdT("bool", 4, 512), rdS("-1"), rdNone()}},
	{"cumsum i64 traced", "aten::cumsum", []rdIn{rdT("long int", 4, 512), rdS("-1"), rdNone()}},
	{"cumsum f32 block tiles", "aten::cumsum", []rdIn{rdT("float", 16, 10000), rdS("-1"), rdNone()}},
	{"cumsum f16 rows", "aten::cumsum", []rdIn{rdT("c10::Half", 64, 300), rdS("1"), rdNone()}},
	{"cumsum f32 outer dim", "aten::cumsum", []rdIn{rdT("float", 100, 64), rdS("0"), rdNone()}},
	{"cumsum i32 transposed", "aten::cumsum", []rdIn{rdTS("int", []int64{64, 128}, []int64{1, 64}), rdS("1"), rdNone()}},
	{"cumsum bool into i32", "aten::cumsum", []rdIn{rdT("bool", 8, 77), rdS("-1"), rdS("3")}},
	{"cumprod f32", "aten::cumprod", []rdIn{rdT("float", 32, 20), rdS("-1"), rdNone()}},
	{"cumsum i64 rows of 3 in lane groups", "aten::cumsum", []rdIn{rdT("long int", 1000, 3), rdS("-1"), rdNone()}},
	{"cumsum f32 strided rows", "aten::cumsum", []rdIn{rdTS("float", []int64{64, 300}, []int64{600, 2}), rdS("-1"), rdNone()}},
	{"cumsum f32 rows of 1024", "aten::cumsum", []rdIn{rdT("float", 300, 1024), rdS("-1"), rdNone()}},
}

func TestScanGPU(t *testing.T) {
	runGPUCases(t, scanGPUCases, parseScan, 4000, 13, func(t *testing.T, c rdCase, spec *scSpec, inst *Instance, s *cuda.Stream) {
		in, out := inst.Inputs[0], inst.Outputs[0]
		if out.DType != spec.out {
			t.Fatalf("output dtype %s, want %s", out.DType, spec.out)
		}
		want := refScan(download(t, in, s), in.Shape, spec.dim, spec.prod)
		got := download(t, out, s)
		if rdIsFloat(out.DType) {
			checkClose(t, c.name, got, want, out.DType)
			return
		}
		for j := range want {
			if got[j] != want[j] {
				t.Fatalf("element %d = %v, want %v", j, got[j], want[j])
			}
		}
	})
}

// refScan is the inclusive sum (or product) along dim in float64 over a
// row-major tensor.
func refScan(x []float64, shape []int64, dim int, prod bool) []float64 {
	return alongDim(x, shape, dim, func(row []float64) {
		acc := 0.0
		if prod {
			acc = 1
		}
		for e, v := range row {
			if prod {
				acc *= v
			} else {
				acc += v
			}
			row[e] = acc
		}
	})
}

// alongDim applies f to every row along dim of a row-major tensor, in
// place on a copy of x's values that it returns.
func alongDim(x []float64, shape []int64, dim int, f func(row []float64)) []float64 {
	inner := int64(1)
	for _, d := range shape[dim+1:] {
		inner *= d
	}
	n := shape[dim]
	out := make([]float64, len(x))
	row := make([]float64, n)
	for base := int64(0); base < int64(len(x)); base += n * inner {
		for j := int64(0); j < inner; j++ {
			for e := range row {
				row[e] = x[base+int64(e)*inner+j]
			}
			f(row)
			for e, v := range row {
				out[base+int64(e)*inner+j] = v
			}
		}
	}
	return out
}
