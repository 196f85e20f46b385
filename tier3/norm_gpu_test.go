package tier3

import (
	"math"
	"testing"

	"github.com/kreplay/kreplay/internal/cuda"
)

// layerNormGPUCases cover the traced shapes (warp per row of 1024), block
// rows, long rows without weight and bias, mixed weight dtype, permuted
// leading dims, padded rows and a strided last dim.
var layerNormGPUCases = []rdCase{
	{"f16 traced", "aten::native_layer_norm", []rdIn{rdT("c10::Half", 4, 512, 1024), rdL("[1024]"), rdT("c10::Half", 1024), rdT("c10::Half", 1024), rdS("1e-05")}},
	{"f16 one row", "aten::native_layer_norm", []rdIn{rdT("c10::Half", 1, 1, 1024), rdL("[1024]"), rdT("c10::Half", 1024), rdT("c10::Half", 1024), rdS("1e-05")}},
	{"f32 block rows", "aten::native_layer_norm", []rdIn{rdT("float", 64, 4096), rdL("[4096]"), rdT("float", 4096), rdT("float", 4096), rdS("1e-05")}},
	{"bf16 with f32 weight", "aten::native_layer_norm", []rdIn{rdT("c10::BFloat16", 8, 768), rdL("[768]"), rdT("float", 768), rdT("float", 768), rdS("1e-06")}},
	{"f32 long rows no affine", "aten::native_layer_norm", []rdIn{rdT("float", 4, 40000), rdL("[40000]"), rdNone(), rdNone(), rdS("1e-05")}},
	{"f16 permuted leading dims", "aten::native_layer_norm", []rdIn{rdTS("c10::Half", []int64{64, 8, 1024}, []int64{1024, 64 * 1024, 1}), rdL("[1024]"), rdT("c10::Half", 1024), rdT("c10::Half", 1024), rdS("1e-05")}},
	{"f32 padded rows two dims", "aten::native_layer_norm", []rdIn{rdTS("float", []int64{16, 10, 10}, []int64{128, 10, 1}), rdL("[10, 10]"), rdT("float", 10, 10), rdT("float", 10, 10), rdS("1e-05")}},
	{"f32 strided last dim", "aten::layer_norm", []rdIn{rdTS("float", []int64{32, 64}, []int64{128, 2}), rdL("[64]"), rdT("float", 64), rdNone(), rdS("1e-05"), rdS("True")}},
	{"f32 rows of 64 in lane groups", "aten::native_layer_norm", []rdIn{rdT("float", 1000, 64), rdL("[64]"), rdT("float", 64), rdT("float", 64), rdS("1e-05")}},
}

func TestLayerNormGPU(t *testing.T) {
	runGPUCases(t, layerNormGPUCases, parseLayerNorm, 3000, 7, func(t *testing.T, c rdCase, spec *lnSpec, inst *Instance, s *cuda.Stream) {
		y, mean, rstd := inst.Outputs[0], inst.Outputs[1], inst.Outputs[2]
		if y.DType != spec.in || mean.DType != "f32" || rstd.DType != "f32" {
			t.Fatalf("outputs %s %s %s", y.DType, mean.DType, rstd.DType)
		}
		checkLayerNorm(t, c.name, spec, inst, s)
	})
}

// checkLayerNorm checks a layer norm's outputs y, mean and rstd against
// refLayerNorm of its input, weight and bias.
func checkLayerNorm(t *testing.T, name string, spec *lnSpec, inst *Instance, s *cuda.Stream) {
	t.Helper()
	x := download(t, inst.Inputs[0], s)
	var w, b []float64
	next := 1
	if spec.hasW {
		w = download(t, inst.Inputs[next], s)
		next++
	}
	if spec.hasB {
		b = download(t, inst.Inputs[next], s)
	}
	y, mean, rstd := inst.Outputs[0], inst.Outputs[1], inst.Outputs[2]
	wy, wm, wr := refLayerNorm(x, spec.n, w, b, spec.eps)
	checkClose(t, name+" y", download(t, y, s), wy, y.DType)
	checkClose(t, name+" mean", download(t, mean, s), wm, "f32")
	checkClose(t, name+" rstd", download(t, rstd, s), wr, "f32")
}

// refLayerNorm is layer norm over rows of n elements in float64, with the
// biased variance; w and b may be nil.
func refLayerNorm(x []float64, n int64, w, b []float64, eps float64) (y, mean, rstd []float64) {
	rows := int64(len(x)) / n
	y, mean, rstd = make([]float64, len(x)), make([]float64, rows), make([]float64, rows)
	for r := int64(0); r < rows; r++ {
		row := x[r*n : (r+1)*n]
		var s, q float64
		for _, v := range row {
			s += v
		}
		mu := s / float64(n)
		for _, v := range row {
			q += (v - mu) * (v - mu)
		}
		rs := 1 / math.Sqrt(q/float64(n)+eps)
		mean[r], rstd[r] = mu, rs
		for e, v := range row {
			o := (v - mu) * rs
			if w != nil {
				o *= w[e]
			}
			if b != nil {
				o += b[e]
			}
			y[r*n+int64(e)] = o
		}
	}
	return y, mean, rstd
}
